"""Recipe text to HTML.

Text fields of a recipe (summary, prose, reasons, sources) are plain text with two conventions:
a span in backticks is code, and a blank line starts a new paragraph. Everything else is shown
as written: `<`, `>` and `&` are escaped (text, never attributes), so no recipe can put markup
on a page.
"""

from __future__ import annotations

import re
from html import escape

from markupsafe import Markup

CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
BLANK_LINE = re.compile(r"\n[ \t]*\n")


def code_html(text: str) -> str:
    """Text as inline code."""
    return f"<code>{escape(text, quote=False)}</code>"


def inline(text: str) -> Markup:
    """One run of text: escaped, with `code` spans as <code>."""
    out, last = [], 0
    text = text.strip()
    for match in CODE_SPAN.finditer(text):
        out.append(escape(text[last : match.start()], quote=False))
        out.append(code_html(match.group(2).strip()))
        last = match.end()
    out.append(escape(text[last:], quote=False))
    return Markup("".join(out))


def paragraphs(text: str) -> Markup:
    """Text with blank lines between paragraphs, as <p> elements."""
    parts = [p for p in BLANK_LINE.split(text.strip()) if p.strip()]
    return Markup("\n".join(f"<p>{inline(p)}</p>" for p in parts))
