"""The recipe page of a refresh with the Spark Arena profile (examples/tiny-cpu's committed runs): the runner's own
workload first, each Arena depth apart with its line, and leaderboard comparisons of the same workload beside it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from catalogue.models.loading import load_entry
from catalogue.models.recipe import Comparison
from catalogue.site import launch_view, view
from catalogue.site.arena_view import arena_section
from catalogue.site.pages import render_recipe

REPO = Path(__file__).resolve().parents[1]


def tiny(comparisons: list[Comparison] | None = None):
    entry = load_entry(REPO / "examples" / "tiny-cpu")
    if comparisons is None:
        return entry
    return dataclasses.replace(entry, recipe=entry.recipe.model_copy(update={"comparisons": comparisons}))


def arena_workload(entry, depth: int):
    return next(r.workload for r in entry.runs if r.workload.profile and r.workload.context_depth == depth)


def test_the_runners_own_workload_leads_and_each_arena_depth_follows_apart():
    entry = tiny()
    groups = view.workloads(entry)
    assert [(g.workload.tool, g.workload.context_depth) for g in groups] == [
        ("vllm bench serve", 0),
        ("llama-benchy", 0),
        ("llama-benchy", 256),
    ]
    assert entry.latest.workload.profile is None and view.headline_run(entry) is entry.latest
    assert arena_section(entry, groups[0]) is None
    line = arena_section(entry, groups[1]).line
    assert line.startswith("These figures are the Spark Arena v2 profile (@official/spark-arena-v2: pp 2048, tg 128, ")
    assert (
        "Scaled down for the tiny model's 512-token context" in line and "not comparable with the leaderboard" in line
    )


def test_a_leaderboard_figure_of_the_same_workload_and_nodes_shows_beside_the_arena_section():
    entry = tiny()
    workload = arena_workload(entry, 256)
    ours = next(r for r in entry.runs if r.workload == workload).level(2).prefill_tps
    same = Comparison(source="Spark Arena: tiny", citation="https://spark-arena.com", concurrency=2,
                      metric="prefill_tps", value=1000.0, workload=workload, nodes=1)  # fmt: skip
    other_nodes = same.model_copy(update={"source": "Spark Arena: tiny on two", "nodes": 2})
    other_depth = same.model_copy(update={"source": "depth 0", "workload": arena_workload(entry, 0)})
    entry = tiny([same, other_nodes, other_depth])
    sections = {g.workload.context_depth: arena_section(entry, g) for g in view.workloads(entry)[1:]}
    [row] = sections[256].rows
    assert row.comparison.source == "Spark Arena: tiny" and row.ours == ours
    assert round(row.delta_pct, 6) == round((ours - 1000.0) / 10, 6) and row.apart is None
    assert [r.comparison.source for r in sections[0].rows] == ["depth 0"]
    body = render_recipe(entry).markdown()
    assert (
        body.count('<table class="rc-perf rc-arena-compare">') == 2
        and "Spark Arena: tiny on two" not in body.split('id="comparisons"')[0]
    )
    # the comparisons section judges each against our run of its own workload: like for like
    rows = {r.comparison.source: r for r in view.comparison_rows(entry)}
    assert rows["Spark Arena: tiny"].apart is None and rows["Spark Arena: tiny"].ours == ours


def test_a_plain_comparison_is_judged_against_the_runners_own_run_not_the_arenas():
    entry = tiny()
    plain = Comparison(source="a blog", citation="https://example.org", concurrency=1, value=100.0)
    [row] = view.comparison_rows(tiny([plain]))
    assert row.ours == entry.latest.level(1).generation_tps and "their workload is not stated" in row.apart


def test_reproduce_takes_the_runners_own_run_and_names_the_refresh_of_an_arena_run():
    import pytest

    from catalogue.models.errors import CatalogueError
    from catalogue.models.reproduce import measured_run

    entry = tiny()
    assert launch_view.reproduce_block(entry).stamp == entry.latest.stamp == measured_run(entry, None).stamp
    arena_run = next(r for r in entry.runs if r.workload.profile)
    with pytest.raises(CatalogueError, match="reproduce the refresh run it came from"):
        measured_run(entry, arena_run.stamp)
