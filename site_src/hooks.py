"""MkDocs glue: add the generated pages at build time (nothing is written into docs_dir).

A generated page reaches MkDocs as an empty Markdown file whose content is set after the (empty)
conversion: its lead (what the search plugin indexes) between two placeholders. The page's HTML
head and body skip the search plugin and are spliced into the finished page; its title,
description and table of contents are set from the `Page`.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.toc import AnchorLink, TableOfContents

log = logging.getLogger("mkdocs.hooks.catalogue")
INDENT = re.compile(r"\n\s+")  # the theme's indentation; generated pages' own HTML is spliced in after
_code_stamp: float | None = None
_generated: dict = {}  # docs path -> catalogue.site.page.Page
_nav_pages: set[str] = set()
_serving = False


def _shell_enabled() -> bool:
    return os.environ.get("CATALOGUE_THEME_SHELL", "on") != "off"


def _fresh_build_module():
    """Import catalogue.site.build, re-importing the package when its code changed (mkdocs serve)."""
    global _code_stamp
    package = Path(__file__).resolve().parents[1] / "catalogue"
    stamp = max(p.stat().st_mtime for p in package.rglob("*.py"))
    if _code_stamp is not None and stamp != _code_stamp:
        for name in [m for m in sys.modules if m == "catalogue" or m.startswith("catalogue.")]:
            del sys.modules[name]
    _code_stamp = stamp
    return importlib.import_module("catalogue.site.build")


def recipe_roots(config) -> list[Path]:
    """Recipe folders: $CATALOGUE_RECIPE_ROOTS (os.pathsep-separated) or `extra.recipe_roots`."""
    base = Path(config["config_file_path"]).parent
    override = os.environ.get("CATALOGUE_RECIPE_ROOTS")
    names = override.split(os.pathsep) if override else config["extra"].get("recipe_roots", ["recipes"])
    return [base / name for name in names]


def on_config(config):
    if not config["use_directory_urls"]:
        raise PluginError("catalogue pages link to each other with directory URLs: keep use_directory_urls: true")
    return config


def on_startup(command, dirty):
    """Under `mkdocs serve`, recipes whose files did not change are not prepared again."""
    global _serving
    _serving = command == "serve"


def on_serve(server, config, builder):
    """Reload on any edit under the recipe folders, wherever they are (MkDocs' public watch API)."""
    for root in recipe_roots(config):
        server.watch(str(root))
    return server


def _unused_theme_file(src_uri: str, config) -> bool:
    """Source maps, and lunr's language packs when search is English only: no page loads them."""
    search = config.plugins.get("material/search") or config.plugins.get("search")
    english_only = search is not None and list(search.config.lang or ["en"]) == ["en"]
    return src_uri.endswith(".map") or (english_only and src_uri.startswith("assets/javascripts/lunr/"))


@event_priority(100)
def on_files(files: Files, config) -> Files:
    build_module = _fresh_build_module()
    rebuilds = build_module.SERVE_REBUILDS if _serving else build_module.Rebuilds()
    checker, releases, fresh = rebuilds.current_checkers()  # under serve: made again when a snapshot changes
    if fresh:
        log.info("catalogue: flags checked against %s; drift against %d vLLM release(s)", checker.source, len(releases))
    build = build_module.generate(
        recipe_roots(config), checker, rebuilds=rebuilds if _serving else None, releases=releases, tolerant=_serving
    )  # a preview shows a broken recipe's error on its page
    for line in build.refused:  # a preview shows it on the recipe's page; a build fails on it
        (log.info if _serving else log.error)("catalogue: not published: %s", line)
    _generated.clear()
    for file in [f for f in files if _unused_theme_file(f.src_uri, config)]:
        files.remove(file)
    _generated.update(build.pages)
    for path in build.pages:
        files.append(File.generated(config, path, content=""))
    return files


def on_nav(nav, config, files):
    _nav_pages.clear()
    _nav_pages.update(p.file.src_uri for p in nav.pages)
    return nav


def on_env(env, config, files):
    """Generated pages outside the nav render through one theme shell per kind (see theme_shell)."""
    if _shell_enabled():
        from catalogue.site.theme_shell import ThemeShells

        ThemeShells(env).install()
    if _serving:
        from catalogue.site.theme_shell import THEME_BYTECODE

        env.bytecode_cache = THEME_BYTECODE  # the theme compiles once per process, not once per rebuild
    return env


def on_page_markdown(markdown: str, page, config, files) -> str:
    generated = _generated.get(page.file.src_uri)
    if generated:
        page.meta.update(generated.meta)
    return markdown


def on_page_content(html: str, page, config, files) -> str:
    generated = _generated.get(page.file.src_uri)
    if generated:
        html = generated.content()[0]
        page.toc = TableOfContents([AnchorLink(title, anchor, 2) for anchor, title in generated.sections])
        if _shell_enabled():
            from catalogue.site.theme_shell import TEMPLATE, can_stand_for

            if can_stand_for(page, _nav_pages):
                page.meta["template"] = TEMPLATE
    return html


def on_post_page(output: str, page, config) -> str:
    """Drop the theme's indentation from a generated page, then put its head and body in."""
    generated = _generated.get(page.file.src_uri)
    if not generated:
        return output
    from catalogue.site.page import splice

    return splice(INDENT.sub("\n", output), generated.content()[1])
