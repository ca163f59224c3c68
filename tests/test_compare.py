"""Like-for-like comparisons: node counts, groups by workload, winners per node or per node count."""

from __future__ import annotations

from catalogue.models.topology import node_count
from catalogue.site.compare import Member, compare, metric_rows, pareto_points
from catalogue.stats.metrics import BY_NAME
from tests.test_site_pages import SEEDS


def members(entries, ids):
    return [Member(entries[i], i, node_count(entries[i].recipe)) for i in ids]


def test_node_count_per_topology(entries):
    assert [
        node_count(entries[i].recipe)
        for i in ("gptoss-120b-topology-solo", "gptoss-120b-topology-cluster-tp2", "gptoss-120b-topology-2x-shuffle")
    ] == [1, 2, 2]


def test_groups_only_runs_of_one_workload(entries):
    groups, apart = compare(members(entries, sorted(i for i in entries if i in SEEDS)))
    assert [sorted(m.short for m in g.members) for g in groups] == [
        [
            "gptoss-120b-topology-2x-least-busy",
            "gptoss-120b-topology-2x-shuffle",
            "gptoss-120b-topology-cluster-tp2",
            "gptoss-120b-topology-solo",
        ]
    ]
    assert sorted(a.member.short for a in apart) == [
        "gptoss-120b",
        "gptoss-120b-community-131k",
        "gptoss-120b-ngc-2509",
    ]


def test_same_node_count_is_ranked_on_raw_figures(entries):
    two = members(entries, ["gptoss-120b-topology-2x-shuffle", "gptoss-120b-topology-cluster-tp2"])
    rows = {row.concurrency: row for row in metric_rows(two, BY_NAME["generation_tps"], per_node=False)}
    assert rows[64].winners[0].member == 0 and round(rows[64].winners[0].margin_pct) == 20  # 567.9 vs 471.8
    assert rows[1].winners[0].member == 1


def test_pareto_points_are_per_node_and_per_user(entries):
    (cluster,) = members(entries, ["gptoss-120b-topology-cluster-tp2"])
    x, y = pareto_points(cluster)[0]
    assert (x, y) == (69.0 / 2, 69.0 / 1)


def _variant(entry, recipe_id: str, slo=None, workload=None, **capacity):
    """A copy of the capacity fixture under another id, its capacity (and objective, workload) changed."""
    import dataclasses

    run = entry.runs[-1]
    update = {"capacity": run.capacity.model_copy(update=capacity)}
    if slo is not None:
        update["slo"] = run.slo.model_copy(update=slo)
    if workload is not None:
        update["workload"] = run.workload.model_copy(update=workload)
    return dataclasses.replace(entry, id=recipe_id, runs=[run.model_copy(update=update)])


def test_capacity_is_ranked_only_under_the_same_workload_and_objective(capacity_entry):
    from catalogue.site.compare import capacity_groups

    fixture = capacity_entry  # 2.875 req/s met, 3.162 missed, within p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms
    lower = _variant(fixture, "lower", rps=2.0, upper_rps=2.2)
    looser = _variant(fixture, "looser", slo={"ttft": 2000.0}, rps=4.0, upper_rps=4.4)
    longer = _variant(fixture, "longer", workload={"input_len": 1024}, rps=9.0, upper_rps=9.9)
    ms = [Member(e, e.id, 1) for e in (fixture, lower, looser, longer)]
    groups, apart = capacity_groups(ms)
    assert [[e.member.short for e in g.entries] for g in groups] == [["capacity-fixture", "lower"]]
    (group,) = groups
    assert group.slo == fixture.runs[-1].slo and group.decided and round(group.margin_pct, 2) == 43.75
    assert sorted(a.member.short for a in apart) == ["longer", "looser"]  # higher figures, but not comparable


def test_capacities_whose_brackets_overlap_are_not_told_apart(capacity_entry):
    from catalogue.site.compare import capacity_groups

    close = _variant(capacity_entry, "close", rps=2.69, upper_rps=2.96)  # its top, 2.96, is above 2.875
    (group,), _ = capacity_groups([Member(capacity_entry, "a", 1), Member(close, "b", 1)])
    assert [e.member.short for e in group.entries] == ["a", "b"] and not group.decided
    assert [e.member.short for e in group.overlapping] == ["b"] and not group.open_top
    unpinned = _variant(capacity_entry, "open", rps=2.0, upper_rps=None, converged=False, stopped="budget")
    (group,), _ = capacity_groups([Member(capacity_entry, "a", 1), Member(unpinned, "b", 1)])
    assert not group.decided and group.open_top  # 2.0 met, nothing above it measured: it may be higher


def test_capacity_is_ranked_per_node_when_node_counts_differ(capacity_entry):
    from catalogue.site.compare import capacity_groups

    pair = _variant(capacity_entry, "pair", rps=5.0, upper_rps=5.5)  # 2.5 and 2.75 per node on two machines
    (group,), _ = capacity_groups([Member(pair, "pair", 2), Member(capacity_entry, "solo", 1)])
    assert group.per_node and [e.member.short for e in group.entries] == ["solo", "pair"]
    assert group.decided and [e.low for e in group.entries] == [2.875, 2.5]


def test_comparison_page_shows_the_capacity_ranking(capacity_entry):
    import html
    import re

    from catalogue.site.compare_page import render_compare

    entries = [
        _variant(capacity_entry, "capacity-fixture-a", rps=2.0, upper_rps=2.2),
        capacity_entry,
        _variant(capacity_entry, "capacity-fixture-looser", slo={"ttft": 2000.0}, rps=4.0, upper_rps=4.4),
    ]
    body = render_compare("catalogue/tiny-llama-cpu", "cpu", entries).body
    section = body.split('<h2 id="capacity">')[1]
    assert "Same workload and objective: p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms" in section
    rows = re.findall(r"<tr><td><a[^>]*>([^<]+)</a></td><td[^>]*>([^<]+)</td><td>([^<]+)</td>", section)
    assert rows == [("capacity-fixture", "2.875", "met 2.875, missed 3.162"), ("a", "2", "met 2, missed 2.2")]
    assert "<strong>capacity-fixture</strong> serves the most, 44 % more than a" in section
    not_ranked = html.unescape(section.split("Not ranked:")[1])
    assert "4 req/s within p95 TTFT ≤ 2 s and p95 TPOT ≤ 50 ms" in not_ranked
