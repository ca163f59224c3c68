"""One refresh per recipe at a time: an exclusive, non-blocking flock on a file in its folder."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from catalogue.models.errors import CatalogueError

LOCK_NAME = ".refresh.lock"


@contextmanager
def refresh_lock(folder: Path) -> Iterator[None]:
    """Hold the recipe's lock, or fail at once naming the holder's pid."""
    path = folder / LOCK_NAME
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise CatalogueError(path, f"a refresh of this recipe is already running (pid {holder})") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    try:
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()
