"""Like-for-like comparisons: runs grouped by workload, throughput per node, winners only within a group.

Two recipes' figures are put against each other (deltas, a winner) only when their newest runs
measured the same workload (catalogue.models.workload.Workload.key); a run that stopped part-way stands for its
recipe only while no complete run of that workload exists (catalogue.site.view.headline_run). Throughput is
a sum over servers, so set-ups with different node counts are ranked by throughput per node, with the raw
figure beside it; latency is ranked only among set-ups with the same node count.

Capacity (the highest request rate that met a latency objective, from a run's capacity search) is ranked only
among runs of the same workload under the same objective (`Slo.key`), per node when node counts differ. A search
pins a capacity to a bracket, not a point, so a winner is named only when its capacity is above the top of every
other bracket; capacities whose brackets overlap are not told apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from catalogue.models.benchmark import BenchmarkRun, Capacity, LevelResult
from catalogue.models.loading import Entry
from catalogue.models.slo import Slo
from catalogue.models.workload import Workload
from catalogue.site.machine_view import throttled
from catalogue.site.view import headline_run, workloads
from catalogue.stats.metrics import BY_NAME, Metric

COMPARED = ["generation_tps", "prefill_tps", "ttft_mean_ms", "peak_tps", "output_tokens_per_j"]
"""Metrics a comparison page tables, in this order. Output tokens per joule is tabled only among the group's
members whose runs measured power (a level without it is left blank, never ranked against one with it)."""


@dataclass(frozen=True)
class Member:
    """One recipe on a comparison page, with the run it is compared by."""

    entry: Entry
    short: str
    nodes: int

    @cached_property
    def run(self) -> BenchmarkRun | None:
        """The recipe's headline run: never a run that stopped part-way while its workload has a complete one."""
        return headline_run(self.entry)

    @property
    def workload(self) -> Workload | None:
        return self.run.workload if self.run else None

    def level(self, concurrency: int) -> LevelResult | None:
        return self.run.level(concurrency) if self.run else None


@dataclass(frozen=True)
class Winner:
    """Who is best at one level: among all (per node), or among set-ups with `nodes` nodes."""

    member: int
    margin_pct: float | None
    nodes: int | None = None
    """Set for latency: the winner among set-ups of this many nodes."""


@dataclass(frozen=True)
class Row:
    """One concurrency level of a metric table."""

    concurrency: int
    values: list[float | None]
    per_node: list[float | None]
    winners: list[Winner]


@dataclass(frozen=True)
class Table:
    """One metric across a group's members."""

    metric: Metric
    rows: list[Row]
    per_node: bool
    """True when the group mixes node counts and the metric is a throughput: ranked per node."""


@dataclass(frozen=True)
class Group:
    """Recipes whose newest runs measured the same workload: compared with each other."""

    workload: Workload
    members: list[Member]
    tables: list[Table]

    @property
    def mixed_nodes(self) -> bool:
        return len({m.nodes for m in self.members}) > 1


@dataclass(frozen=True)
class Apart:
    """A recipe left out of every comparison, and why."""

    member: Member
    reason: str


def _margin(best: float, second: float) -> float | None:
    """Percent by which the best differs from the runner-up (negative for a lower latency)."""
    return (best - second) / second * 100 if second else None


def _ranked(values: list[tuple[float, int]], higher: bool) -> list[tuple[float, int]]:
    return sorted(values, key=lambda p: (-p[0] if higher else p[0], p[1]))


def metric_rows(members: list[Member], metric: Metric, per_node: bool) -> list[Row]:
    """Every concurrency any member measured, with the winner(s)."""
    levels = sorted(
        {lv.concurrency for m in members for lv in (m.run.levels if m.run else []) if metric.get(lv) is not None}
    )
    rows = []
    for c in levels:
        values: list[float | None] = []
        ranked_ok: list[bool] = []
        for m in members:
            level = m.level(c)
            raw = metric.get(level) if level is not None else None
            values.append(float(raw) if raw is not None else None)
            ranked_ok.append(level is not None and not throttled(level, m.entry.platform))
        scaled = [v / m.nodes if v is not None else None for v, m in zip(values, members)]
        winners: list[Winner] = []
        if metric.throughput:
            present = _ranked(
                [(v, i) for i, v in enumerate(scaled if per_node else values) if v is not None and ranked_ok[i]], True
            )
            if len(present) > 1:
                winners.append(Winner(present[0][1], _margin(present[0][0], present[1][0])))
        else:
            for nodes in sorted({m.nodes for m in members}):
                present = _ranked(
                    [
                        (v, i)
                        for i, v in enumerate(values)
                        if v is not None and ranked_ok[i] and members[i].nodes == nodes
                    ],
                    metric.higher_is_better,
                )
                if len(present) > 1:
                    winners.append(Winner(present[0][1], _margin(present[0][0], present[1][0]), nodes))
        rows.append(Row(c, values, scaled, winners))
    return rows


def pareto_points(member: Member) -> list[tuple[float, float]]:
    """(output tok/s per node, tok/s per user = output tok/s ÷ concurrency) per level of the member's run."""
    return run_pareto_points(member.run, member.nodes)


def run_pareto_points(run: BenchmarkRun | None, nodes: int) -> list[tuple[float, float]]:
    """(output tok/s per node, tok/s per user) per level of one run on `nodes` nodes."""
    return [
        (lv.generation_tps / nodes, lv.generation_tps / lv.concurrency)
        for lv in sorted(run.levels if run else [], key=lambda lv: lv.concurrency)
        if lv.generation_tps
    ]


def _group(workload: Workload, members: list[Member]) -> Group:
    mixed = len({m.nodes for m in members}) > 1
    tables = []
    for name in COMPARED:
        metric = BY_NAME[name]
        if sum(any(metric.get(lv) is not None for lv in m.run.levels) for m in members if m.run) < 2:
            continue
        per_node = mixed and metric.throughput
        tables.append(Table(metric, metric_rows(members, metric, per_node), per_node))
    return Group(workload, members, tables)


def _apart_reason(member: Member, groups: list[Group]) -> str:
    run, workload = member.run, member.workload
    if run is None:
        return "no benchmark run yet"
    if workload is None:
        return "its source does not say how it measured (tool, prompts, lengths)"
    if not workload.known:
        return f"its source names the tool ({workload.tool}) but not the prompts and their lengths"
    if groups:
        nearest = max(groups, key=lambda g: len(g.members)).workload
        return f"measured a different workload ({workload.describe()}): " + "; ".join(workload.differences(nearest))
    return f"no other recipe measured its workload ({workload.describe()})"


def compare(members: list[Member]) -> tuple[list[Group], list[Apart]]:
    """Groups of two or more recipes with the same workload, largest first, and the recipes left apart."""
    by_key: dict[tuple, list[Member]] = {}
    for m in members:
        if m.workload is not None and m.workload.known and m.run is not None:
            by_key.setdefault(m.workload.key, []).append(m)
    groups = [_group(ms[0].workload, ms) for ms in by_key.values() if len(ms) > 1 and ms[0].workload is not None]
    groups.sort(key=lambda g: -len(g.members))
    grouped = {id(m) for g in groups for m in g.members}
    apart = [Apart(m, _apart_reason(m, groups)) for m in members if id(m) not in grouped]
    return groups, apart


@dataclass(frozen=True)
class CapacityEntry:
    """One recipe's capacity under a workload and an objective, as the bracket its search pinned."""

    member: Member
    run: BenchmarkRun
    capacity: Capacity
    low: float
    """The highest rate that met (0 when even the lowest missed), per node when the group ranks per node."""
    high: float
    """The lowest rate above it that missed (infinite when the search never found one), scaled like `low`."""


@dataclass(frozen=True)
class CapacityGroup:
    """Recipes whose runs searched capacity under the same workload and the same objective: ranked together."""

    workload: Workload
    slo: Slo
    entries: list[CapacityEntry]
    """Highest capacity first."""
    per_node: bool
    decided: bool
    """The first entry's capacity is at or above the top of every other bracket: it is the best."""
    margin_pct: float | None
    """By how much the best's capacity exceeds the runner-up's, when decided."""
    overlapping: list[CapacityEntry]
    """When not decided: the entries whose bracket reaches above the first one's capacity."""

    @property
    def mixed_nodes(self) -> bool:
        return len({e.member.nodes for e in self.entries}) > 1

    @property
    def open_top(self) -> bool:
        """An overlapping bracket has no top: its search stopped before any rate above its capacity missed."""
        return any(math.isinf(e.high) for e in self.overlapping)


@dataclass(frozen=True)
class CapacityApart:
    """A recipe's capacity that nothing on the page is measured like: shown, not ranked."""

    member: Member
    run: BenchmarkRun
    slo: Slo
    reason: str


def _bracket(capacity: Capacity) -> tuple[float, float]:
    low = capacity.rps or 0.0
    high = capacity.upper_rps if capacity.upper_rps is not None else math.inf
    return low, high


def capacity_groups(members: list[Member]) -> tuple[list[CapacityGroup], list[CapacityApart]]:
    """Capacities grouped by (workload key, SLO key), two or more recipes per group, ranked within it; the
    capacities with no peer listed apart."""
    found: dict[tuple, list[tuple[Member, BenchmarkRun]]] = {}
    for m in members:
        for w in workloads(m.entry):
            run = w.run
            if run.capacity is None or run.slo is None or w.workload is None or not w.workload.known:
                continue
            found.setdefault((w.workload.key, run.slo.key), []).append((m, run))
    groups, apart = [], []
    for pairs in found.values():
        if len({id(m) for m, _ in pairs}) < 2:
            m, run = pairs[0]
            assert run.slo is not None
            alone = "no other recipe here searched capacity under this workload and this objective"
            apart.append(CapacityApart(m, run, run.slo, alone))
            continue
        per_node = len({m.nodes for m, _ in pairs}) > 1
        entries = []
        for m, run in pairs:
            assert run.capacity is not None
            low, high = _bracket(run.capacity)
            scale = m.nodes if per_node else 1
            entries.append(CapacityEntry(m, run, run.capacity, low / scale, high / scale))
        entries.sort(key=lambda e: (-e.low, e.member.short))
        best, rest = entries[0], entries[1:]
        overlapping = [e for e in rest if e.high > best.low]
        decided = not overlapping and best.low > 0
        second = rest[0].low
        margin = (best.low - second) / second * 100 if decided and second > 0 else None
        run = pairs[0][1]
        assert run.workload is not None and run.slo is not None
        groups.append(CapacityGroup(run.workload, run.slo, entries, per_node, decided, margin, overlapping))
    groups.sort(key=lambda g: -len(g.entries))
    return groups, apart
