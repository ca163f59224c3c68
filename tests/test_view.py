"""catalogue.site.view: the derived figures a page states (here: the roofline share)."""

from __future__ import annotations

import dataclasses

import pytest

from catalogue.models.benchmark import Stats
from catalogue.site.view import roofline


def test_the_roofline_share_is_of_decode_speed_where_the_run_has_tpot(entries):
    """gpt-oss-120b's seed run has no TPOT: its c=1 generation is the basis, and the page says so. With a mean TPOT
    of 12.5 ms the basis is 1000 ÷ 12.5 = 80 tok/s, whatever the generation figure (which counts the first token's
    wait too)."""
    entry = entries["gptoss-120b"]
    seed = roofline(entry)
    assert seed is not None and str(seed["basis"]).startswith("generation, which includes")
    run = entry.runs[-1]
    levels = [lv.model_copy(update={"tpot_ms": Stats(mean=12.5)}) if lv.concurrency == 1 else lv for lv in run.levels]
    timed = dataclasses.replace(entry, runs=[*entry.runs[:-1], run.model_copy(update={"levels": levels})])
    found = roofline(timed)
    assert found is not None and found["basis"] == "decode speed (1000 ÷ mean TPOT)"
    assert found["measured"] == pytest.approx(80.0)
    assert found["share"] == pytest.approx(80.0 / float(found["ceiling"]) * 100)
