"""`catalogue export OUT`: write the generated Markdown to a folder, without MkDocs."""

from __future__ import annotations

import sys
from pathlib import Path

from catalogue.atomic import replace_dir
from catalogue.site.build import generate


def run_export(roots: list[Path], ids: list[str], out: Path) -> int:
    """Write every page (all recipes; `ids` are not filtered yet) atomically into `out`."""
    build = generate(roots)
    for line in build.refused:
        print(f"refused: {line}", file=sys.stderr)
    pages = {path: page.markdown() for path, page in build.pages.items() if not ids or _wanted(path, ids)}
    replace_dir(out, pages)
    print(f"wrote {len(pages)} page(s) to {out} (flags checked against {build.checked_against})")
    return 1 if build.refused else 0


def _wanted(path: str, ids: list[str]) -> bool:
    return not path.startswith("recipes/") or Path(path).stem in ids
