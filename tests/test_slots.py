"""Lifting heavy HTML out of Markdown and splicing it back gives the same blocks."""

from catalogue.site.pages import build_pages
from catalogue.site.slots import lift, splice


def test_lift_then_splice_restores_every_block(entries):
    page = build_pages(list(entries.values()))["recipes/gptoss-120b.md"]
    lifted, blocks = lift(page)
    assert len(blocks) == 3 and "<svg" not in lifted and "<table" not in lifted
    assert splice(lifted, blocks) == page
