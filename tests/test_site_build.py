"""`mkdocs build --strict` of the catalogue: pages present, bad recipes refused, export without MkDocs."""

from __future__ import annotations

import datetime as dt
import gc
import sys

import yaml
from mkdocs.commands.build import build
from mkdocs.config import load_config

from catalogue.commands.cli import main
from catalogue.flags.drift import release_checkers
from catalogue.publish.sparkrun_export import sparkrun_files
from catalogue.site.api import api_documents
from catalogue.site.build import generate, published_files
from tests.site_support import REPO, broken_links, mkdocs_build


def test_strict_build_of_the_seed_catalogue(tmp_path):
    result = mkdocs_build(tmp_path / "site")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "site/recipes/gptoss-120b/index.html").read_text()
    for figure in ("285.8", "1,024", "+46.4 %", "+53.9 %", "+73.6 %", "+10.1 %"):
        assert figure in page
    assert (tmp_path / "site/compare/openai-gpt-oss-120b--dgx-spark/index.html").exists()
    assert (tmp_path / "site/methodology/index.html").exists()
    assert page.count("<h1") == 1 and 'href="#launch-command" class="md-nav__link"' in page
    assert 'href="../../sparkrun/gptoss-120b.yaml" download' in page  # the sparkrun file, served beside the pages
    assert (tmp_path / "site/sparkrun/gptoss-120b.yaml").read_text().startswith("# sparkrun recipe (format v2)")
    assert broken_links(tmp_path / "site") == []
    assert not list((tmp_path / "site").rglob("*.map")) and not (tmp_path / "site/assets/javascripts/lunr").exists()


def test_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="a/">ok</a> <a href="b/">no</a> <a href="#top">no anchor</a> <a id="x" href="#x">ok</a>'
    )
    (tmp_path / "a/index.html").write_text(
        '<a href="../#x">ok</a> <a href="../#y">no</a> <a href="https://example.org/">off-site</a>'
    )
    assert broken_links(tmp_path) == ["a/index.html -> ../#y", "index.html -> b/", "index.html -> #top"]


def test_build_refuses_a_recipe_with_a_bad_flag(tmp_path, recipe_copy, repo):
    root, folder = recipe_copy()
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["serving"]["flags"]["kv-cache-dtype"] = "fp9"
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    result = mkdocs_build(tmp_path / "site", [root, repo / "examples"])
    assert result.returncode != 0
    line = next(ln for ln in result.stderr.splitlines() if "not published" in ln)
    assert "gptoss-120b/recipe.yaml" in line and "--kv-cache-dtype" in line and "fp9" in line


def test_hostile_title_is_text_on_the_built_page(tmp_path, recipe_copy, repo):
    root, folder = recipe_copy()
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["title"] = "<script>window.pwned=1</script>"
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    result = mkdocs_build(tmp_path / "site", [root, repo / "examples"])
    assert result.returncode == 0, result.stderr
    html = (tmp_path / "site/recipes/gptoss-120b/index.html").read_text()
    assert "<script>window.pwned" not in html and "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html


def _models(root):
    """The model of every published recipe, read from the files with a plain YAML reader."""
    import yaml

    recipes = [yaml.safe_load(p.read_text()) for p in root.glob("*/recipe.yaml")]
    return {r["model"] for r in recipes if r.get("publish", True)}


def test_export_writes_markdown_without_mkdocs(tmp_path, repo, capsys):
    out = tmp_path / "export"
    assert main(["--root", str(repo / "recipes"), "export", str(out)]) == 0
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md"))
    recipes = {f"recipes/{p.parent.name}.md" for p in (repo / "recipes").glob("*/recipe.yaml")}
    assert "index.md" in names and {n for n in names if n.startswith("recipes/")} == recipes
    models = {f"models/{m.replace('/', '-').lower()}.md" for m in _models(repo / "recipes")}
    assert {n for n in names if n.startswith("models/")} == models  # a page per model
    assert "compare/index.md" in names
    assert len(names) == len(recipes) + len(models) + 1 + len([n for n in names if "compare/" in n])
    assert not list(tmp_path.glob(".export*"))


def test_strict_mode_turns_a_broken_link_into_a_failed_build(tmp_path, recipe_copy):
    root, _ = recipe_copy()
    result = mkdocs_build(tmp_path / "site", [root])  # no examples root: methodology.md's link to the example breaks
    assert result.returncode != 0
    assert "examples/tiny-cpu.md" in result.stderr


def test_texts_made_with_the_pages_are_the_ones_the_api_and_sparkrun_writers_make():
    """The API documents, index and sparkrun files that `generate` makes beside each page (both cores) and
    `published_files` writes are byte for byte what api_documents and sparkrun_files make from the entries."""
    releases = release_checkers()
    when = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)
    build = generate([REPO / "recipes", REPO / "examples"], releases[-1], releases=releases, generated_at=when)
    published = [entry.id for entry, _ in build.recipes if entry.recipe.publish]
    assert published and sorted(build.published) == sorted(published)
    direct = api_documents(build.recipes, when) | sparkrun_files([entry for entry, _ in build.recipes])
    assert published_files(build, when) == direct


def test_what_the_catalogue_made_is_frozen_from_the_collector_while_mkdocs_renders(tmp_path, monkeypatch):
    """The hooks freeze the objects of on_files (gc.freeze) while MkDocs renders the pages, and unfreeze them
    when the build ends: the collector is on again, and nothing stays frozen."""
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    config.plugins.on_startup(command="build", dirty=False)
    hooks = sys.modules["site_src/hooks.py"].HOOKS
    frozen: list[int] = []
    render = hooks.post_page
    monkeypatch.setattr(
        hooks, "post_page", lambda output, page: (frozen.append(gc.get_freeze_count()), render(output, page))[1]
    )
    build(config)
    assert len(frozen) > 50 and min(frozen) > 100_000  # every generated page rendered with the catalogue frozen
    assert gc.get_freeze_count() == 0 and gc.isenabled()
