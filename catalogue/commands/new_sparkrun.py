"""`catalogue new ID --from-sparkrun FILE|FOLDER`: a sparkrun recipe file becomes the draft ID, as a pasted command
does (catalogue.commands.new). A folder gives one draft per recipe file, named ID-<file name>: every *.yaml / *.yml
under it, or, in the registry's layout (`.sparkrun/registry.yaml`, as spark-arena/recipe-registry), the files under
the recipe folders it names (official-recipes/, experimental-recipes/; its benchmark profiles and tuning files are
no recipes). A file that cannot become a draft is one line naming the file and the field; the others are written.
Exit 1 when any file was refused or holds what the run policy never allows."""

from __future__ import annotations

import re
import sys
from pathlib import Path, PurePosixPath

from catalogue.commands.new import run_new
from catalogue.models.bounded import MAX_YAML_BYTES, read_bounded
from catalogue.models.errors import CatalogueError
from catalogue.models.terminal import printable
from catalogue.models.yaml_files import parse_yaml

REGISTRY_FILE = Path(".sparkrun") / "registry.yaml"
SUFFIXES = (".yaml", ".yml")


def recipe_files(folder: Path) -> list[Path]:
    """The recipe files of a folder, or of the recipe folders its registry file names, in path order. A registry
    file, a folder it names or a file under it that leads out of `folder` (`..`, an absolute path, a symlink) is
    refused in one line: the files are a stranger's checkout."""
    base = folder.resolve()
    registry = folder / REGISTRY_FILE
    roots = [folder]
    if registry.is_symlink() or registry.parent.is_symlink():
        raise CatalogueError(registry, "a symlink: refused (it may lead out of the checkout)")
    if registry.is_file():
        data = parse_yaml(read_bounded(registry, MAX_YAML_BYTES), registry)
        entries = data.get("registries", []) if isinstance(data, dict) else []
        named = [str(e["recipes"]) for e in entries if isinstance(e, dict) and isinstance(e.get("recipes"), str)]
        if not named:
            raise CatalogueError(registry, "names no recipe folder", "registries")
        roots = [_inside(base, folder, name, registry) for name in named]
    files = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_symlink():
                raise CatalogueError(path, "a symlink: refused (it may lead out of the checkout)")
            if path.suffix in SUFFIXES and path.is_file():
                files.append(path)
    return sorted(files)


def _inside(base: Path, folder: Path, name: str, registry: Path) -> Path:
    """The recipe folder `name` of the registry file, when it is a relative path that stays inside `folder`."""
    relative = PurePosixPath(name)
    target = folder / name
    shown = printable(name)
    if relative.is_absolute() or ".." in relative.parts or name.startswith("~"):
        raise CatalogueError(
            registry, f"{shown!r}: not a folder inside the checkout (no .., no absolute path)", "registries"
        )
    if target.resolve() != base.joinpath(*relative.parts) or not target.resolve().is_relative_to(base):
        raise CatalogueError(registry, f"{shown!r}: leads out of the checkout through a symlink", "registries")
    return target


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def draft_ids(prefix: str, folder: Path, files: list[Path]) -> list[str]:
    """ID-<file name> in the letters a recipe id allows; ID-<folders>-<file name> for a name two files share."""
    stems = [_slug(p.stem) for p in files]
    return [
        f"{prefix}-{stem}"
        if stems.count(stem) == 1
        else f"{prefix}-{_slug(str(p.relative_to(folder).with_suffix('')))}"
        for p, stem in zip(files, stems)
    ]


def run_new_sparkrun(roots: list[Path], recipe_id: str, source: str, snapshot: Path | None, platform: str) -> int:
    """One draft from a file; one per recipe file from a folder (refusals printed, one line each)."""
    folder = Path(source)
    if not folder.is_dir():
        return run_new(roots, recipe_id, source, snapshot, platform=platform, sparkrun=True)
    files = recipe_files(folder)
    if not files:
        raise CatalogueError(folder, "holds no sparkrun recipe file (*.yaml, *.yml)")
    written, refused, code = 0, 0, 0
    for path, draft in zip(files, draft_ids(recipe_id, folder, files)):
        try:
            code |= run_new(roots, draft, str(path), snapshot, platform=platform, sparkrun=True)
            written += 1
        except CatalogueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            refused += 1
    print(f"{folder}: {len(files)} sparkrun recipe file(s): {written} draft(s) written, {refused} refused")
    return 1 if refused or code else 0
