"""A workload section of a named profile (the Spark Arena's) on the recipe page: the line that says so, and the
recipe's leaderboard figures of the same workload and node count beside ours."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue.models.arena import PROFILES
from catalogue.models.loading import Entry
from catalogue.site.view import ComparisonRow, WorkloadRuns, partial_note
from catalogue.stats.metrics import BY_NAME, metric_value


@dataclass(frozen=True)
class ArenaSection:
    """What the page adds to a profile's workload section."""

    line: str
    rows: list[ComparisonRow]
    """The recipe's comparisons with the same workload key and node count, against this section's run."""


def _values(name: str) -> str:
    found = PROFILES.get(name)
    if found is None:
        return name
    runs = f"{found.runs} run{'s' if found.runs > 1 else ''} each"
    return (
        f"@official/{name}: pp {', '.join(map(str, found.pp))}, tg {', '.join(map(str, found.tg))}, depths "
        f"{', '.join(map(str, found.depths))}, concurrency {', '.join(map(str, found.concurrency))}, {runs}"
        + (", prefix caching" if found.prefix_caching else "")
    )


def arena_section(entry: Entry, group: WorkloadRuns) -> ArenaSection | None:
    """None for a workload of no named profile."""
    workload = group.workload
    if workload is None or workload.profile is None:
        return None
    found = PROFILES.get(workload.profile)
    title = found.title if found else workload.profile
    line = (
        f"These figures are the {title} profile ({_values(workload.profile)}), the benchmark of the Spark Arena "
        "leaderboard, run with llama-benchy against this recipe's server; each depth is a workload of its own, apart "
        "from the runner's vLLM-client figures."
    )
    if workload.profile_scaling:
        line += (
            f" Scaled down for {workload.profile_scaling}: not comparable with the leaderboard's full-profile figures."
        )
    nodes = entry.recipe.hardware.nodes
    rows = []
    for comparison in entry.recipe.comparisons:
        if comparison.workload is None or comparison.workload.key != group.key:
            continue
        if (comparison.nodes or nodes) != nodes:
            continue
        level = group.run.level(comparison.concurrency)
        ours = metric_value(level, comparison.metric) if level is not None else None
        if ours is None:
            continue
        delta = (ours - comparison.value) / comparison.value * 100
        label = BY_NAME[comparison.metric].header
        rows.append(ComparisonRow(comparison, ours, delta, label, None, partial_note(group.run)))
    return ArenaSection(line, rows)
