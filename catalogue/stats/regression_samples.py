"""Is a change beyond what the runs' own requests could produce by chance? The regression check's band and spread
are run to run; these tests veto a change the per-request samples cannot tell from sampling noise, so that a level
of a handful of requests does not raise an alarm. They never flag anything on their own.

- A TTFT p99 changes only when its 95 % order-statistic interval clears most earlier runs', and only when its
  independent requests (Stats.independent × n) are enough to bound a p99 at all: the interval counts every request
  as a sample, and a closed loop's requests sent together are not (a no-change simulated refresh alarmed on a c64
  p99 of 1,024 requests in 16 rounds of 64 alike).
- A mean latency (TTFT, ITL, E2E), and the prefill rate derived from the TTFT mean, changes only when the mean lies
  more than Z standard errors from most earlier runs' means (Welch: the standard error of a difference of two means,
  each std / sqrt(n)). Z = 3 is about 99.7 % two-sided for normal means. n is the independent samples
  (Stats.independent × n) where the run measured their share: in a closed loop at c = 64 the requests sent together
  wait alike, and on the simulator two no-change refreshes out of five alarmed on c = 32 or 64 prefill when their
  256 TTFTs counted as 256 samples. Inter-token gaps within one request are not independent either and no share is
  read for them, so for ITL it is generous to the alarm.

A run file is untrusted input: the earlier runs read here are those the band rules read
(catalogue.stats.regression_rules: with three runs or more, none whose figure is far from the window's median), a
standard deviation no n non-negative samples can have (above mean × sqrt(n)) is not read, nor a p99 interval that does
not hold its p99, and with three runs or more neither is a standard error or interval width above SPREAD_OUTLIER times
the window's median one. So one broken or hostile earlier run cannot veto every change; nor can any one run of several:
the runs that veto must be at least half of those read, and more than one (`_most`)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import TypeVar

from catalogue.models.benchmark import LevelResult, Stats
from catalogue.stats.metrics import Metric
from catalogue.stats.order_stats import fewest_samples

Z = 3.0
"""Standard errors of the difference a mean must clear against every earlier run."""
T = TypeVar("T")
SPREAD_OUTLIER = 4.0
"""An earlier run whose standard error (or p99 interval) is this many times the window's median one is not read
(three runs or more)."""
MEANS = {"ttft_mean_ms": "ttft_ms", "itl_mean_ms": "itl_ms", "e2e_mean_ms": "e2e_ms", "prefill_tps": "ttft_ms"}
"""Mean latencies and the Stats they are the mean of; the prefill burst rate is c × prompt tokens ÷ the mean TTFT
(or, imported, as close to it), so it moves only as decisively as the TTFT mean does. Measured: a no-change refresh
read c2 Prefill 1,441 → 3,002 tok/s "improved" (2.08x, beyond the squared band against one run) where its TTFT mean
was within noise."""


def within_sampling_noise(metric: Metric, new: LevelResult, olds: list[LevelResult]) -> str | None:
    """Why a change of this figure is not decisive given the runs' per-request samples, or None (decisive, or no
    samples to judge by)."""
    if metric.name == "ttft_p99_ms":
        return _p99_unbounded(new) or _p99_overlap(new, olds)
    if metric.name in MEANS:
        return _means_close(MEANS[metric.name], new, olds)
    return None


def _p99_unbounded(level: LevelResult) -> str | None:
    """Why the level's TTFT p99 cannot be bounded by its independent requests, or None."""
    stats, needed = level.ttft_ms, fewest_samples(0.99)
    if stats is None or not stats.n or stats.independent is None or stats.n * stats.independent >= needed:
        return None
    worth = stats.n * stats.independent
    return f"a p99 of {stats.n} requests worth {worth:.0f} independent is not bounded ({needed}+ needed)"


def _p99_interval(level: LevelResult) -> tuple[float, float] | None:
    """The p99's interval; None without one, or with one that does not hold its own p99 (not an interval of it)."""
    stats = level.ttft_ms
    if stats is None or not stats.ci or "p99" not in stats.ci or stats.p99 is None:
        return None
    lo, hi = (float(x) for x in stats.ci["p99"])
    return (lo, hi) if lo <= stats.p99 <= hi else None


def _ordinary(items: list[T], spread: Callable[[T], float]) -> list[T]:
    """The items without one whose spread is SPREAD_OUTLIER times the others' median (three or more): a p99 interval
    of [0, 1e300], or a standard error widened by a huge std or a made-up small n, is no run's evidence."""
    if len(items) < 3:
        return items
    typical = statistics.median(spread(item) for item in items)
    return [item for item in items if spread(item) <= SPREAD_OUTLIER * typical]


def _most(close: list, read: list) -> bool:
    """Whether the earlier runs that veto are most of those read: at least half, and never one alone of several (one
    run file with a huge spread vetoed every change of the mean)."""
    return bool(close) and 2 * len(close) >= len(read) and (len(close) >= 2 or len(read) == 1)


def _p99_overlap(new: LevelResult, olds: list[LevelResult]) -> str | None:
    """Its order-statistic interval overlaps most earlier runs' (both from per-request samples); None when it clears
    them, or when a run kept no samples to bound it."""
    mine = _p99_interval(new)
    theirs = [_p99_interval(lv) for lv in olds]
    if mine is None or not theirs or any(t is None for t in theirs):
        return None
    read = _ordinary([t for t in theirs if t is not None], lambda t: t[1] - t[0])
    close = [(lo, hi) for lo, hi in read if mine[0] <= hi and lo <= mine[1]]
    if _most(close, read):
        lo, hi = close[0]
        return f"its 95 % interval [{mine[0]:,.1f}–{mine[1]:,.1f}] overlaps an earlier run's [{lo:,.1f}–{hi:,.1f}]"
    return None


def _sample(stats: Stats | None) -> tuple[float, float, float] | None:
    """(mean, std, independent samples) of a latency with per-request data; None without, or with a spread its n
    samples cannot have."""
    if stats is None or stats.mean is None or stats.std is None or not stats.n or not 2 <= stats.n < 10**15:
        return None
    mean, std, n = float(stats.mean), float(stats.std), int(stats.n)
    if std > mean * math.sqrt(n):  # the largest a std of n non-negative samples with this mean can be
        return None
    share = stats.independent if stats.independent else 1.0  # a share of 0 (a hostile file) counts as unmeasured
    return mean, std, max(1.0, n * share)


def _means_close(field: str, new: LevelResult, olds: list[LevelResult]) -> str | None:
    """The mean lies within Z standard errors of an earlier run's mean; None when it clears every one, or when a
    run kept no per-request samples (n) to judge by."""
    mine = _sample(getattr(new, field))
    theirs = [_sample(getattr(lv, field)) for lv in olds]
    if mine is None or not theirs or any(t is None for t in theirs):
        return None
    mean, std, n = mine
    read = _ordinary([t for t in theirs if t is not None], lambda t: t[1] / math.sqrt(t[2]))
    close = [
        (o_mean, o_n, error)
        for o_mean, o_std, o_n in read
        if (error := math.sqrt(std**2 / n + o_std**2 / o_n)) and abs(mean - o_mean) < Z * error
    ]
    if _most(close, read):
        o_mean, o_n, error = close[0]
        return (
            f"{mean:,.2f} ms (n {n:,.0f}) lies within {Z:g} standard errors ({Z * error:,.2f} ms) of an earlier "
            f"run's {o_mean:,.2f} ms (n {o_n:,.0f})"
        )
    return None
