"""The Agents section, the index's Agent sessions column and api/v1's `agents`, from run files the runner's step
wrote (a stand-in AIPerf, tests/test_runner_agents_step.py), with hit-rate counters and a capacity set by hand."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from catalogue.models.loading import load_entry
from catalogue.site import api
from catalogue.site.agents_view import agents_section, capacity_text, pooled_hit_rate, ttft_chart
from catalogue.site.index_page import index_row
from catalogue.site.pages import render_recipe
from catalogue.stats.agents import SessionCapacity
from runner.measuring import agents
from tests.test_runner_agents_step import fake_aiperf, refresh

VERDICT = "undecided: p90 TTFT: 1 of 86 requests over 300 ms, worth 12 independent (more requests needed)"
"""A level's verdict as the search words it: the word, then its reasons."""


@pytest.fixture
def entry(tmp_path, monkeypatch):
    monkeypatch.setenv("CATALOGUE_AIPERF", fake_aiperf(tmp_path))
    r = refresh(tmp_path)
    agents.step_agents(r)  # type: ignore[arg-type]
    for path, (queries, hits, cap) in zip(
        sorted((r.plan.folder / "runs").glob("*.json")), ((1000, 400, 3), (1000, 900, 2)), strict=True
    ):
        data = json.loads(path.read_text())
        for level in data["agents"]["levels"]:
            level.update(prefix_queries=queries, prefix_hits=hits, verdict=VERDICT)
        data["agents"]["capacity"] = {"sessions": cap, "upper_sessions": cap + 1, "decided": [cap, None],
                                      "confidence": 0.99, "probes": 1, "converged": True}  # fmt: skip
        path.write_text(json.dumps(data))
    return load_entry(r.plan.folder)


def test_the_section_shows_each_reuse_ratio_measured_beside_intended(entry):
    section = agents_section(entry)
    assert [row.reuse for row in section.rows] == [0.0, 0.9]
    assert [row.measured for row in section.rows] == [0.4, 0.9]
    body = render_recipe(entry).body
    part = body[body.index('id="agents"') :]
    for row in section.rows:
        assert f"{row.intended * 100:.1f} %" in part and f"{row.measured * 100:.1f} %" in part
    assert "3 sessions (4 missed; decided at 99%: 3 to —)" in part
    assert part.count("<tr><td>0 %</td><td>2</td>") == 1  # every level's row
    assert 'class="rc-chart"' in part and "later turns" in part


def test_a_levels_verdict_cell_holds_its_first_word_and_its_title_the_reasons(entry):
    body = render_recipe(entry).body
    part = body[body.index('class="rc-perf rc-agents-levels"') :]
    cell = '<td title="undecided: p90 TTFT: 1 of 86 requests over 300 ms, worth 12 independent (more requests needed)">'
    assert part.count(cell + "undecided</td>") == 4  # two levels at each of two reuse ratios
    assert "worth 12 independent (more requests needed)</td>" not in part


def test_reuse_ratios_with_the_same_capacity_share_one_mark(entry):
    section = agents_section(entry)
    assert section is not None
    same = [dataclasses.replace(row, capacity=section.rows[1].capacity) for row in section.rows]
    html = ttft_chart(same, entry.runs[-1].slo)
    assert html.count('class="rc-mark"') == 1 and "capacity, reuse 0%, 90%</span>" in html
    assert ttft_chart(section.rows, entry.runs[-1].slo).count('class="rc-mark"') == 2


def test_the_index_sorts_by_the_highest_reuse_ratios_capacity_and_names_its_trace(entry):
    row = index_row(entry, None)
    assert (row["agents"], row["agents_text"]) == (2, "2")
    assert "90% shared prefix" in row["agents_title"] and "6 sessions × 2 turns" in row["agents_title"]


def test_api_carries_the_capacity_with_its_workload_key(entry):
    found = api.agents(entry)
    assert found is not None and found.capacity.sessions == 2 and found.reuse == 0.9
    assert found.workload.trace_sha256 and found.hit_rate == pytest.approx(0.9)


def test_capacity_words():
    base = {"confidence": 0.99, "probes": 0, "converged": False}
    assert capacity_text(None) == "not searched"
    assert capacity_text(SessionCapacity(sessions=None, upper_sessions=1, **base)).startswith("below 1 session")
    # one count missed, the lower ones undecided: not "even one missed"
    two = capacity_text(SessionCapacity(sessions=None, upper_sessions=2, stopped="its 2 probes ran out", **base))
    assert two == "below 2 sessions: 2 missed, no lower count met; stopped: its 2 probes ran out"
    assert capacity_text(SessionCapacity(sessions=8, stopped="ceiling", **base)).startswith(
        "8 sessions (≥: none missed"
    )


def test_pooled_hit_rate_sums_tokens_not_shares(entry):
    levels = entry.runs[0].agents.levels
    assert pooled_hit_rate(levels) == pytest.approx(sum(lv.prefix_hits for lv in levels) / 2000)
    assert pooled_hit_rate([lv.model_copy(update={"prefix_queries": None}) for lv in levels]) is None


def test_nothing_without_agent_runs(repo: Path):
    tiny = load_entry(repo / "examples" / "tiny-cpu")
    assert agents_section(tiny) is None and index_row(tiny, None)["agents"] is None


def test_runs_of_another_trace_are_never_shown_together(entry, tmp_path):
    """A run file of the same refresh whose trace differs in anything but the reuse ratio is left out of the section
    and of the index's figure; a newer refresh of another trace replaces the older one whole."""
    folder = entry.folder
    other = folder / "runs" / "20261127T060000Z-agents-reuse90.json"
    data = json.loads(other.read_text())
    data["agents"]["trace"]["think_ms"] = 500.0
    other.write_text(json.dumps(data))
    changed = load_entry(folder)
    assert [row.reuse for row in agents_section(changed).rows] == [0.0]
    assert index_row(changed, None)["agents"] == 3  # the reuse-0 run's own capacity, not the other trace's 2

    newer = folder / "runs" / "20261128T060000Z-agents-reuse0.json"
    data = json.loads((folder / "runs" / "20261127T060000Z-agents-reuse0.json").read_text())
    data["recorded_at"] = "2026-11-28T06:00:00Z"
    data["agents"]["trace"]["seed"] = 9
    newer.write_text(json.dumps(data))
    section = agents_section(load_entry(folder))
    assert [row.run.stamp for row in section.rows] == ["20261128T060000Z"] and "seed 9" in section.trace


def test_the_chart_plots_the_slos_percentile_beside_its_limit(entry):
    """The limit drawn is the SLO's p90: the lines are p90 too, whatever the p95 (it plotted p95 against a p90
    limit, so a level under its limit could be drawn above it)."""
    section = agents_section(entry)
    slo = entry.runs[-1].slo
    assert section is not None and slo is not None and slo.percentile == 90
    html = ttft_chart(section.rows, slo)
    assert "p90 TTFT per turn" in html and "p95" not in html
    louder = [
        dataclasses.replace(
            row,
            levels=[
                lv.model_copy(update={k: getattr(lv, k).model_copy(update={"p95": 99_999.0}) for k in TTFT_PARTS})
                for lv in row.levels
            ],
        )
        for row in section.rows
    ]
    assert ttft_chart(louder, slo) == html  # the p95 is not drawn
    lower = [
        dataclasses.replace(
            row,
            levels=[
                lv.model_copy(update={k: getattr(lv, k).model_copy(update={"p90": 1.0}) for k in TTFT_PARTS})
                for lv in row.levels
            ],
        )
        for row in section.rows
    ]
    assert ttft_chart(lower, slo) != html  # the p90 is


TTFT_PARTS = ("ttft_first_ms", "ttft_later_ms")
