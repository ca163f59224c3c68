"""The Agents section in chromium at desktop and phone width: the chart's capacity labels never overlap and no figure
of its tables breaks across lines (the example's committed run, and a copy whose capacities sit side by side)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.browser_support import EXAMPLES, _built_and_served, _opener

pytestmark = pytest.mark.browser

NEAR = "agents-near-capacities"
"""The copy whose three reuse ratios have capacities 6, 7 and 8 sessions: three labels a few pixels apart."""
ARTEFACTS = (
    Path(os.environ.get("CATALOGUE_ARTEFACTS", Path(__file__).resolve().parents[1] / "artefacts")) / "screenshots"
)

OVERLAPS = """chart => {
  const boxes = [...chart.querySelectorAll('.rc-mark-label')].map(e => e.getBoundingClientRect());
  const plot = chart.querySelector('.rc-plot').getBoundingClientRect();
  const found = [];
  boxes.forEach((a, i) => {
    if (a.left < plot.left - 1 || a.right > plot.right + 1) found.push(`label ${i} leaves the plot`);
    boxes.slice(i + 1).forEach((b, j) => {
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
        found.push(`labels ${i} and ${i + j + 1} overlap`);
    });
  });
  return [boxes.length, found];
}"""
"""[mark labels, problems]: a label outside the plot, or two whose boxes intersect."""

WRAPPED = r"""section => {
  const figure = /\[[^\]]*\]|\d[\d.,]*(?: \/ \d[\d.,]*)?(?: %)?|n \d+/g;
  const found = [];
  const cells = section.querySelectorAll('table.rc-agents-levels td, table.rc-agents td:nth-child(-n+3)');
  for (const cell of cells) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(figure)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (lines.size > 1) found.push(m[0]);
      }
    }
  }
  return [cells.length, found];
}"""
"""[cells looked at, figures whose text runs over more than one line]."""


def near_capacities(root: Path) -> Path:
    """A copy of the example (its run files, not their raw folders) with capacities 6, 7 and 8 sessions."""
    folder = root / NEAR
    shutil.copytree(EXAMPLES / "tiny-cpu-agents", folder, ignore=shutil.ignore_patterns("*Z", "*.jsonl"))
    parts = sorted((folder / "runs").glob("*-agents-reuse*.json"))
    assert len(parts) == 3, parts
    for sessions, path in zip((6, 7, 8), sorted(parts, key=lambda p: int(p.stem.rsplit("reuse", 1)[1])), strict=True):
        data = json.loads(path.read_text())
        data["agents"]["capacity"].update(sessions=sessions, upper_sessions=sessions + 1)
        path.write_text(json.dumps(data))
    return root


@pytest.fixture(scope="session")
def agents_site(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("agents")
    root = near_capacities(scratch / "recipes")
    yield from _built_and_served(scratch / "site", roots=[root, EXAMPLES])


@pytest.mark.parametrize("width", [1400, 375])
@pytest.mark.parametrize("recipe", ["tiny-cpu-agents", NEAR])
def test_capacity_labels_never_overlap_and_no_figure_wraps(browser, agents_site, recipe, width):
    with _opener(browser, agents_site) as go:
        page = go(f"examples/{recipe}/", width=width)
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTEFACTS / f"{recipe}-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
        chart = page.locator("h2#agents ~ figure div.rc-chart")
        chart.scroll_into_view_if_needed()
        labels, problems = chart.evaluate(OVERLAPS)
        assert labels >= (3 if recipe == NEAR else 1) and problems == [], (labels, problems)
        section = page.locator("article.md-content__inner")
        cells, wrapped = section.evaluate(WRAPPED)
        assert cells > 20 and wrapped == [], wrapped
