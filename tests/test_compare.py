"""Like-for-like comparisons: node counts, groups by workload, winners per node or per node count."""

from __future__ import annotations

from catalogue.metrics import BY_NAME
from catalogue.site.compare import Member, compare, metric_rows, pareto_points
from catalogue.topology import node_count


def members(entries, ids):
    return [Member(entries[i], i, node_count(entries[i].recipe)) for i in ids]


def test_node_count_per_topology(entries):
    assert [
        node_count(entries[i].recipe)
        for i in ("gptoss-120b-topology-solo", "gptoss-120b-topology-cluster-tp2", "gptoss-120b-topology-2x-shuffle")
    ] == [1, 2, 2]


def test_groups_only_runs_of_one_workload(entries):
    groups, apart = compare(members(entries, sorted(i for i in entries if i.startswith("gptoss-"))))
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
