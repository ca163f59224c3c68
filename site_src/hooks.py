"""MkDocs glue: add the generated pages at build time (nothing is written into docs_dir).

The pages come from catalogue.site.build; what they become for MkDocs and Material (front matter,
content, splicing, the theme shell) lives in catalogue.site.mkdocs_adapter, and what a `mkdocs serve`
rebuild carries over from the last one in catalogue.site.mkdocs_preview. The state of one MkDocs
process is kept on one `CatalogueHooks` object; the module-level functions are MkDocs' hook names.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page as MkDocsPage
from mkdocs.structure.toc import AnchorLink, TableOfContents

log = logging.getLogger("mkdocs.hooks.catalogue")
INDENT = re.compile(r"\n\s+")  # the theme's indentation; generated pages' own HTML is spliced in after
PACKAGE = Path(__file__).resolve().parents[1] / "catalogue"
CODE = {".py", ".j2"}
"""What in the catalogue package a page depends on: its code and its page templates."""


def recipe_roots(config: MkDocsConfig) -> list[Path]:
    """Recipe folders: $CATALOGUE_RECIPE_ROOTS (os.pathsep-separated) or `extra.recipe_roots`."""
    base = Path(config["config_file_path"]).parent
    override = os.environ.get("CATALOGUE_RECIPE_ROOTS")
    names = override.split(os.pathsep) if override else config["extra"].get("recipe_roots", ["recipes"])
    return [base / name for name in names]


def code_stamp(package: Path = PACKAGE) -> float:
    """Newest modification time of the package's code and page templates (a serve rebuild reloads on a change)."""
    return max(p.stat().st_mtime for p in package.rglob("*") if p.suffix in CODE)


def _unused_theme_file(src_uri: str, config: MkDocsConfig) -> bool:
    """Source maps, and lunr's language packs when search is English only: no page loads them."""
    search = config.plugins.get("material/search") or config.plugins.get("search")
    english_only = search is not None and list(search.config.lang or ["en"]) == ["en"]
    return src_uri.endswith(".map") or (english_only and src_uri.startswith("assets/javascripts/lunr/"))


class CatalogueHooks:
    """What one MkDocs process keeps between events and rebuilds."""

    def __init__(self) -> None:
        self.serving = False
        """`mkdocs serve`: recipes whose files did not change are not prepared again; errors show on pages."""
        self.dirty = False
        """`mkdocs serve --dirty`: files a rebuild does not change stay in the site folder (see mkdocs_preview)."""
        self.code_stamp: float | None = None
        """Newest modification time of the catalogue's code, to re-import it when it changes under serve."""
        self.generated: dict[str, Any] = {}
        """Docs path -> catalogue.site.page.Page of this build."""
        self.nav_pages: set[str] = set()
        """Source paths of the pages in the nav (the theme shell cannot stand for them)."""
        self.shell = os.environ.get("CATALOGUE_THEME_SHELL", "on") != "off"
        """Whether generated pages outside the nav render through the theme shell."""
        self.adapter: ModuleType | None = None
        """catalogue.site.mkdocs_adapter as imported for this build."""
        self.rebuilds: Any = None
        """`mkdocs serve`: catalogue.site.build.Rebuilds (each recipe as last prepared, and its pages); made again with
        the code."""
        self.preview: Any = None
        """`mkdocs serve`: mkdocs_preview.Preview (what a rebuild carries over); made again with the code."""
        self.api_kept: Any = None
        """`mkdocs serve`: catalogue.site.api.KeptDocuments (documents of unchanged recipes); made again with the
        code."""
        self.sparkrun_kept: dict[str, Any] | None = None
        """`mkdocs serve`: the sparkrun file of each unchanged recipe
        (catalogue.publish.sparkrun_export.sparkrun_files)."""

    def start(self, command: str, dirty: bool) -> None:
        """A new MkDocs command in this process: what a serve rebuild carries over is made afresh."""
        self.serving, self.dirty = command == "serve", command == "serve" and dirty
        self.rebuilds = self.preview = self.api_kept = self.sparkrun_kept = None
        warning = importlib.import_module("catalogue.site.mkdocs_preview").DirtyWarning
        warning().install() if self.dirty else warning.uninstall()  # logged before on_files: filter it from here

    def build_module(self) -> ModuleType:
        """catalogue.site.build, re-imported (with the adapter) when the catalogue's code or templates changed
        (mkdocs serve): every recipe is prepared and every page rendered again."""
        stamp = code_stamp()
        if self.code_stamp is not None and stamp != self.code_stamp:
            for name in [m for m in sys.modules if m == "catalogue" or m.startswith("catalogue.")]:
                del sys.modules[name]
            self.rebuilds = self.preview = self.api_kept = self.sparkrun_kept = None
        self.code_stamp = stamp
        self.adapter = importlib.import_module("catalogue.site.mkdocs_adapter")
        if self.serving and self.preview is None:
            self.preview = importlib.import_module("catalogue.site.mkdocs_preview").Preview(self.dirty)
            self.api_kept = importlib.import_module("catalogue.site.api").KeptDocuments()
            self.sparkrun_kept = {}
        build_module = importlib.import_module("catalogue.site.build")
        if self.serving and self.rebuilds is None:
            self.rebuilds = build_module.Rebuilds()
        return build_module

    def files(self, files: Files, config: MkDocsConfig) -> Files:
        """The generated pages and static files added. What the catalogue made stays alive until the build ends, so
        it is made without the cyclic garbage collector, then frozen out of its sight (gc.freeze) while MkDocs
        renders; `post_build` unfreezes it. At 1,000 recipes the collector otherwise spent about 1 s of the build
        walking those objects again and again, and found nothing to free."""
        build_module = self.build_module()
        with build_module.gc_paused():
            files = self._files(build_module, files, config)
        gc.freeze()
        return files

    def _files(self, build_module: ModuleType, files: Files, config: MkDocsConfig) -> Files:
        rebuilds = self.rebuilds if self.serving else build_module.Rebuilds()
        checker, releases, fresh = rebuilds.current_checkers()  # under serve: made again when a snapshot changes
        if fresh:
            log.info(
                "catalogue: flags checked against %s; drift against %d vLLM release(s)", checker.source, len(releases)
            )
        generated_at = importlib.import_module("catalogue.site.api").build_time()  # one stamp for the whole API
        build = build_module.generate(
            recipe_roots(config),
            checker,
            rebuilds=rebuilds if self.serving else None,
            releases=releases,
            tolerant=self.serving,  # a preview shows a broken recipe's error on its page
            scan_secrets=False,  # not on every page build: validate, check-changes, import and new scan what comes in
            generated_at=generated_at,  # each recipe's API document and sparkrun file made with its page
        )
        for line in build.refused:  # a preview shows it on the recipe's page; a build fails on it
            (log.info if self.serving else log.error)("catalogue: not published: %s", line)
        self.generated = dict(build.pages)
        for file in [f for f in files if _unused_theme_file(f.src_uri, config)]:
            files.remove(file)
        # the JSON API (api/v1/) and each published recipe as a sparkrun file: static files beside the pages
        documents = build_module.published_files(build, generated_at, self.api_kept, self.sparkrun_kept)
        if self.preview is not None:
            self.preview.add_files(config, files, build.pages, documents)
            return files
        for file in importlib.import_module("catalogue.site.mkdocs_adapter").page_files(config, build.pages):
            files.append(file)
        for path, text in documents.items():
            files.append(File.generated(config, path, content=text))
        return files

    def env(self, env: Any) -> Any:
        adapter = self.adapter
        assert adapter is not None, "on_files runs first"
        if self.shell:
            adapter.ThemeShells(env).install()
        env.bytecode_cache = adapter.theme_bytecode(env, self.serving)  # the theme compiled once, not once per build
        return env

    def page_markdown(self, markdown: str, page: MkDocsPage) -> str:
        generated = self.generated.get(page.file.src_uri)
        if generated and self.adapter is not None:
            page.meta.update(self.adapter.front_matter(generated))
        return markdown

    def page_content(self, html: str, page: MkDocsPage) -> str:
        generated = self.generated.get(page.file.src_uri)
        if not generated:
            return html
        adapter = self.adapter
        assert adapter is not None, "on_files runs first"
        page.toc = TableOfContents([AnchorLink(title, anchor, 2) for anchor, title in generated.sections])
        if self.shell and adapter.can_stand_for(page, self.nav_pages):
            page.meta["template"] = adapter.TEMPLATE
        return adapter.page_content(generated)[0]

    def post_page(self, output: str, page: MkDocsPage) -> str:
        """Drop the theme's indentation from a generated page, then put its head and body in."""
        generated = self.generated.get(page.file.src_uri)
        if not generated:
            return output
        adapter = self.adapter
        assert adapter is not None, "on_files runs first"
        output = adapter.splice(INDENT.sub("\n", output), adapter.page_content(generated)[1])
        if self.preview is not None:
            self.preview.rendered(page.file.src_uri, output)
        return output

    def post_build(self, config: MkDocsConfig) -> None:
        gc.unfreeze()
        if self.preview is not None:
            self.preview.post_build(config.site_dir)
            log.info(
                "catalogue: %d generated page(s) rendered, %d carried over",
                len(self.preview.last_rendered),
                len(self.generated) - len(self.preview.last_rendered),
            )

    def build_error(self) -> None:
        gc.unfreeze()
        if self.preview is not None:
            self.preview.forget()

    def shutdown(self) -> None:
        """The MkDocs command ends, and the process with it: what is still alive is frozen out of the collector's
        sight, so the interpreter's last collection does not walk it (0.15 s of a 1,000-recipe build)."""
        gc.freeze()


HOOKS = CatalogueHooks()


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if not config["use_directory_urls"]:
        raise PluginError("catalogue pages link to each other with directory URLs: keep use_directory_urls: true")
    return config


def on_startup(command: str, dirty: bool) -> None:
    HOOKS.start(command, dirty)


def on_serve(server: LiveReloadServer, config: MkDocsConfig, builder: Any) -> LiveReloadServer:
    """Reload on any edit under the recipe folders, wherever they are (MkDocs' public watch API), seen from the
    system's file events where it has them (mkdocs_adapter.file_events; MkDocs polls every 0.5 s)."""
    roots = [str(root) for root in recipe_roots(config)]
    adapter = importlib.import_module("catalogue.site.mkdocs_adapter")
    if adapter.file_events(server, [*roots, *config["watch"]]):
        log.info("catalogue: watching for edits with the system's file events")
    for root in roots:
        server.watch(root)
    return server


@event_priority(100)
def on_files(files: Files, config: MkDocsConfig) -> Files:
    return HOOKS.files(files, config)


def on_nav(nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
    HOOKS.nav_pages = {p.file.src_uri for p in nav.pages}
    return nav


def on_env(env: Any, config: MkDocsConfig, files: Files) -> Any:
    """Generated pages outside the nav render through one theme shell per kind (see mkdocs_adapter)."""
    return HOOKS.env(env)


def on_page_markdown(markdown: str, page: MkDocsPage, config: MkDocsConfig, files: Files) -> str:
    return HOOKS.page_markdown(markdown, page)


def on_page_content(html: str, page: MkDocsPage, config: MkDocsConfig, files: Files) -> str:
    return HOOKS.page_content(html, page)


def on_post_page(output: str, page: MkDocsPage, config: MkDocsConfig) -> str:
    return HOOKS.post_page(output, page)


@event_priority(-100)  # after the search plugin has written its index
def on_post_build(config: MkDocsConfig) -> None:
    HOOKS.post_build(config)


def on_build_error(error: Exception) -> None:
    HOOKS.build_error()


def on_shutdown() -> None:
    HOOKS.shutdown()
