"""The methodology, a page per topic: each under 3,000 words, every headline figure's link leads to a section of
it, and the tool that split it moves each section whole."""

from __future__ import annotations

import re
from pathlib import Path

from catalogue.site.headline import figures
from tools.split_methodology import split

DOCS = Path(__file__).resolve().parents[1] / "site_src" / "docs"
HEADING = re.compile(r"^#{1,6} (.*)$", re.M)


def _slug(text: str) -> str:
    """Python-Markdown's toc slug (the default MkDocs uses): lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_no_methodology_page_is_over_3000_words():
    pages = sorted((DOCS / "methodology").glob("*.md"))
    assert len(pages) >= 8 and not (DOCS / "methodology.md").exists()
    for page in pages:
        assert len(page.read_text(encoding="utf-8").split()) <= 3000, page.name


def test_every_headline_figure_links_to_a_section_that_exists():
    row = {"single": 1.0, "best": 2.0, "best_c": 4, "per_node": 2.0, "nodes": 1, "workload": "w"}
    row |= {"measured_on": None, "capacity_text": "1", "capacity_slo": "p95 TTFT ≤ 1 s", "capacity_workload": None}
    row |= {"capacity_date": None}
    shown = figures(row)
    assert {f.key for f in shown} == {"single", "best", "capacity"}
    for figure in shown:
        page, anchor = figure.topic
        text = (DOCS / "methodology" / f"{page}.md").read_text(encoding="utf-8")
        assert not anchor or anchor in {_slug(h) for h in HEADING.findall(text)}, (page, anchor)


SAMPLE = """# How

Intro with [a link](examples/x.md).

## Two kinds

Text.

## Open loop and capacity

Open text.

### `sweep.slo`

SLO text.

### The capacity search

Search text.

#### Probes

```
## not a heading
```

## Run policy

Policy, see [the page](http://example.org/a.md).
"""


def test_the_split_moves_sections_whole_promotes_headings_and_relinks():
    pages = split(SAMPLE)
    assert set(pages) == {"index", "open-loop", "capacity", "run-policy"}
    assert "## Two kinds" in pages["index"] and "](../examples/x.md)" in pages["index"]
    assert "- [Run policy](run-policy.md)" in pages["index"]
    assert pages["open-loop"].startswith("# Open loop and capacity\n") and "## `sweep.slo`" in pages["open-loop"]
    assert "Search text" not in pages["open-loop"]
    capacity = pages["capacity"]
    assert capacity.startswith("# The capacity search\n") and "## Probes" in capacity
    assert "## not a heading" in capacity  # a fenced line stays as it is
    assert pages["run-policy"].startswith("# Run policy\n") and "(http://example.org/a.md)" in pages["run-policy"]
