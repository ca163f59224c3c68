"""Which incomplete runs this machine left: `refresh --resume` finishes only those. When the runner writes a run
file that stopped early it keeps, outside every repository, the SHA-256 of the bytes it wrote, keyed by the run
file's resolved path; a complete run file drops the mark. A stranger's run file (committed, pulled, copied in)
has no mark here, and one edited since the runner wrote it no longer matches its mark, so neither is resumed:
its finished levels would otherwise be kept as measured on this machine."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from catalogue.models.atomic import write_text

MARKS = "incomplete-runs"
"""The folder of marks under the catalogue's cache (CATALOGUE_CACHE, else ~/.cache/catalogue)."""


def marks_dir() -> Path:
    """Where the marks are kept: the owner's cache, never a recipe folder."""
    return Path(os.environ.get("CATALOGUE_CACHE", Path.home() / ".cache" / "catalogue")) / MARKS


def _mark(run_file: Path) -> Path:
    key = hashlib.sha256(str(run_file.resolve()).encode()).hexdigest()
    return marks_dir() / f"{key}.sha256"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def remember(run_file: Path, text: str, complete: bool) -> None:
    """After the runner wrote `text` to `run_file`: mark it as left here if it stopped early, else drop the mark."""
    mark = _mark(run_file)
    if complete:
        mark.unlink(missing_ok=True)
        return
    mark.parent.mkdir(parents=True, exist_ok=True)
    write_text(mark, _digest(text.encode()) + "\n")


def why_not_here(run_file: Path) -> str | None:
    """None when this machine's runner left `run_file` incomplete and nothing changed it since; else why not."""
    try:
        kept = _mark(run_file).read_text(encoding="utf-8").strip()
    except OSError:
        return "this machine's runner did not leave it (no local record of it: committed or copied in)"
    try:
        now = _digest(run_file.read_bytes())
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if now != kept:
        return "changed since this machine's runner wrote it"
    return None
