"""`mkdocs serve` rebuilds render only the generated pages that changed: every page carried over is byte for
byte what a full render gives, search index included, and the pages that list an edited recipe are rendered."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config

from tests.site_support import REPO

SERVE_URL = "http://127.0.0.1:8000/"
NOT_CARRIED = {"sitemap.xml", "sitemap.xml.gz"}
"""Lists only the pages a rebuild renders (see mkdocs_adapter.Preview)."""


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


@pytest.fixture
def serving(monkeypatch, tmp_path) -> Iterator[tuple[ModuleType, Path]]:
    """The site hook in `mkdocs serve` mode, in this process, over a copy of the recipes."""
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    monkeypatch.setenv("CATALOGUE_RECIPE_ROOTS", f"{root}:{REPO / 'examples'}")
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795000000")  # the API documents' generated_at
    config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(tmp_path / "unused"))
    config.plugins.on_startup(command="serve", dirty=False)
    hooks = sys.modules["site_src/hooks.py"]
    try:
        yield hooks, root
    finally:
        config.plugins.on_startup(command="build", dirty=False)
        hooks.HOOKS.preview = hooks.HOOKS.api_kept = None


def _serve_build(site: Path) -> None:
    """One rebuild as `mkdocs serve` runs it: the config read again, the site folder cleaned and written."""
    config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(site))
    config.site_url = SERVE_URL
    build(config, serve_url=SERVE_URL)


def test_a_rebuild_renders_what_changed_and_equals_a_full_render(serving, tmp_path):
    hooks, root = serving
    live, full = tmp_path / "live", tmp_path / "full"
    _serve_build(live)
    preview = hooks.HOOKS.preview
    generated = set(hooks.HOOKS.generated)
    assert set(preview.last_rendered) == generated and len(generated) > 10
    before = _files(live)

    _serve_build(live)  # nothing changed: only the pages in the nav are rendered again
    assert set(preview.last_rendered) == {"index.md", "compare/index.md"}
    assert {k: v for k, v in _files(live).items() if k not in NOT_CARRIED} == {
        k: v for k, v in before.items() if k not in NOT_CARRIED
    }

    recipe = root / "gptoss-120b" / "recipe.yaml"
    recipe.write_text(recipe.read_text().replace("(concurrency-first)", "(edited while serving)", 1))
    _serve_build(live)
    rendered = set(preview.last_rendered)
    after = _files(live)
    preview.forget()  # the reference: every page rendered by MkDocs
    _serve_build(full)
    assert set(preview.last_rendered) == generated
    reference = _files(full)

    assert after.keys() == reference.keys()
    assert [path for path in reference if path not in NOT_CARRIED and after[path] != reference[path]] == []
    changed = {path for path in reference if path.endswith(".html") and before.get(path) != reference[path]}
    assert "recipes/gptoss-120b/index.html" in changed and "index.html" in changed
    assert {_html_path(path) for path in rendered} >= changed  # every page whose HTML changed was rendered
    assert "recipes/gptoss-120b.md" in rendered and len(rendered) < len(generated) // 2
    assert "edited while serving" in after["index.html"].decode()

    search = json.loads(after["search/search_index.json"])
    pages = {doc["location"].partition("#")[0] for doc in search["docs"]}
    assert {"recipes/gptoss-120b/", "recipes/qwen35-35b-a3b-bf16/", "examples/tiny-cpu/"} <= pages


def _html_path(src: str) -> str:
    """Where MkDocs writes a page (directory URLs)."""
    stem = src.removesuffix(".md")
    return "index.html" if stem == "index" else stem.removesuffix("/index") + "/index.html"
