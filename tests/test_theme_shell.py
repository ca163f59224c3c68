"""The theme shell gives byte-for-byte the pages MkDocs renders itself, hostile titles included."""

from __future__ import annotations

import shutil

import yaml

from tests.site_support import REPO, mkdocs_build


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
