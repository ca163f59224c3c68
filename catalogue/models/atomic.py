"""Write files and folders so that readers never see half of them."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Write `text` to a temp file beside `path`, then rename it over `path`."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to a fresh temp file beside `path` (O_EXCL), then rename it over `path`: a link planted under
    `path`'s name is replaced, never written through."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_dir(target: Path, files: dict[str, str]) -> None:
    """Write `files` (relative path -> text) into a fresh folder, then swap it in for `target`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        for rel, text in files.items():
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
        old = target.with_name(f".{target.name}.old")
        if target.exists():
            os.replace(target, old)
        os.replace(staging, target)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
