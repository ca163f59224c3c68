"""A recipe's runs over time: headline figures per run, what changed between runs, a dated trend."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue.benchmark import BenchmarkRun
from catalogue.loading import Entry
from catalogue.regression import differences, report
from catalogue.site.charts import Axis, Series, chart


@dataclass(frozen=True)
class HistoryRow:
    """One run in the history table."""

    run: BenchmarkRun
    single: float | None
    """Generation at c=1, tok/s."""
    best: float | None
    """Best generation over the levels, tok/s."""
    best_c: int | None
    changes: list[str]
    """What differs from the previous run: vLLM, image, flags, workload."""
    regressions: list[str]
    """Figures that regressed against the newest earlier run of the same workload, topology and hardware."""


def history_rows(entry: Entry) -> list[HistoryRow]:
    """Every run, newest first, with its headline figures and what changed since the run before it."""
    rows = []
    previous: BenchmarkRun | None = None
    for run in entry.runs:
        gen = [lv for lv in run.levels if lv.generation_tps is not None]
        best = max(gen, key=lambda lv: lv.generation_tps or 0.0) if gen else None
        single = run.level(1)
        rows.append(
            HistoryRow(
                run,
                single.generation_tps if single else None,
                best.generation_tps if best else None,
                best.concurrency if best else None,
                differences(previous, run) if previous else [],
                [c.line() for c in report(entry.runs, run, entry.recipe.sweep.regression).regressions],
            )
        )
        previous = run
    return rows[::-1]


def trend_chart(entry: Entry) -> str:
    """Headline figures against date, over the dated runs that measured the newest run's workload."""
    latest = entry.latest
    if latest is None or latest.workload is None:
        return ""
    same = [r for r in entry.runs if r.workload is not None and r.workload.key == latest.workload.key and r.measured_on]
    if len({r.measured_on for r in same}) < 2:
        return ""
    rows = [row for row in history_rows(entry) if row.run in same][::-1]
    day = {float(r.run.measured_on.toordinal()): r.run.measured_on.isoformat() for r in rows if r.run.measured_on}

    def points(get) -> list[tuple[float, float]]:
        return [
            (float(r.run.measured_on.toordinal()), v) for r in rows if r.run.measured_on and (v := get(r)) is not None
        ]

    series = [
        Series("c=1 generation", points(lambda r: r.single), labels=day),
        Series("best generation", points(lambda r: r.best), labels=day),
    ]
    return chart(
        f"{entry.recipe.title}: headline figures by date ({latest.workload.describe()})",
        Axis("date", dates=True),
        Axis("tok/s"),
        series,
    )
