"""`catalogue export OUT`: write the generated Markdown, the JSON API (api/v1/) and each published recipe as a
sparkrun recipe (sparkrun/<id>.yaml) to a folder, without MkDocs."""

from __future__ import annotations

import sys
from pathlib import Path

from catalogue.models.atomic import replace_dir
from catalogue.publish.sparkrun_export import SPARKRUN_DIR, sparkrun_files
from catalogue.site.api import API_DIR, api_documents
from catalogue.site.build import generate


def run_export(roots: list[Path], ids: list[str], out: Path) -> int:
    """Write every page and API file (`ids`, when given, keep only those recipes' pages and documents)
    atomically into `out`."""
    build = generate(roots)
    for line in build.refused:
        print(f"refused: {line}", file=sys.stderr)
    pages = {path: page.markdown() for path, page in build.pages.items() if not ids or _wanted(path, ids)}
    api = {path: text for path, text in api_documents(build.recipes).items() if not ids or _wanted(path, ids)}
    sparkrun = sparkrun_files([entry for entry, _ in build.recipes])
    sparkrun = {path: text for path, text in sparkrun.items() if not ids or _wanted(path, ids)}
    replace_dir(out, {**pages, **api, **sparkrun})
    written = f"{len(pages)} page(s), {len(api)} API file(s) and {len(sparkrun)} sparkrun recipe(s)"
    print(f"wrote {written} to {out} (flags checked against {build.checked_against})")
    return 1 if build.refused else 0


def _wanted(path: str, ids: list[str]) -> bool:
    """Recipe pages and recipe documents only for `ids`; every other file always."""
    recipe_file = path.startswith(("recipes/", f"{API_DIR}/recipes/", f"{SPARKRUN_DIR}/"))
    return not recipe_file or Path(path).stem in ids
