"""The MkDocs adapter: front matter escaped for Material, content and splicing, and a theme shell that gives
byte-for-byte the pages MkDocs renders itself, hostile titles included."""

from __future__ import annotations

import shutil

import yaml

from catalogue.site.mkdocs_adapter import front_matter, page_content, splice
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
