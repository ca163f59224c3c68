"""The one table of figures a level can have: name, label, unit, which way is better, how to read it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from catalogue.models.benchmark import LevelResult
from catalogue.stats.order_stats import fewest_samples


@dataclass(frozen=True)
class Metric:
    """One figure of a level."""

    name: str
    """Key used in recipes (`comparisons[].metric`) and anchors."""
    label: str
    """Column header without the unit, e.g. 'Generation'."""
    unit: str
    """'tok/s', 'ms' or '' for counts."""
    higher_is_better: bool
    """Direction of 'better' (throughput up, latency down)."""
    throughput: bool
    """A rate summed over the servers, so it is divided by the node count when set-ups are compared."""
    get: Callable[[LevelResult], float | int | None]
    """How to read it from a level."""
    spread: Callable[[LevelResult], float | None] | None = None
    """Its standard deviation in the same unit, when the run gives one (shown as ±)."""
    interval: Callable[[LevelResult], tuple[float, float, int] | None] | None = None
    """A percentile's 95 % interval and the samples it rests on (lo, hi, n), when the run kept per-request data."""

    @property
    def header(self) -> str:
        """'Generation (tok/s)'."""
        return f"{self.label} ({self.unit})" if self.unit else self.label


MIN_PEAK_WINDOW_S = 10.0
"""A one-second peak means something only over a window of several whole seconds."""


def peak_withheld(level: LevelResult) -> str | None:
    """Why a level's one-second peak is not published, or None when it is."""
    if level.peak_tps is None:
        return None
    if level.duration_s is not None and level.duration_s < MIN_PEAK_WINDOW_S:
        return f"the level ran under the {MIN_PEAK_WINDOW_S:g} s a one-second peak needs"
    if level.generation_tps is not None and level.peak_tps < level.generation_tps:
        return "it came out below the mean rate, which a peak cannot be"
    return None


def published_peak(level: LevelResult) -> float | None:
    """The peak, unless withheld (the run file keeps it either way)."""
    return None if peak_withheld(level) else level.peak_tps


def p99_withheld(level: LevelResult) -> str | None:
    """Why a level's p99 is not published (too few requests to bound it at 95 %), or None when it is."""
    n, needed = level.completed, fewest_samples(0.99)
    if level.ttft_ms is None or level.ttft_ms.p99 is None or n is None or n >= needed:
        return None
    return f"a p99 of {n} requests is their largest values, not a bounded percentile (95 %: {needed}+ requests)"


def published_p99(level: LevelResult) -> float | None:
    """The TTFT p99, unless too few requests bound it (the run file keeps it either way)."""
    return None if p99_withheld(level) or level.ttft_ms is None else level.ttft_ms.p99


def p99_interval(level: LevelResult) -> tuple[float, float, int] | None:
    """The published TTFT p99's 95 % order-statistic interval and its n, when the run kept per-request data."""
    stats = level.ttft_ms
    if published_p99(level) is None or stats is None or not stats.ci or "p99" not in stats.ci or stats.n is None:
        return None
    lo, hi = stats.ci["p99"]
    return lo, hi, stats.n


def tokens_per_joule(level: LevelResult) -> float | None:
    """Output tokens per joule of GPU energy over the level's window; None unless its power was measured."""
    return level.machine.output_tokens_per_j if level.machine is not None else None


def _stat(name: str, field: str) -> Callable[[LevelResult], float | None]:
    def read(level: LevelResult) -> float | None:
        stats = getattr(level, name)
        return getattr(stats, field) if stats is not None else None

    return read


METRICS: list[Metric] = [
    Metric("prefill_tps", "Prefill", "tok/s", True, True, lambda lv: lv.prefill_tps, lambda lv: lv.prefill_std),
    Metric(
        "generation_tps", "Generation", "tok/s", True, True, lambda lv: lv.generation_tps, lambda lv: lv.generation_std
    ),
    Metric(
        "peak_tps", "Peak", "tok/s", True, True, published_peak, lambda lv: lv.peak_std if published_peak(lv) else None
    ),
    Metric("total_tps", "Total", "tok/s", True, True, lambda lv: lv.total_tps),
    Metric("output_tokens_per_j", "Output per joule", "tok/J", True, False, lambda lv: tokens_per_joule(lv)),
    Metric("ttft_mean_ms", "TTFT mean", "ms", False, False, _stat("ttft_ms", "mean"), _stat("ttft_ms", "std")),
    Metric("ttft_p99_ms", "TTFT p99", "ms", False, False, published_p99, interval=p99_interval),
    Metric("itl_mean_ms", "ITL mean", "ms", False, False, _stat("itl_ms", "mean"), _stat("itl_ms", "std")),
    Metric("e2e_mean_ms", "E2E mean", "ms", False, False, _stat("e2e_ms", "mean"), _stat("e2e_ms", "std")),
    Metric("completed", "Completed", "", True, False, lambda lv: lv.completed),
    Metric("failed", "Failed", "", False, False, lambda lv: lv.failed),
    Metric("stdev", "Stdev", "", False, False, lambda lv: lv.stdev),
]
BY_NAME = {m.name: m for m in METRICS}

ENGINE_CLOCK: list[Metric] = [
    Metric("engine_ttft_ms", "TTFT mean, engine's clock", "ms", False, False, lambda lv: _engine(lv, "ttft_ms")),
    Metric("engine_tpot_ms", "TPOT mean, engine's clock", "ms", False, False, lambda lv: _engine(lv, "tpot_ms")),
]
"""The server's own mean latencies over a level (catalogue.stats.engine_timing), read from vLLM's /metrics: what the
regression check judges a level on when its tokens reached the client in bursts. Not on pages: a client figure is
what a user waits for."""


def _engine(level: LevelResult, field: str) -> float | None:
    return getattr(level.engine, field) if level.engine is not None else None


def metric_value(level: LevelResult, name: str) -> float | None:
    """A level's figure by metric name, as a float."""
    value = BY_NAME[name].get(level)
    return float(value) if value is not None else None
