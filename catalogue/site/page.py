"""A generated page: title and description, an HTML head, a short lead, an HTML body.

The renderer produces pages in this form once; two writers turn them into files:
`markdown()` for `catalogue export` and the golden tests, `content()` for the MkDocs build, where
the page skips Markdown, and the head and body skip the search plugin (spliced in after the theme).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

SECTION = re.compile(r'<h2 id="([^"]+)">(.*?)<a class="headerlink"')
SLOT = '<div class="rc-slot" data-rc-slot="{}"></div>'
SLOT_RE = re.compile(r'<div class="rc-slot" data-rc-slot="(\d+)"></div>')
MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]#])")
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
        """Front matter. The theme prints title and description into <head> unescaped, so they are escaped here."""
        meta: dict[str, object] = {"title": _attr(self.title), "description": _attr(_shorten(self.description))}
        if self.hide:
            meta["hide"] = list(self.hide)
        return meta

    def markdown(self) -> str:
        """The page as one Markdown file: front matter, the title, then the HTML blocks."""
        front = "\n".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in self.meta.items())
        heading = MARKDOWN_SPECIALS.sub(r"\\\1", html.escape(self.title, quote=False))
        blocks = [f"---\n{front}\n---", f"# {heading}", self.head, self.lead, self.body]
        return "\n\n".join(b for b in blocks if b) + "\n"

    def content(self) -> tuple[str, list[str]]:
        """The HTML MkDocs handles (the lead between two placeholders), and the blocks they stand for.

        The theme writes the h1 itself (from the title) when the content has none; the search
        plugin indexes this HTML, so the lead is what search finds a generated page by.
        """
        return f"{SLOT.format(0)}\n{self.lead}\n{SLOT.format(1)}", [self.head, self.body]


def splice(finished_html: str, blocks: list[str]) -> str:
    """The finished page with every placeholder replaced by its block."""
    return SLOT_RE.sub(lambda m: blocks[int(m.group(1))], finished_html)


def _shorten(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """At most `limit` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:.") + "…"


def _attr(value: str) -> str:
    return html.escape(" ".join(value.split()), quote=True)
