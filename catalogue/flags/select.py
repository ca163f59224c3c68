"""Pick what flags are checked against: the installed vLLM, or a committed snapshot."""

from __future__ import annotations

import os
from pathlib import Path

from catalogue.flags.checkers import ArgvChecker, SnapshotChecker
from catalogue.flags.snapshot import (
    IMAGE_SNAPSHOT_DIR,
    SNAPSHOT_DIR,
    image_snapshot_path,
    installed_vllm_version,
    newest_committed,
    read_snapshot,
)
from catalogue.flags.validate import Finding, check_flags
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import Entry


def upstream_checker(snapshot: Path | None = None, snapshot_dir: Path = SNAPSHOT_DIR) -> ArgvChecker:
    """The given snapshot (or $CATALOGUE_FLAGS_SNAPSHOT); else the installed vLLM; else the newest committed one."""
    if snapshot is None and os.environ.get("CATALOGUE_FLAGS_SNAPSHOT"):
        snapshot = Path(os.environ["CATALOGUE_FLAGS_SNAPSHOT"])
    if snapshot is not None:
        return SnapshotChecker(read_snapshot(snapshot), f"snapshot {Path(snapshot).name}")
    if installed_vllm_version() is not None:
        from catalogue.flags.extract import live_checker  # imports vLLM: only when it is installed

        live = live_checker()
        if live is not None:
            return live
    newest = newest_committed(snapshot_dir)
    if newest is None:
        raise CatalogueError(snapshot_dir, "no vLLM installed and no committed flag snapshot to validate against")
    return SnapshotChecker(read_snapshot(newest), f"committed snapshot {newest.name} (vLLM not installed)")


def image_checker(image: str | None, root: Path = IMAGE_SNAPSHOT_DIR) -> ArgvChecker | None:
    """A checker for the recipe's image when a snapshot of it is committed."""
    if image is None:
        return None
    path = image_snapshot_path(image, root)
    if not path.exists():
        return None
    return SnapshotChecker(read_snapshot(path), f"image snapshot {path.name}")


def validate_entries(
    entries: list[Entry], checker: ArgvChecker, image_root: Path = IMAGE_SNAPSHOT_DIR
) -> dict[str, list[Finding]]:
    """Findings per recipe id."""
    cache: dict[str | None, ArgvChecker | None] = {}
    out: dict[str, list[Finding]] = {}
    for entry in entries:
        image = entry.recipe.serving.image if entry.recipe.serving.image_flags else None
        if image not in cache:
            cache[image] = image_checker(image, image_root)
        out[entry.id] = check_flags(entry, checker, cache[image])
    return out
