"""Helpers for the browser tests: Debian chromium's path and flags, a built site served on loopback, a page
opener that fails the test on a console error or an off-site request."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from tests.site_support import Served, mkdocs_build

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _built_and_served(out: Path, roots: list[Path] | None = None, links_checked: bool = False) -> Iterator[str]:
    """Build the site into `out` (the repo's recipes, or `roots`), serve it on 127.0.0.1, yield its URL."""
    from tests.site_support import broken_links

    result = mkdocs_build(out, roots=roots)
    assert result.returncode == 0, result.stderr
    if links_checked:
        assert broken_links(out) == []
    served = Served(out)
    yield served.url
    served.close()


@contextlib.contextmanager
def _opener(browser, site):
    contexts, problems = [], []

    def go(path: str, scheme: str = "light", width: int = 1280):
        context = browser.new_context(color_scheme=scheme, viewport={"width": width, "height": 900})
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on(
            "request",
            lambda r: (
                problems.append(f"off-site request: {r.url}")
                if not r.url.startswith(site) and not r.url.startswith("data:")
                else None
            ),
        )
        page.goto(f"{site}/{path}")
        page.wait_for_load_state("networkidle")
        return page

    yield go
    for context in contexts:
        context.close()
    assert problems == []
