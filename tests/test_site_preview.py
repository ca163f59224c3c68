"""`mkdocs serve` rebuilds render only the generated pages that changed: every page carried over is byte for
byte what a full render gives, search index included, and the pages that list an edited recipe are rendered.
Each test runs twice: as `mkdocs serve` (the site folder emptied, carried pages written back) and as
`mkdocs serve --dirty` (what `nox -s serve` runs: unchanged files stay, dropped ones are deleted)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
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


@pytest.fixture(params=[False, True], ids=["serve", "serve-dirty"])
def serving(request, monkeypatch, tmp_path) -> Iterator[tuple[ModuleType, Path, bool]]:
    """The site hook in `mkdocs serve` (or `--dirty`) mode, in this process, over a copy of the recipes."""
    dirty = request.param
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    monkeypatch.setenv("CATALOGUE_RECIPE_ROOTS", f"{root}:{REPO / 'examples'}")
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795000000")  # the API documents' generated_at
    config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(tmp_path / "unused"))
    config.plugins.on_startup(command="serve", dirty=dirty)
    hooks = sys.modules["site_src/hooks.py"]
    try:
        yield hooks, root, dirty
    finally:
        config.plugins.on_startup(command="build", dirty=False)


def _serve_build(site: Path, dirty: bool) -> None:
    """One rebuild as `mkdocs serve` runs it: the config read again, the site folder cleaned (unless dirty) and
    written. The config is strict, so MkDocs' warning about dirty builds would stop it were it not replaced."""
    config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(site))
    config.site_url = SERVE_URL
    build(config, serve_url=SERVE_URL, dirty=dirty)


REFERENCE = """
import logging, sys
logging.basicConfig(level=logging.INFO)
from mkdocs.commands.build import build
from mkdocs.config import load_config
config = load_config(sys.argv[1], site_dir=sys.argv[2])
config.plugins.on_startup(command="serve", dirty=False)
config.site_url = sys.argv[3]
build(config, serve_url=sys.argv[3])
"""


def _full_render(site: Path) -> dict[str, bytes]:
    """The reference: the first build of a fresh `mkdocs serve` process (every page rendered by MkDocs, no
    state shared with the process under test, Material's search plugin included)."""
    done = subprocess.run(
        [sys.executable, "-c", REFERENCE, str(REPO / "mkdocs.yml"), str(site), SERVE_URL],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "0 carried over" in done.stderr
    return _files(site)


def _differences(after: dict[str, bytes], reference: dict[str, bytes]) -> list[str]:
    """Files missing, extra, or with other bytes than in the reference (the sitemap aside)."""
    keys = (after.keys() | reference.keys()) - NOT_CARRIED
    return sorted(path for path in keys if after.get(path) != reference.get(path))


def test_a_rebuild_renders_what_changed_and_equals_a_full_render(serving, tmp_path):
    hooks, root, dirty = serving
    live, full = tmp_path / "live", tmp_path / "full"
    _serve_build(live, dirty)
    preview = hooks.HOOKS.preview
    generated = set(hooks.HOOKS.generated)
    assert set(preview.last_rendered) == generated and len(generated) > 10
    before = _files(live)

    page = live / "recipes" / "gptoss-120b" / "index.html"
    written_at = page.stat().st_mtime_ns
    docs_page = live / "methodology" / "workloads" / "index.html"  # a page of docs_dir, titled in the nav
    docs_written_at = docs_page.stat().st_mtime_ns
    _serve_build(live, dirty)
    # nothing changed: the pages in the nav, and the one methodology.md links to, are rendered again
    assert set(preview.last_rendered) == {"index.md", "compare/index.md", "examples/tiny-cpu.md"}
    assert _differences(_files(live), before) == []
    assert (page.stat().st_mtime_ns == written_at) is dirty  # --dirty leaves it in place; serve writes it back

    recipe = root / "gptoss-120b" / "recipe.yaml"
    recipe.write_text(recipe.read_text().replace("(concurrency-first)", "(edited while serving)", 1))
    _serve_build(live, dirty)
    rendered = set(preview.last_rendered)
    after = _files(live)
    reference = _full_render(full)

    assert _differences(after, reference) == []
    changed = {path for path in reference if path.endswith(".html") and before.get(path) != reference[path]}
    assert "recipes/gptoss-120b/index.html" in changed and "index.html" in changed
    assert {_html_path(path) for path in rendered} >= changed  # every page whose HTML changed was rendered
    assert "recipes/gptoss-120b.md" in rendered and len(rendered) < len(generated) // 2
    # the same generated files as before: --dirty leaves the docs_dir page whose links and title did not change
    assert (docs_page.stat().st_mtime_ns == docs_written_at) is dirty
    assert "edited while serving" in after["index.html"].decode()

    search = json.loads(after["search/search_index.json"])
    pages = {doc["location"].partition("#")[0] for doc in search["docs"]}
    assert {"recipes/gptoss-120b/", "recipes/qwen35-35b-a3b-bf16/", "examples/tiny-cpu/"} <= pages


def _html_path(src: str) -> str:
    """Where MkDocs writes a page (directory URLs)."""
    stem = src.removesuffix(".md")
    return "index.html" if stem == "index" else stem.removesuffix("/index") + "/index.html"


def test_recipes_added_removed_or_unpublished_leave_no_stale_file(serving, tmp_path):
    """A rebuild after a recipe is unpublished (its page moves to examples/, its API document goes), one is
    added and one removed holds exactly the files of a full render: a dirty rebuild deletes what it no longer
    makes, and renders only the pages that changed."""
    hooks, root, dirty = serving
    live = tmp_path / "live"
    _serve_build(live, dirty)
    assert "api/v1/recipes/llama31-8b-fp8.json" in _files(live)

    recipe = root / "llama31-8b-fp8" / "recipe.yaml"
    recipe.write_text(recipe.read_text().replace("\npublish: true\n", "\npublish: false\n"))
    _serve_build(live, dirty)
    after = _files(live)
    assert "api/v1/recipes/llama31-8b-fp8.json" not in after and "recipes/llama31-8b-fp8/index.html" not in after
    rendered = set(hooks.HOOKS.preview.last_rendered)
    assert "examples/llama31-8b-fp8.md" in rendered and len(rendered) < len(hooks.HOOKS.generated) // 2
    assert _differences(after, _full_render(tmp_path / "full-1")) == []

    shutil.copytree(root / "qwen3-8b-fp8", root / "qwen3-8b-fp8-copy")
    shutil.rmtree(root / "mistral-nemo-12b-fp8")
    docs_page = live / "methodology" / "workloads" / "index.html"
    docs_written_at = docs_page.stat().st_mtime_ns
    _serve_build(live, dirty)
    assert docs_page.stat().st_mtime_ns != docs_written_at  # other pages to link to: docs_dir is rendered again
    after = _files(live)
    assert "recipes/qwen3-8b-fp8-copy/index.html" in after
    assert "recipes/qwen3-8b-fp8-copy.md" in set(hooks.HOOKS.preview.last_rendered)
    assert len(hooks.HOOKS.preview.last_rendered) < len(hooks.HOOKS.generated) // 2
    assert not [path for path in after if "mistral-nemo-12b-fp8" in path]
    assert _differences(after, _full_render(tmp_path / "full-2")) == []


def test_a_template_edit_counts_as_a_code_change(tmp_path):
    """Under serve, an edit to a page template reloads the catalogue's code, so every page is rendered again."""
    spec = importlib.util.spec_from_file_location("catalogue_hooks_under_test", REPO / "site_src" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    (tmp_path / "pkg" / "templates").mkdir(parents=True)
    code, template, other = (
        tmp_path / "pkg" / "a.py",
        tmp_path / "pkg" / "templates" / "x.html.j2",
        tmp_path / "pkg" / "n.txt",
    )
    for path in (code, template, other):
        path.write_text("")
        os.utime(path, (1_000_000, 1_000_000))
    assert hooks.code_stamp(tmp_path / "pkg") == 1_000_000
    os.utime(other, (2_000_000, 2_000_000))
    assert hooks.code_stamp(tmp_path / "pkg") == 1_000_000
    os.utime(template, (3_000_000, 3_000_000))
    assert hooks.code_stamp(tmp_path / "pkg") == 3_000_000


def test_a_new_serve_session_keeps_nothing_of_the_last(serving, tmp_path):
    """What a serve process keeps between rebuilds lives on the hooks object and is dropped when MkDocs starts a
    new command: the next session prepares every recipe and renders every page again."""
    hooks, _root, dirty = serving
    _serve_build(tmp_path / "first", dirty)
    first = hooks.HOOKS.rebuilds
    assert first is not None and len(first.prepared) > 20
    hooks.HOOKS.start("serve", dirty)
    assert hooks.HOOKS.rebuilds is None
    _serve_build(tmp_path / "second", dirty)
    second = hooks.HOOKS.rebuilds
    assert second is not first
    assert not {id(p) for _, p in first.prepared.values()} & {id(p) for _, p in second.prepared.values()}
    assert set(hooks.HOOKS.preview.last_rendered) == set(hooks.HOOKS.generated)


def test_after_a_failed_build_the_next_one_starts_clean(serving, tmp_path):
    """A build that fails (two recipes with one id) leaves the site folder unknown: the next rebuild, which also
    drops a recipe, renders everything and equals a full render (search index included)."""
    hooks, root, dirty = serving
    live = tmp_path / "live"
    _serve_build(live, dirty)
    shutil.copytree(REPO / "examples" / "tiny-cpu", root / "tiny-cpu")  # the id is also in examples/
    with pytest.raises(Exception, match="tiny-cpu"):
        _serve_build(live, dirty)
    shutil.rmtree(root / "tiny-cpu")
    shutil.rmtree(root / "mistral-nemo-12b-fp8")
    _serve_build(live, dirty)
    assert set(hooks.HOOKS.preview.last_rendered) == set(hooks.HOOKS.generated)
    after = _files(live)
    assert _differences(after, _full_render(tmp_path / "full")) == []
    # its page is gone from the search index (another recipe's prose may still name it)
    locations = [doc["location"] for doc in json.loads(after["search/search_index.json"])["docs"]]
    assert not [loc for loc in locations if loc.startswith("recipes/mistral-nemo-12b-fp8/")]
    assert any(loc.startswith("recipes/qwen3-8b-fp8/") for loc in locations)
