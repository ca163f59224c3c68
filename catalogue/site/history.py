"""A recipe's runs over time: headline figures per run, what changed between runs, a dated trend per workload."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue.models.benchmark import BenchmarkRun, LevelResult
from catalogue.models.loading import Entry
from catalogue.models.workload import Workload
from catalogue.site.charts import Axis, Series, chart
from catalogue.site.view import partial_note, workloads
from catalogue.stats.metrics import BY_NAME, Metric
from catalogue.stats.regression import report
from catalogue.stats.run_differences import differences

PREFILL_HEAVY = 16
"""A workload whose prompts are this many times longer than its outputs measures prefill first."""


def main_metric(run: BenchmarkRun) -> Metric:
    """The figure a run's workload measures best: prefill for prompt-heavy workloads (or when it has no
    generation figure), else generation."""
    generation, prefill = BY_NAME["generation_tps"], BY_NAME["prefill_tps"]
    has = {m.name: any(m.get(lv) is not None for lv in run.levels) for m in (generation, prefill)}
    w = run.workload
    heavy = bool(w and w.input_len and w.output_len and w.input_len >= PREFILL_HEAVY * w.output_len)
    if has["prefill_tps"] and (heavy or not has["generation_tps"]):
        return prefill
    return generation


def best_level(run: BenchmarkRun, metric: Metric) -> LevelResult | None:
    """The level with the highest value of a throughput metric."""
    levels = [lv for lv in run.levels if metric.get(lv) is not None]
    return max(levels, key=lambda lv: float(metric.get(lv) or 0.0)) if levels else None


@dataclass(frozen=True)
class HistoryRow:
    """One run in the history table."""

    run: BenchmarkRun
    metric: Metric
    """The figure this run's workload measures best (generation, or prefill for a prompt-heavy workload)."""
    single: float | None
    """That figure at c=1."""
    best: float | None
    """That figure's best over the levels."""
    best_c: int | None
    changes: list[str]
    """What differs from the previous run: vLLM, image, flags, workload."""
    regressions: list[str]
    """Figures that regressed against the newest earlier run of the same workload, topology and hardware."""
    workload: str = "not stated"
    """Which workload the run measured, in words."""
    partial: str | None = None
    """'partial run: <why>' for a run that stopped part-way."""
    shown: bool = False
    """True for the run the page's performance section shows for its workload."""

    @property
    def label(self) -> str:
        """'Generation (tok/s)'."""
        return self.metric.header


def _value(level: LevelResult | None, metric: Metric) -> float | None:
    value = metric.get(level) if level is not None else None
    return float(value) if value is not None else None


def history_rows(entry: Entry) -> list[HistoryRow]:
    """Every run, newest first, with the figure its workload measured best and what changed since the run
    before it."""
    shown = {id(w.run) for w in workloads(entry)}
    rows = []
    previous: BenchmarkRun | None = None
    for run in entry.runs:
        metric = main_metric(run)
        best = best_level(run, metric)
        rows.append(
            HistoryRow(
                run,
                metric,
                _value(run.level(1), metric),
                _value(best, metric),
                best.concurrency if best else None,
                differences(previous, run) if previous else [],
                [c.line() for c in report(entry.runs, run, entry.recipe.sweep.regression).regressions],
                run.workload.describe() if run.workload else "not stated",
                partial_note(run),
                id(run) in shown,
            )
        )
        previous = run
    return rows[::-1]


def _trend(entry: Entry, workload: Workload, runs: list[BenchmarkRun], rows: list[HistoryRow]) -> str:
    same = [r for r in runs if r.measured_on]
    if len({r.measured_on for r in same}) < 2:
        return ""
    ids = {id(r) for r in same}
    picked = [row for row in rows if id(row.run) in ids][::-1]
    day = {float(r.run.measured_on.toordinal()): r.run.measured_on.isoformat() for r in picked if r.run.measured_on}
    name = picked[-1].metric.label.lower()

    def points(get) -> list[tuple[float, float]]:
        return [
            (float(r.run.measured_on.toordinal()), v)
            for r in picked
            if r.run.measured_on and r.metric.name == picked[-1].metric.name and (v := get(r)) is not None
        ]

    series = [
        Series(f"c=1 {name}", points(lambda r: r.single), labels=day),
        Series(f"best {name}", points(lambda r: r.best), labels=day),
    ]
    regressed = points(lambda r: r.best if r.regressions else None)
    if regressed:  # the runs the regression check flagged; the history table says what and why
        series.append(Series("regressed (see the run history)", regressed, labels=day))
    return chart(
        f"{entry.recipe.title}: headline figures by date ({workload.describe()})",
        Axis("date", dates=True),
        Axis(picked[-1].metric.unit or "value"),
        series,
    )


def trend_charts(entry: Entry) -> list[str]:
    """Headline figures against date, one chart per stated workload with two or more dated runs (never one
    tool's figure beside another's)."""
    rows = history_rows(entry)
    charts = [_trend(entry, g.workload, g.runs, rows) for g in workloads(entry) if g.workload is not None]
    return [svg for svg in charts if svg]


def trend_chart(entry: Entry) -> str:
    """The trend of the page's first workload (see `trend_charts`)."""
    groups = workloads(entry)
    if not groups or groups[0].workload is None:
        return ""
    return _trend(entry, groups[0].workload, groups[0].runs, history_rows(entry))
