"""A generated page: title and description, an HTML head, a short lead, an HTML body.

The renderer produces pages in this form once; two writers turn them into files: `markdown()` for
`catalogue export` and the golden tests, and catalogue.site.mkdocs_adapter for the MkDocs build.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

SECTION = re.compile(r'<h2 id="([^"]+)">(.*?)<a class="headerlink"')
MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]#])")
BRACES = {"{": "&#123;", "}": "&#125;"}  # attr_list reads '{: ...}' / '{ ... }' after a heading as attributes
DESCRIPTION_LIMIT = 160  # what search engines show of a meta description


@dataclass(frozen=True)
class Page:
    """One generated page, rendered to HTML except for its plain-text title and description."""

    path: str
    """Where the page goes, relative to the docs folder, e.g. 'recipes/gptoss-120b.md'."""
    title: str
    """Plain-text title (the h1, the browser tab)."""
    description: str
    """Plain-text description for the page's meta tag."""
    head: str = ""
    """HTML shown under the title: badges, the hardware line."""
    lead: str = ""
    """Short HTML the site search indexes (the recipe summary)."""
    body: str = ""
    """The rest of the page as HTML; every h2 carries an id and a permalink."""
    hide: tuple[str, ...] = field(default=())
    """Material sidebars to hide on this page ('navigation', 'toc')."""

    @property
    def sections(self) -> list[tuple[str, str]]:
        """(anchor, heading HTML) of every h2, in page order: the table of contents."""
        return SECTION.findall(self.body)

    @property
    def meta(self) -> dict[str, object]:
        """Front matter, plain text (whoever writes it into HTML escapes it)."""
        meta: dict[str, object] = {"title": " ".join(self.title.split()), "description": _shorten(self.description)}
        if self.hide:
            meta["hide"] = list(self.hide)
        return meta

    def markdown(self) -> str:
        """The page as one Markdown file: front matter, the title, then the HTML blocks."""
        front = "\n".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in self.meta.items())
        heading = markdown_text(self.title)
        blocks = [f"---\n{front}\n---", f"# {heading}", self.head, self.lead, self.body]
        return "\n\n".join(b for b in blocks if b) + "\n"


def markdown_text(text: str) -> str:
    """Plain text as one line of Markdown that reads as that text: HTML-escaped (quotes too), attr_list's braces as
    entities, Markdown's marks backslashed, every run of whitespace one space (no new block)."""
    marked = MARKDOWN_SPECIALS.sub(r"\\\1", " ".join(text.split()))  # before the entities, whose '#' it would mark
    return re.sub(r"[{}]", lambda m: BRACES[m.group()], html.escape(marked, quote=True))


def _shorten(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """At most `limit` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:.") + "…"
