"""The charts of one recipe's runs: throughput, TTFT and the Pareto view against concurrency, and each workload's
figure across runs; `points` and `pareto_series` are shared with the comparison pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catalogue.models.benchmark import BenchmarkRun, LevelResult
from catalogue.models.loading import Entry
from catalogue.models.topology import nodes_used
from catalogue.site import view
from catalogue.site.charts import Series, line_chart, pareto_chart
from catalogue.site.compare import run_pareto_points
from catalogue.site.history import main_metric
from catalogue.stats.metrics import BY_NAME


def points(
    levels: list[LevelResult], get: Callable[[LevelResult], Any], scale: float = 1.0
) -> list[tuple[float, float]]:
    return [(lv.concurrency, float(v) / scale) for lv in levels if (v := get(lv)) is not None]


def series(levels: list[LevelResult], names: list[str]) -> list[Series]:
    return [Series(BY_NAME[n].label, points(levels, BY_NAME[n].get)) for n in names]


def pareto_series(name: str, points: list[tuple[float, float]], levels: list[LevelResult]) -> Series:
    concurrencies = [lv.concurrency for lv in sorted(levels, key=lambda lv: lv.concurrency) if lv.generation_tps]
    return Series(name, points, labels={x: f"c={c}" for (x, _), c in zip(points, concurrencies)})


def recipe_charts(entry: Entry, run: BenchmarkRun | None = None, about: str = "") -> list[str]:
    """Throughput and TTFT against concurrency, and interactivity against throughput, for one run (the newest
    by default); `about` names its workload in the titles."""
    run = run if run is not None else entry.latest
    if run is None or len(run.levels) < 2:
        return []
    title = entry.recipe.title + (f" ({about})" if about else "")
    ttft = [
        Series(
            "TTFT mean",
            points(run.levels, BY_NAME["ttft_mean_ms"].get),
            spread={lv.concurrency: lv.ttft_ms.std for lv in run.levels if lv.ttft_ms and lv.ttft_ms.std},
        )
    ]
    nodes = nodes_used(entry.recipe, run)
    charts = [
        line_chart(
            f"{title}: throughput against concurrency",
            "tok/s",
            series(run.levels, ["prefill_tps", "generation_tps", "peak_tps", "total_tps"])
            if main_metric(run).name == "prefill_tps"
            else series(run.levels, ["generation_tps", "peak_tps", "total_tps"]),
        ),
        line_chart(f"{title}: time to first token against concurrency (± stdev over requests)", "ms", ttft),
        pareto_chart(
            f"{title}: tok/s per user against output tok/s per node",
            [
                pareto_series(
                    f"{nodes} node(s)" if nodes > 1 else "this recipe", run_pareto_points(run, nodes), run.levels
                )
            ],
        ),
    ]
    return [c for c in charts if c]


def history_charts(entry: Entry) -> list[str]:
    """The figure each workload measures best against concurrency, one line per run, one chart per workload with
    two or more such runs."""
    out = []
    for group in view.workloads(entry):
        runs = [run for run in group.runs[::-1] if len(run.levels) > 1]
        if len(runs) < 2:
            continue
        metric = main_metric(group.run)
        series = [
            Series(
                (run.label or run.stamp) + (" (partial)" if not run.complete else ""), points(run.levels, metric.get)
            )
            for run in runs
        ]
        out.append(
            line_chart(
                f"{entry.recipe.title}: {metric.label.lower()} across runs ({group.describe})", metric.unit, series
            )
        )
    return out


def history_chart(entry: Entry) -> str:
    """The first workload's chart of `history_charts` (kept for callers that want one)."""
    charts = history_charts(entry)
    return charts[0] if charts else ""
