"""The capacity search: the highest request rate whose latency percentiles meet an SLO with no failed request.

Plain functions of what was measured so far, so the runner, the tests and the bench drive the same search:
`judge` says whether one open-loop level met the objective; `start` takes the first guess and the ceiling from
the closed-loop levels of the same boot; `next_step` brackets (up or down, scaled by how far the last probe was
from its limits), then narrows the bracket with a safeguarded interpolation in log rate until its ends are
within the tolerance; `result` states the capacity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from catalogue.benchmark import Capacity, Figures, LevelResult, RateLevel, Stats
from catalogue.slo import LIMIT_LABELS, STATS_FIELD, Slo

SATURATED = 0.9
"""A level whose achieved rate is below this share of the offered rate saturated the server."""

SATURATED_STEP = 0.75
"""Below a saturated rate, the next probe is this share of what the server kept up with."""

CLOSED_LOOP_SHARE = 0.8
"""The first guess is this share of the best closed-loop request rate within the SLO: arrivals at random instants
queue where a closed loop's streams never do, so an open loop meets the same limits at a lower rate."""

LOWEST_SHARE = 1 / 100
"""The search goes no lower than this share of its first guess before it says even the lowest rate misses."""

FLAT = 1.25
"""The two lowest missing rates (at least 2x apart by construction) whose worst latency ratios are this close: a
lighter load no longer helps, so the limit is below the latency of a lightly loaded server."""


@dataclass(frozen=True)
class Verdict:
    """One level against the objective."""

    meets: bool
    why: str
    """'meets', or what missed: 'p95 TTFT 2,310 ms > 2,000 ms', 'saturated: …', '3 requests failed'."""
    margin: float | None = None
    """Worst percentile ÷ its limit (≤ 1 meets); None when a latency is missing."""
    outright: bool = False
    """Nothing completed: the rate failed outright."""
    saturated: bool = False
    achieved: float | None = None
    """The rate the server kept up with, when it saturated."""


@dataclass(frozen=True)
class Point:
    """A measured rate and its verdict."""

    rate: float
    verdict: Verdict
    probe: bool = True


@dataclass(frozen=True)
class Step:
    """What the search does next: probe `rate`, or stop (`rate` None) and say why (`stopped` None: converged)."""

    rate: float | None
    stopped: str | None = None


def percentile(stats: Stats | None, pct: int) -> float | None:
    """The `pct` percentile of a latency distribution, when recorded (p50 falls back to the median field)."""
    if stats is None:
        return None
    return getattr(stats, f"p{pct}")


def latency_margin(level: Figures, slo: Slo) -> tuple[float | None, str]:
    """(worst percentile ÷ limit, the worst limit in words)."""
    worst, words = None, ""
    for key, limit in slo.limits.items():
        value = percentile(getattr(level, STATS_FIELD[key]), slo.percentile)
        if value is None:
            return None, f"p{slo.percentile} {LIMIT_LABELS[key]} not recorded"
        ratio = value / limit
        if worst is None or ratio > worst:
            sign = "≤" if ratio <= 1 else ">"
            label = f"p{slo.percentile} {LIMIT_LABELS[key]}"
            worst, words = ratio, f"{label} {_ms(value)} ms {sign} {_ms(limit)} ms"
    return worst, words


def judge(level: RateLevel, slo: Slo) -> Verdict:
    """Whether an open-loop level met the objective: no failed request, not saturated, every percentile in limit."""
    if not level.completed:
        return Verdict(False, "no request completed", outright=True)
    margin, words = latency_margin(level, slo)
    if level.failed:
        return Verdict(False, f"{level.failed} of {level.failed + level.completed} requests failed", margin)
    if level.offered_rps and level.achieved_rps is not None and level.achieved_rps < SATURATED * level.offered_rps:
        return Verdict(
            False,
            f"saturated: achieved {level.achieved_rps:.3g} of {level.offered_rps:.3g} req/s offered",
            margin,
            saturated=True,
            achieved=level.achieved_rps,
        )
    if margin is None:
        return Verdict(False, words)
    return Verdict(margin <= 1, "meets" if margin <= 1 else words, margin)


def start(levels: Sequence[LevelResult], slo: Slo) -> tuple[float, float | None]:
    """(first guess, ceiling) from closed-loop levels: the best request rate of a level within the limits, and the
    best request rate of any level (an open loop serves no more than the busiest closed loop did)."""
    rates = [(lv.request_rate, lv) for lv in levels if lv.request_rate and lv.prompt_tokens is None]
    if not rates:
        return 1.0, None
    ceiling = max(rate for rate, _ in rates)
    within = [rate for rate, lv in rates if (m := latency_margin(lv, slo)[0]) is not None and m <= 1]
    return (CLOSED_LOOP_SHARE * max(within) if within else ceiling / 4), ceiling


def bracket(points: Sequence[Point]) -> tuple[Point | None, Point | None]:
    """(highest rate that met, lowest rate above it that missed)."""
    missed = [p for p in points if not p.verdict.meets]
    hi = min(missed, key=lambda p: p.rate, default=None)
    met = [p for p in points if p.verdict.meets and (hi is None or p.rate < hi.rate)]
    return max(met, key=lambda p: p.rate, default=None), hi


def next_step(points: Sequence[Point], first: float, ceiling: float | None, tolerance: float) -> Step:
    """The next rate to probe, or why to stop."""
    outright = [p for p in points if p.verdict.outright]
    if outright:
        return Step(None, f"{outright[0].rate:g} req/s failed outright ({outright[0].verdict.why})")
    lo, hi = bracket(points)
    if lo is None and hi is None:
        return Step(_round(first))
    if lo is not None and hi is not None:
        ratio = hi.rate / lo.rate
        if ratio <= (1 + tolerance) * 1.001:
            return Step(None)
        estimate = knee(lo, hi) or lo.rate * math.sqrt(ratio)
        if estimate <= lo.rate * (1 + tolerance):
            rate = lo.rate * (1 + tolerance)  # a miss there closes the bracket
        elif estimate >= hi.rate / (1 + tolerance):
            rate = hi.rate / (1 + tolerance)  # a pass there closes it
        else:
            rate = estimate / (1 + tolerance / 4)  # just below the knee: a pass, then one step up closes it
        return Step(_round(rate))
    if hi is None:
        assert lo is not None
        met = sorted((p for p in points if p.verdict.meets), key=lambda p: p.rate)
        margin = lo.verdict.margin or 0.5
        upward = knee(met[-2], lo) if len(met) >= 2 else None
        rate = upward or lo.rate / max(margin, 1e-9)
        rate = min(2.0 * lo.rate, max((1 + 2 * tolerance) * lo.rate, rate))
        if ceiling and lo.rate < ceiling:
            rate = min(rate, ceiling * 1.1)
        return Step(_round(rate))
    assert hi is not None
    missing = sorted((p for p in points if not p.verdict.meets), key=lambda p: p.rate)
    if len(missing) >= 2 and all(p.verdict.margin for p in missing[:2]) and not missing[0].verdict.saturated:
        lower, upper = missing[0].verdict.margin or 0, missing[1].verdict.margin or 0
        if lower > 1 and upper / lower < FLAT:
            return Step(None, _lowest(missing[0], "the limit is below this recipe's latency even at low load"))
    factor = 0.5
    if hi.verdict.margin and not hi.verdict.saturated and hi.verdict.margin > 1:
        factor = min(0.8, max(0.25, 1 / hi.verdict.margin))
    elif hi.verdict.saturated:
        factor = max(0.25, SATURATED_STEP * (hi.verdict.achieved or 0) / hi.rate)
    rate = hi.rate * factor
    if rate < first * LOWEST_SHARE:
        return Step(None, _lowest(hi, f"nothing down to {hi.rate:g} req/s met it"))
    return Step(_round(rate))


def knee(a: Point, b: Point) -> float | None:
    """Where the worst latency reaches its limit, on the line through two points in (rate, limit ÷ latency).

    A server as a single queue has latency ∝ 1 / (1 − rate / capacity), so limit ÷ latency falls linearly with the
    rate and crosses 1 at the SLO's capacity; None when the two points do not show that fall (or saturated)."""
    if not (a.verdict.margin and b.verdict.margin) or a.verdict.saturated or b.verdict.saturated:
        return None
    if math.isclose(a.rate, b.rate):
        return None
    slope = (1 / b.verdict.margin - 1 / a.verdict.margin) / (b.rate - a.rate)
    if slope >= 0:
        return None
    estimate = a.rate + (1 - 1 / a.verdict.margin) / slope
    return estimate if estimate > 0 else None


def result(
    points: Sequence[Point],
    levels_by_rate: dict[float, RateLevel],
    tolerance: float,
    stopped: str | None,
    search_s: float | None,
) -> Capacity:
    """The capacity the points pin: the highest rate that met, the bracket, and requests in flight there."""
    lo, hi = bracket(points)
    converged = lo is not None and hi is not None and hi.rate / lo.rate <= (1 + tolerance) * 1.001
    in_flight = None
    if lo is not None:
        level = levels_by_rate.get(lo.rate)
        mean_e2e = level.e2e_ms.mean if level and level.e2e_ms else None
        achieved = level.achieved_rps if level else None
        if mean_e2e is not None:
            in_flight = round((achieved or lo.rate) * mean_e2e / 1000, 2)
    return Capacity(
        rps=lo.rate if lo else None,
        upper_rps=hi.rate if hi else None,
        tolerance=tolerance,
        converged=converged,
        stopped=stopped if not converged else None,
        probes=sum(1 for p in points if p.probe),
        search_s=round(search_s, 1) if search_s is not None else None,
        concurrent_requests=in_flight,
    )


def _lowest(point: Point, why: str) -> str:
    return f"even the lowest rate probed, {point.rate:g} req/s, misses the SLO ({point.verdict.why}): {why}"


def _ms(value: float) -> str:
    """Whole milliseconds with thousands separators; three significant figures below 10 ms."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"


def _round(rate: float) -> float:
    """Four significant figures: readable in a command line and a table."""
    return float(f"{rate:.4g}")
