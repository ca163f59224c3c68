"""`catalogue export --sparkrun ID [OUT]`: write the recipe as a sparkrun recipe file
(catalogue.publish.sparkrun_export), atomically: to OUT (a file, or a folder to put ID.yaml in; default ./ID.yaml:
sparkrun names a recipe by its file). A line per field the file does not carry over."""

from __future__ import annotations

from pathlib import Path

from catalogue.models.atomic import write_text
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import load_entry, recipe_folders
from catalogue.publish.sparkrun_export import sparkrun_recipe


def run_export_sparkrun(roots: list[Path], recipe_id: str, out: Path | None) -> int:
    """Write the sparkrun file of one recipe; nothing is written when the recipe does not load."""
    folders = recipe_folders(roots)
    if recipe_id not in folders:
        raise CatalogueError(recipe_id, f"no such recipe in {', '.join(str(r) for r in roots)}")
    entry = load_entry(folders[recipe_id])
    text, lines = sparkrun_recipe(entry)
    target = out / f"{recipe_id}.yaml" if out is not None and out.is_dir() else out or Path(f"{recipe_id}.yaml")
    write_text(target, text)
    for line in lines:
        print(f"{target}: not carried over: {line}")
    print(f"wrote {target}: sparkrun recipe v2 of {recipe_id} (check it with `sparkrun recipe validate {target}`)")
    return 0
