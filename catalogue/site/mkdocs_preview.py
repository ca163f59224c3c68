"""`mkdocs serve`: what a rebuild carries over from the last one, so that an edit shows at once at any size.

MkDocs serve rebuilds the whole site on every edit, and each page costs it about half a millisecond even
when nothing in it changed; a plain rebuild also empties the site folder and writes every file again.
A generated page is carried over when its `Page` equals the one rendered last time and nothing else its
HTML depends on has changed (`_signature`: the site folder, the config file, every file of docs_dir and of the theme's
static files, the titles of the generated pages in the nav). Which other pages exist is not part of it:
a page outside the nav shows no list of pages but its own content, which holds its links. Pages listed in the nav are
always rendered (an excluded page would become a bare link in every page's nav), and so are the pages
that pages of docs_dir link to (MkDocs would report each such link as one to an excluded page). A carried-over page
reaches MkDocs as an excluded file, so links to it still resolve and nothing renders it; its entries from
the last search index are put back into Material's, in the order a full build writes them.

Two ways to serve (`Preview.dirty`):
- `mkdocs serve`: MkDocs empties the site folder first, so each carried page's HTML is written back.
- `mkdocs serve --dirty` (`nox -s serve`): nothing is emptied. A carried page, and a generated static
  file (the JSON API) whose text is unchanged, stay where the last build wrote them; a file the last build
  wrote and this one does not is deleted; the pages of docs_dir are rendered again when the generated files are
  not the same paths as last time (their HTML is removed first: MkDocs renders them only when it is missing or
  older than their source), so their links are checked against this build's pages, and otherwise stay (what
  they link to is the same: an edit of one recipe renders none of them) but those the nav lists untitled (the nav
  reads their title from the rendered page); and when the signature changes the site folder is emptied first,
  so every page and theme file is written again. Material's search plugin, under --dirty, keeps its last
  index and appends each build's entries: `_merge_search` keeps each page's newest run of entries.
  MkDocs warns that a dirty build may leave stale navigation and links: for this site that does not hold,
  so the warning is replaced by an info line (`DirtyWarning`).

Not carried: the sitemap, which lists only the pages rendered in that rebuild.
`tests/test_site_preview.py` compares rebuilds of both kinds with a full render, byte for byte.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.utils import clean_directory

from catalogue.site.page import Page

SEARCH_INDEX = "search/search_index.json"
"""Where Material's search plugin writes its index: {"config": ..., "docs": [{"location": url#anchor, ...}]}."""
DIRTY_WARNING = "A 'dirty' build is being performed"
"""How MkDocs' warning about --dirty starts (mkdocs.commands.build); a test fails if it no longer does."""
log = logging.getLogger("mkdocs.hooks.catalogue")


class DirtyWarning(logging.Filter):
    """Drops MkDocs' warning that a dirty build may be inaccurate, which `Preview` makes untrue for this site."""

    logger = "mkdocs.commands.build"

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(DIRTY_WARNING)

    def install(self) -> None:
        target = logging.getLogger(self.logger)
        if not any(type(f).__name__ == type(self).__name__ for f in target.filters):
            target.addFilter(self)
            log.info("catalogue: dirty preview: unchanged pages stay, removed ones are deleted (see mkdocs_preview)")

    @classmethod
    def uninstall(cls) -> None:
        """MkDocs warns again (a command without --dirty, or a dirty build the preview does not handle)."""
        target = logging.getLogger(cls.logger)
        for existing in [f for f in target.filters if type(f).__name__ == cls.__name__]:  # also from before a reload
            target.removeFilter(existing)


@dataclass
class _Rebuild:
    """What `Preview` learns about one build before it finishes."""

    signature: tuple
    pages: dict[str, Page]
    statics: dict[str, str]
    files: Files
    order: list[str]
    """The URL of every documentation page, in the order MkDocs renders them (the search index's order)."""
    paths: frozenset[str] = frozenset()
    """The path of every generated page and static file."""
    docs_kept: set[str] = field(default_factory=set)
    """URLs of the pages of docs_dir whose HTML a dirty rebuild leaves in place (MkDocs does not render them)."""
    carried: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)
    """Path -> (URL, file it is written to, HTML) of each page carried over from the last build."""
    kept: set[str] = field(default_factory=set)
    """Generated static files a dirty rebuild leaves where the last build wrote them (their text is unchanged)."""
    rendered: dict[str, bytes] = field(default_factory=dict)
    """Path -> HTML of each generated page MkDocs rendered in this build."""


class Preview:
    """A `mkdocs serve` process's memory of its last build: see the module's docstring."""

    def __init__(self, dirty: bool = False) -> None:
        self.dirty = dirty
        """`mkdocs serve --dirty`: files not rendered again are left in place instead of written back."""
        self.signature: tuple | None = None
        self.written: dict[str, tuple[Page, bytes]] = {}
        """Path -> the Page and the HTML written for it by the last build that finished."""
        self.statics: dict[str, str] = {}
        """Path -> text of each generated static file the last build that finished left in the site folder."""
        self.paths: frozenset[str] = frozenset()
        """The generated pages and static files of the last build that finished (docs_dir's links point among them)."""
        self.outputs: set[str] = set()
        """Every file the last build that finished wrote or kept (a dirty rebuild deletes those it drops)."""
        self.search: dict[str, list[Any]] = {}
        """Page URL -> that page's entries in the last search index."""
        self.current: _Rebuild | None = None
        self.last_rendered: list[str] = []
        """Paths of the generated pages rendered by the last build that finished (the others were carried)."""

    def add_files(self, config: MkDocsConfig, files: Files, pages: dict[str, Page], statics: dict[str, str]) -> None:
        """Append a file for each generated page and static file: written as usual, or excluded when carried."""
        signature = _signature(config, files, pages)
        same = signature == self.signature
        if self.dirty and not same:
            clean_directory(config.site_dir)
            self.outputs = set()
        paths = frozenset(pages) | frozenset(statics)
        untitled = _untitled(config["nav"])
        rebuild = _Rebuild(signature, pages, statics, files, [], paths)
        docs = [f for f in files.documentation_pages() if f.abs_src_path]
        if self.dirty:  # MkDocs renders a page of docs_dir only when its HTML is missing or older than its source
            again = docs if not (same and paths == self.paths) else [f for f in docs if f.src_uri in untitled]
            for file in again:  # its links are checked against this build's files; its title is read by the nav
                if os.path.isfile(file.abs_dest_path):
                    os.remove(file.abs_dest_path)
            rebuild.docs_kept = {_page_url(f) for f in docs if os.path.isfile(f.abs_dest_path)}
        known = self.written if same else {}
        in_nav = _nav_paths(config["nav"]) if config["nav"] is not None else set(pages)
        in_nav |= _linked_from(docs)  # an excluded page they link to would be reported as excluded
        for path, page in pages.items():
            last = known.get(path)
            file = File.generated(config, path, content="")
            if last is not None and last[0] == page and path not in in_nav and self._in_place(file):
                file.inclusion = InclusionLevel.EXCLUDED
                rebuild.carried[path] = (_page_url(file), file.abs_dest_path, last[1])
            files.append(file)
        for path, text in statics.items():
            file = File.generated(config, path, content=text)
            if self.dirty and same and self.statics.get(path) == text and os.path.isfile(file.abs_dest_path):
                file.inclusion = InclusionLevel.EXCLUDED
                rebuild.kept.add(file.abs_dest_path)
            files.append(file)
        rebuild.order = [_page_url(f) for f in files if f.is_documentation_page()]
        self.current = rebuild

    def _in_place(self, file: File) -> bool:
        """Whether a carried page's HTML can be had: kept in memory, or (dirty) still in the site folder."""
        return not self.dirty or os.path.isfile(file.abs_dest_path)

    def rendered(self, path: str, output: str) -> None:
        """Keep a generated page's HTML as MkDocs writes it (a dirty preview needs only that it was)."""
        if self.current is not None:
            self.current.rendered[path] = b"" if self.dirty else output.encode("utf-8", errors="xmlcharrefreplace")

    def post_build(self, site_dir: str) -> None:
        """Write (or keep) the carried-over pages, put their search entries back, and remember this build."""
        rebuild, self.current = self.current, None
        if rebuild is None:
            return
        if not self.dirty:
            for _, dest, data in rebuild.carried.values():
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with open(dest, "wb") as out:
                    out.write(data)
        carried = {dest for _, dest, _ in rebuild.carried.values()}
        outputs = {f.abs_dest_path for f in rebuild.files if not f.inclusion.is_excluded()} | carried | rebuild.kept
        if self.dirty:
            _delete(sorted(self.outputs - outputs), site_dir)
        carried_urls = {url for url, _, _ in rebuild.carried.values()} | rebuild.docs_kept
        self.search = _merge_search(os.path.join(site_dir, SEARCH_INDEX), rebuild.order, carried_urls, self.search)
        written = {path: data for path, (_, _, data) in rebuild.carried.items()} | rebuild.rendered
        self.written = {path: (page, written[path]) for path, page in rebuild.pages.items() if path in written}
        self.signature = rebuild.signature if len(self.written) == len(rebuild.pages) else None
        self.statics, self.outputs, self.paths = dict(rebuild.statics), outputs, rebuild.paths
        self.last_rendered = sorted(rebuild.rendered)

    def forget(self) -> None:
        """Render every page next time (after a failed build, what the site folder holds is not known)."""
        self.signature, self.written, self.statics, self.search, self.current = None, {}, {}, {}, None
        self.paths = frozenset()


def _delete(paths: list[str], site_dir: str) -> None:
    """Remove files a dirty rebuild no longer makes, and the folders that leaves empty (never site_dir)."""
    root = os.path.abspath(site_dir)
    for path in paths:
        if not os.path.abspath(path).startswith(root + os.sep):
            continue
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        folder = os.path.dirname(os.path.abspath(path))
        while folder.startswith(root + os.sep) and os.path.isdir(folder) and not os.listdir(folder):
            os.rmdir(folder)
            folder = os.path.dirname(folder)


LINK = re.compile(r"\]\(\s*<?([^)\s#>]+\.md)")
"""A Markdown link's target when it is a page ('[text](../x/y.md#part)' -> '../x/y.md')."""


def _linked_from(docs: list[File]) -> set[str]:
    """Paths of the pages the pages of docs_dir link to (a page's own Markdown, read as plain text)."""
    linked = set()
    for file in docs:
        with open(str(file.abs_src_path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for target in LINK.findall(text):
            linked.add(posixpath.normpath(posixpath.join(posixpath.dirname(file.src_uri), target)))
    return linked


def _signature(config: MkDocsConfig, files: Files, pages: dict[str, Page]) -> tuple:
    """Everything besides a generated page itself that its HTML depends on and that can change while serving."""
    stats = [(f.src_uri, _stat(f.abs_src_path)) for f in files if f.abs_src_path]
    if config.config_file_path:
        stats.append(("", _stat(config.config_file_path)))
    nav = _nav_paths(config["nav"]) if config["nav"] is not None else set(pages)
    titles = tuple((path, pages[path].meta["title"]) for path in sorted(nav) if path in pages)
    return config.site_dir, tuple(stats), titles


def _page_url(file: File) -> str:
    """The page's URL as the search index writes it (MkDocs' Page.url: the home page's is empty)."""
    return "" if file.url in (".", "./") else file.url


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size


def _nav_paths(nav: Any) -> set[str]:
    """Every file path the `nav` setting names."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(_nav_paths(v) for v in nav.values()))
    if isinstance(nav, list):
        return set().union(*(_nav_paths(v) for v in nav))
    return set()


def _untitled(nav: Any) -> set[str]:
    """The pages the `nav` setting lists without a title: the nav shows the title their own text gives."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_untitled(v) for v in nav))
    if isinstance(nav, dict):
        return set().union(*(_untitled(v) for v in nav.values() if not isinstance(v, str)))
    return set()


def _merge_search(path: str, order: list[str], carried: set[str], previous: dict[str, list[Any]]) -> dict[str, list]:
    """Material's search index with the carried-over pages' entries put back; each page's entries, by URL."""
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    fresh: dict[str, list[Any]] = {}
    for entry in data["docs"]:
        url, _, anchor = entry["location"].partition("#")
        if not anchor and url in fresh:
            # A page's entries start with its own; a second run of them is newer. Under --dirty, Material
            # keeps the last build's entries and appends this build's (SearchIndex.generate_search_index).
            fresh[url] = []
        fresh.setdefault(url, []).append(entry)
    by_page = {url: fresh.get(url, []) for url in order}  # entries of pages this build no longer has are dropped
    by_page |= {url: previous.get(url, []) for url in carried}
    docs = [e for url in order for e in by_page[url]]
    if docs != data["docs"]:
        data["docs"] = docs
        with open(path, "wb") as out:
            out.write(json.dumps(data, separators=(",", ":"), default=str).encode("utf-8"))
    return by_page
