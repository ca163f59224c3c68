"""Keep heavy raw HTML (charts, tables) out of Markdown in the MkDocs build; splice it back after.

Python-Markdown and the search plugin both parse every raw HTML tag of a page; the generated SVG
charts and figure tables are most of those tags and need neither pass. `lift` swaps each block for
a one-line placeholder; `splice` puts the blocks back into the finished HTML page.
"""

from __future__ import annotations

import re

BLOCK = re.compile(r'^(<figure class="rc-figure">.*?</figure>|<table class="rc-(?:perf|index)[^"]*"[^>]*>.*?</table>)$', re.S | re.M)
SLOT = '<div class="rc-slot" data-rc-slot="{}"></div>'
SLOT_RE = re.compile(r'<div class="rc-slot" data-rc-slot="(\d+)"></div>')


def lift(markdown: str) -> tuple[str, list[str]]:
    """Markdown with placeholders, and the blocks they stand for."""
    blocks: list[str] = []

    def keep(match: re.Match) -> str:
        blocks.append(match.group(1))
        return SLOT.format(len(blocks) - 1)

    return BLOCK.sub(keep, markdown), blocks


def splice(html: str, blocks: list[str]) -> str:
    """The finished page with every placeholder replaced by its block."""
    return SLOT_RE.sub(lambda m: blocks[int(m.group(1))], html)
