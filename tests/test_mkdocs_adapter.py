"""The MkDocs adapter: front matter escaped for Material, content and splicing, a theme shell that gives
byte-for-byte the pages MkDocs renders itself, hostile titles included, and `mkdocs serve` watching with file
events."""

from __future__ import annotations

import shutil
import threading
import time

import yaml
from mkdocs.livereload import LiveReloadServer
from watchdog.observers.polling import PollingObserver

from catalogue.site.mkdocs_adapter import ChangeEvents, file_events, front_matter, page_content, splice
from catalogue.site.page import Page
from tests.site_support import REPO, mkdocs_build

PAGE = Page("recipes/x.md", 'A <b> & "t"', "d <i>", head="<p>head</p>", lead="<p>lead</p>", body="<h2>b</h2>")


def test_front_matter_is_escaped_for_material_and_the_page_stays_plain():
    assert front_matter(PAGE) == {"title": "A &lt;b&gt; &amp; &quot;t&quot;", "description": "d &lt;i&gt;"}
    assert PAGE.meta["title"] == 'A <b> & "t"'


def test_content_keeps_only_the_lead_and_splice_restores_the_blocks():
    content, blocks = page_content(PAGE)
    assert "<p>lead</p>" in content and "head" not in content and "<h2" not in content
    finished = splice(f"<html>{content}</html>", blocks)
    assert finished == f"<html>{blocks[0]}\n<p>lead</p>\n{blocks[1]}</html>" and blocks == ["<p>head</p>", "<h2>b</h2>"]


def test_shell_and_full_theme_render_give_identical_sites(tmp_path):
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    folder = root / "gptoss-120b"
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["title"] = '<script>x</script> & "quotes" rcshelltitlex'
    data["summary"] = "A summary with <b>markup</b>, `code` and rcshellcontentx. " * 5
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    roots = [root, REPO / "examples"]
    sites = {}
    for mode in ("on", "off"):
        result = mkdocs_build(tmp_path / mode, roots, CATALOGUE_THEME_SHELL=mode)
        assert result.returncode == 0, result.stderr
        sites[mode] = {p.relative_to(tmp_path / mode): p.read_bytes() for p in (tmp_path / mode).rglob("*.html")}
    assert sites["on"].keys() == sites["off"].keys() and len(sites["on"]) > 5
    different = [str(path) for path in sites["on"] if sites["on"][path] != sites["off"][path]]
    assert different == []
    page = sites["on"][next(p for p in sites["on"] if p.parts[:2] == ("recipes", "gptoss-120b"))].decode()
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page


def _serving(server: LiveReloadServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.observer.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    return thread


def test_serve_watches_with_file_events_edits_not_reads(tmp_path):
    """The MkDocs internal that file_events replaces: LiveReloadServer.observer, a PollingObserver until `serve`
    starts it (this fails if MkDocs changes that). The watches made before (docs_dir, the config file) move over;
    an edit starts one build, a file read (as every build reads the recipes) none."""
    builds: list[float] = []
    server = LiveReloadServer(lambda: builds.append(time.monotonic()), "127.0.0.1", 0, str(tmp_path / "site"))
    docs, config, recipes = tmp_path / "docs", tmp_path / "mkdocs.yml", tmp_path / "recipes"
    docs.mkdir()
    config.write_text("site_name: x\n")
    (recipes / "a").mkdir(parents=True)
    recipe = recipes / "a" / "recipe.yaml"
    recipe.write_text("title: a\n")
    server.watch(str(docs))
    server.watch(str(config))
    assert isinstance(server.observer, PollingObserver) and not server.observer.is_alive()
    assert file_events(server, [str(recipes)]) and isinstance(server.observer, ChangeEvents)
    server.watch(str(recipes))
    assert {e.watch.raw_path for e in server.observer.emitters} == {str(docs), str(config), str(recipes)}
    thread = _serving(server)
    try:
        recipe.read_text()
        time.sleep(0.6)
        assert builds == []
        start = time.monotonic()
        recipe.write_text("title: b\n")
        while not builds and time.monotonic() < start + 10:
            time.sleep(0.01)
        assert len(builds) == 1 and builds[0] - start < 0.5  # polling alone waits up to 0.5 s before it looks
        config.write_text("site_name: y\n")
        while len(builds) < 2 and time.monotonic() < start + 10:
            time.sleep(0.01)
        assert len(builds) == 2
    finally:
        server.shutdown(wait=True)
        thread.join(10)


def test_file_events_leave_a_started_or_unknown_observer_alone(tmp_path):
    server = LiveReloadServer(lambda: None, "127.0.0.1", 0, str(tmp_path))
    server.observer = ChangeEvents()
    assert not file_events(server, [str(tmp_path)])
    missing = LiveReloadServer(lambda: None, "127.0.0.1", 0, str(tmp_path))
    assert not file_events(missing, [str(tmp_path / "no-such-folder")])  # cannot watch it: polling kept
    assert isinstance(missing.observer, PollingObserver)
