"""Helpers for site tests: build with MkDocs into a folder, serve it on loopback."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def mkdocs_build(out: Path, roots: list[Path] | None = None) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the repository's config into `out`."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if roots:
        env["CATALOGUE_RECIPE_ROOTS"] = os.pathsep.join(str(r) for r in roots)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )


class Served:
    """A static folder served on 127.0.0.1 in a background thread."""

    def __init__(self, folder: Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002
        pass
