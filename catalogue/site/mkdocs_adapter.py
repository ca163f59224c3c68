"""Everything of the site that knows MkDocs and Material: what a `Page` becomes for them, and the theme shell.

A generated page reaches MkDocs as an empty Markdown file whose content is set after conversion:
its lead (what the search plugin indexes) between two placeholders (`page_content`); the head and
body skip the search plugin and are spliced into the finished page (`splice`). Material prints the
title and description into <head> unescaped, so `front_matter` escapes them here, where that HTML
is written; the `Page` itself holds plain text.

The theme shell renders the theme once per kind of generated page, then fills it in for each page.

Rendering Material's main.html costs about 2 ms a page: most of a 1,000-recipe build. A generated
page that is not in the nav differs from its siblings in the theme's output only by its title,
description, canonical URL, table of contents and content. The shell is the theme rendered for a
stand-in copy of such a page whose values are sentinels; each page is then the shell with its own
values put in. Anything else that differs goes into the shell's key, and pages the shell cannot
stand for (in the nav, with an edit link, previous/next links) keep the theme's normal render.
`tests/test_theme_shell.py` builds the site both ways and compares every page byte for byte.

`mkdocs serve` watches with file events (`file_events`) instead of MkDocs' 0.5 s polling.
"""

from __future__ import annotations

import copy
import html
import re
from collections.abc import Iterable
from typing import Any

import jinja2
import jinja2.bccache
import watchdog.events as wd
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.livereload import LiveReloadServer
from mkdocs.structure.files import File
from mkdocs.structure.toc import AnchorLink, TableOfContents
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from catalogue.site.page import Page
from catalogue.site.templating import compiled_on_disk

SLOT = '<div class="rc-slot" data-rc-slot="{}"></div>'
SLOT_RE = re.compile(r'<div class="rc-slot" data-rc-slot="(\d+)"></div>')


def front_matter(page: Page) -> dict[str, object]:
    """The page's meta for MkDocs, title and description HTML-escaped (Material prints them raw)."""
    meta = page.meta
    meta["title"] = html.escape(str(meta["title"]), quote=True)
    meta["description"] = html.escape(str(meta["description"]), quote=True)
    return meta


def page_content(page: Page) -> tuple[str, list[str]]:
    """The HTML MkDocs handles (the lead between two placeholders), and the blocks they stand for.

    The theme writes the h1 itself (from the title) when the content has none; the search plugin
    indexes this HTML, so the lead is what search finds a generated page by.
    """
    return f"{SLOT.format(0)}\n{page.lead}\n{SLOT.format(1)}", [page.head, page.body]


def splice(finished_html: str, blocks: list[str]) -> str:
    """The finished page with every placeholder replaced by its block."""
    return SLOT_RE.sub(lambda m: blocks[int(m.group(1))], finished_html)


TEMPLATE = "catalogue-shell.html"
SENTINEL = "rcshell{}x"
FIELDS = ("title", "description", "canonical", "content", "tocnav", "tocid")
SENTINEL_RE = re.compile("rcshell(" + "|".join(FIELDS) + ")x")
TOC_PARTIAL = '{% import "partials/language.html" as lang with context %}{% include "partials/toc.html" %}'


def can_stand_for(page: Any, nav_pages: set[str]) -> bool:
    """Whether a page's theme output is fully described by the shell's sentinels."""
    return (
        page.file.src_uri not in nav_pages
        and not page.edit_url
        and page.previous_page is None
        and page.next_page is None
        and set(page.meta) <= {"title", "description", "hide", "template"}
    )


class ThemeShells:
    """The shells of one build, keyed by what changes the theme's output structurally."""

    def __init__(self, env: jinja2.Environment) -> None:
        self.env = env
        self.toc = env.from_string(TOC_PARTIAL)
        self.shells: dict[tuple, str] = {}
        self.toc_navs: dict[tuple, str] = {}

    def install(self) -> None:
        """Make `catalogue-shell.html` a template of this build's environment."""
        assert self.env.loader is not None, "MkDocs gives the theme environment a loader"
        self.env.loader = jinja2.ChoiceLoader(
            [jinja2.DictLoader({TEMPLATE: "{{ catalogue_shell() }}"}), self.env.loader]
        )
        self.env.globals["catalogue_shell"] = jinja2.pass_context(lambda context: self.render(dict(context)))

    def render(self, context: dict[str, Any]) -> str:
        """The page's HTML: its shell with the page's own values put in."""
        page = context["page"]
        toc = list(page.toc)
        key = (
            page.url.rstrip("/").rpartition("/")[0],  # nav links are relative to the page's folder
            tuple(page.meta.get("hide", ())),
            toc[0].level if toc else None,
            page.canonical_url is not None,
            "\u003ch1" in (page.content or ""),
        )
        shell = self.shells.get(key)
        if shell is None:
            shell = self.shells[key] = self._make_shell(context, bool(toc))
        values = {
            "title": str(page.meta.get("title", "")),
            "description": str(page.meta.get("description", "")),
            "canonical": page.canonical_url or "",
            "content": page.content or "",
            "tocnav": self._toc_nav(context, toc),
            "tocid": toc[0].id if toc else "",
        }
        return SENTINEL_RE.sub(lambda m: values[m.group(1)], shell)

    def _toc_nav(self, context: dict[str, Any], toc: list[AnchorLink]) -> str:
        """The theme's table of contents; pages with the same flat list of sections share it."""
        if any(item.children for item in toc):
            return self.toc.render(context)
        key = tuple((item.id, item.title, item.level) for item in toc)
        if key not in self.toc_navs:
            self.toc_navs[key] = self.toc.render(context)
        return self.toc_navs[key]

    def _make_shell(self, context: dict[str, Any], has_toc: bool) -> str:
        page = context["page"]
        stand_in = copy.copy(page)
        stand_in.meta = {k: v for k, v in page.meta.items() if k != "template"}
        stand_in.meta.update(title=SENTINEL.format("title"), description=SENTINEL.format("description"))
        stand_in.content = SENTINEL.format("content")
        stand_in.canonical_url = SENTINEL.format("canonical") if page.canonical_url is not None else None
        items = (
            [AnchorLink(SENTINEL.format("toctitle"), SENTINEL.format("tocid"), page.toc.items[0].level)]
            if has_toc
            else []
        )
        stand_in.toc = TableOfContents(items)
        stand_in_context = {**context, "page": stand_in}
        shell = self.env.get_template("main.html").render(stand_in_context)
        toc_nav = self.toc.render(stand_in_context)
        if shell.count(toc_nav) != 1 or "rcshelltoctitlex" in shell.replace(toc_nav, ""):
            raise RuntimeError(
                "theme shell: the table of contents is not one block of the page; "
                "disable with CATALOGUE_THEME_SHELL=off"
            )
        return shell.replace(toc_nav, SENTINEL.format("tocnav"))


class MemoryBytecodeCache(jinja2.BytecodeCache):
    """Compiled theme templates kept in memory; Jinja checks each against its source's checksum."""

    def __init__(self) -> None:
        self.store: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.store:
            bucket.bytecode_from_string(self.store[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.store[bucket.key] = bucket.bytecode_to_string()


THEME_BYTECODE = MemoryBytecodeCache()


def theme_bytecode(env: jinja2.Environment, serving: bool) -> jinja2.BytecodeCache | None:
    """Where the theme's compiled templates are kept: in this process under `mkdocs serve` (compiled once, not once
    per rebuild), on disk for a build (templating.compiled_on_disk: compiled once, not once per build)."""
    return THEME_BYTECODE if serving else compiled_on_disk(env)


def page_files(config: MkDocsConfig, paths: Iterable[str]) -> list[File]:
    """An empty Markdown file per generated page; its content is set after conversion (`page_content`)."""
    return [File.generated(config, path, content="") for path in paths]


CHANGES = [
    wd.FileCreatedEvent,
    wd.FileModifiedEvent,
    wd.FileAttribEvent,
    wd.FileClosedEvent,
    wd.FileDeletedEvent,
    wd.FileMovedEvent,
    wd.DirCreatedEvent,
    wd.DirDeletedEvent,
    wd.DirMovedEvent,
]
"""What counts as an edit. MkDocs rebuilds on any event of a file, and the operating system also reports a file
opened or closed unwritten: the build reading the recipes would start the next build, for ever."""


class ChangeEvents(Observer):  # type: ignore[misc,valid-type]
    """watchdog's native observer (inotify on Linux) that reports only `CHANGES`."""

    def schedule(self, event_handler: Any, path: Any, **kwargs: Any) -> Any:
        kwargs["event_filter"] = kwargs.get("event_filter") or CHANGES
        return super().schedule(event_handler, path, **kwargs)


def file_events(server: LiveReloadServer, paths: Iterable[str]) -> bool:
    """Make `mkdocs serve` see an edit from the operating system's file events instead of polling; False (polling
    kept) where they cannot watch `paths` (every folder the serve will watch) or MkDocs is not as expected.

    MkDocs' watcher polls every 0.5 s and walks every watched tree each time: at 1,000 recipes that is a fifth of
    a core, and an edit waits 0.25 s on average before it is seen. MkDocs internal used here (and nowhere else):
    `LiveReloadServer.observer`, the watchdog observer that its public `watch` schedules on and `serve` starts,
    made in its constructor as a PollingObserver. The watches made before `on_serve` (docs_dir, the config file,
    the theme's folders with --watch-theme) move to the new observer by its public `unwatch` and `watch`.
    `tests/test_mkdocs_adapter.py` fails if that attribute changes.
    """
    old = getattr(server, "observer", None)
    if not isinstance(old, PollingObserver) or old.is_alive():
        return False
    watched = sorted({emitter.watch.raw_path for emitter in old.emitters})  # as MkDocs named them
    probe = ChangeEvents()
    try:  # the folders' watches fit the system's limits (inotify: max_user_watches)
        for path in {*watched, *paths}:
            probe.schedule(wd.FileSystemEventHandler(), path, recursive=True)
        probe.start()
    except OSError:
        return False
    finally:
        if probe.is_alive():
            probe.stop()
            probe.join()
    for path in watched:
        server.unwatch(path)
    server.observer = ChangeEvents(timeout=old.timeout)
    for path in watched:
        server.watch(path)
    return True
