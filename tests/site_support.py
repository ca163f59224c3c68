"""Helpers for site tests: build with MkDocs into a folder, serve it on loopback."""

from __future__ import annotations

import functools
import html
import http.server
import os
import re
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def mkdocs_build(out: Path, roots: list[Path] | None = None, **extra_env: str) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the repository's config into `out`."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", **extra_env}
    if roots:
        env["CATALOGUE_RECIPE_ROOTS"] = os.pathsep.join(str(r) for r in roots)
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],  # not -q: it mutes strict mode
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


LINK = re.compile(r'(?:href|src)="([^"]*)"')
ANCHOR = re.compile(r'\bid="([^"]+)"')


def broken_links(site: Path) -> list[str]:
    """Every same-site link or anchor in the built site that leads nowhere, as 'page -> link'."""
    ids: dict[Path, set[str]] = {}

    def anchors(page: Path) -> set[str]:
        if page not in ids:
            ids[page] = set(ANCHOR.findall(html.unescape(page.read_text(encoding="utf-8"))))
        return ids[page]

    broken = []
    for page in sorted(site.rglob("*.html")):
        for raw in LINK.findall(page.read_text(encoding="utf-8")):
            url = urllib.parse.urlsplit(html.unescape(raw))
            if url.scheme or url.netloc or raw.startswith("data:"):
                continue
            base = site if url.path.startswith("/") else page.parent  # the 404 page links from the site root
            target = page if not url.path else (base / urllib.parse.unquote(url.path.lstrip("/"))).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or (
                url.fragment and target.suffix == ".html" and url.fragment not in anchors(target)
            ):
                broken.append(f"{page.relative_to(site)} -> {raw}")
    return broken


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
    def log_message(self, format: str, *args) -> None:
        pass
