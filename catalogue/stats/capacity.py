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

from catalogue.models.benchmark import Capacity, LevelResult, RateLevel
from catalogue.models.slo import Slo
from catalogue.stats.capacity_verdict import CONFIDENCE, Verdict, judge, judge_pooled, latency_margin
from catalogue.stats.probe_size import probe_requests

__all__ = [
    "CONFIDENCE",
    "Point",
    "Step",
    "Verdict",
    "bracket",
    "judge",
    "judge_pooled",
    "next_step",
    "probe_requests",
    "result",
    "start",
]

SATURATED_STEP = 0.75
"""Below a saturated rate, the next probe is this share of what the server kept up with."""

CLOSED_LOOP_SHARE = 0.8
"""The first guess is this share of the best closed-loop request rate within the SLO: arrivals at random instants
queue where a closed loop's streams never do, so an open loop meets the same limits at a lower rate."""

LOWEST_SHARE = 1 / 100
"""The search goes no lower than this share of its first guess before it says even the lowest rate misses."""

FLAT = 1.25
"""The two lowest missing rates (at least FLAT_SPAN apart) whose worst latency ratios are this close: a lighter load
no longer helps, so the limit is below the latency of a lightly loaded server."""

FLAT_SPAN = 2.0
"""How far apart (rate ratio) the two lowest misses must be before their likeness says 'flat'."""

MAX_TRIES = 3
"""Probes at one rate before a verdict still undecided counts as a miss (not shown to meet the SLO)."""

MISS_TRIES = 2
"""Probes at a missing rate that lies below a passing one (an isolated miss: noise, or a real dip) before the
search believes it."""


@dataclass(frozen=True)
class Point:
    """A measured rate and its verdict."""

    rate: float
    verdict: Verdict
    probe: bool = True
    tries: int = 1
    """Levels measured at this rate (their requests pooled into the verdict)."""


@dataclass(frozen=True)
class Step:
    """What the search does next: probe `rate`, or stop (`rate` None) and say why (`stopped` None: converged)."""

    rate: float | None
    stopped: str | None = None


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
    """(highest rate that met, lowest rate above it that missed); a rate still undecided is neither."""
    missed = [p for p in points if not p.verdict.meets and not p.verdict.undecided]
    hi = min(missed, key=lambda p: p.rate, default=None)
    met = [p for p in points if p.verdict.meets and (hi is None or p.rate < hi.rate)]
    return max(met, key=lambda p: p.rate, default=None), hi


def next_step(points: Sequence[Point], first: float, ceiling: float | None, tolerance: float) -> Step:
    """The next rate to probe, or why to stop."""
    outright = [p for p in points if p.verdict.outright]
    if outright:
        return Step(None, f"{outright[0].rate:g} req/s failed outright ({outright[0].verdict.why})")
    again = retry(points)
    if again is not None:
        return Step(again)
    lo, hi = bracket(points)
    stuck = sorted(p.rate for p in points if p.verdict.undecided)  # retry() is done with them
    if lo is None and hi is None:
        if stuck:  # find a rate that decidedly meets below them
            return _down(stuck[0] * SATURATED_STEP, first, stuck[0])
        return Step(_round(first))
    if lo is not None and hi is not None:
        ratio = hi.rate / lo.rate
        if ratio <= (1 + tolerance) * 1.001:
            return Step(None)
        inside = [rate for rate in stuck if lo.rate < rate < hi.rate]
        if inside and inside[0] / lo.rate > (1 + tolerance) * 1.001:
            return Step(_round(math.sqrt(lo.rate * inside[0])))  # a decided pass may still lie below them
        if inside:
            return Step(None, _undecided(lo.rate, hi.rate, inside))
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
        above = [r for r in stuck if r > lo.rate]
        if above and rate <= above[-1] * (1 + tolerance):  # past what could not be decided
            rate = above[-1] * (1 + 2 * tolerance)
        return Step(_round(rate))
    assert hi is not None
    missing = sorted((p for p in points if not p.verdict.meets), key=lambda p: p.rate)
    if (
        len(missing) >= 2
        and all(p.verdict.margin for p in missing[:2])
        and not missing[0].verdict.saturated
        and missing[1].rate >= FLAT_SPAN * missing[0].rate * 0.999
    ):
        lower, upper = missing[0].verdict.margin or 0, missing[1].verdict.margin or 0
        if lower > 1 and upper / lower < FLAT:
            return Step(None, _lowest(missing[0], "the limit is below this recipe's latency even at low load"))
    factor = 0.5
    if hi.verdict.margin and not hi.verdict.saturated and hi.verdict.margin > 1:
        factor = min(0.8, max(0.25, 1 / hi.verdict.margin))
    elif hi.verdict.saturated:
        factor = max(0.25, SATURATED_STEP * (hi.verdict.achieved or 0) / hi.rate)
    rate = hi.rate * factor
    below = [r for r in stuck if r < hi.rate]
    if below and rate >= below[0] / (1 + tolerance):  # under what could not be decided
        rate = below[0] * SATURATED_STEP
    if rate < first * LOWEST_SHARE:
        return Step(None, _lowest(hi, f"nothing down to {hi.rate:g} req/s met it"))
    return Step(_round(rate))


def _down(rate: float, first: float, lowest: float) -> Step:
    """A probe lower down, unless that is below the search's floor."""
    if rate < first * LOWEST_SHARE:
        return Step(None, f"no rate down to {lowest:g} req/s could be decided to meet or miss at {CONFIDENCE:.0%}")
    return Step(_round(rate))


def _undecided(lo: float, hi: float, inside: list[float]) -> str:
    rates = ", ".join(f"{r:g}" for r in inside)
    return (
        f"the capacity lies between {lo:g} and {hi:g} req/s: at {rates} req/s the SLO could not be decided at "
        f"{CONFIDENCE:.0%} confidence in {MAX_TRIES} probes (latency varies more than a probe's window averages)"
    )


def retry(points: Sequence[Point]) -> float | None:
    """A rate to measure again, lowest first: one still undecided (more requests decide it), then a miss below a
    rate that met (one miss under a pass is as likely noise as a dip)."""
    by_rate = sorted(points, key=lambda p: p.rate)
    for p in by_rate:
        if p.verdict.undecided and p.tries < MAX_TRIES:
            return p.rate
    passed = [p.rate for p in points if p.verdict.meets]
    for p in by_rate:
        if not p.verdict.meets and p.tries < MISS_TRIES and any(rate > p.rate for rate in passed):
            return p.rate
    return None


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
    confidence: float | None = None,
    probes: int | None = None,
    sampled: bool = False,
) -> Capacity:
    """The capacity the points pin: the highest rate that met, the bracket, the interval of decided verdicts (when
    the probes were `sampled` per request), and requests in flight there (`probes`: how many the search ran, when
    points pool several at one rate)."""
    lo, hi = bracket(points)
    converged = lo is not None and hi is not None and hi.rate / lo.rate <= (1 + tolerance) * 1.001
    in_flight = None
    if lo is not None:
        level = levels_by_rate.get(lo.rate)
        mean_e2e = level.e2e_ms.mean if level and level.e2e_ms else None
        achieved = (level.kept_up_rps or level.achieved_rps) if level else None
        flight = (achieved or lo.rate) * mean_e2e / 1000 if mean_e2e is not None else None
        in_flight = round(flight, 2) if flight is not None and math.isfinite(flight) else None  # untrusted run files
    decided = decided_interval(points) if sampled else None
    return Capacity(
        rps=lo.rate if lo else None,
        upper_rps=hi.rate if hi else None,
        tolerance=tolerance,
        converged=converged,
        stopped=stopped if not converged else None,
        probes=probes if probes is not None else sum(1 for p in points if p.probe),
        search_s=round(search_s, 1) if search_s is not None else None,
        concurrent_requests=in_flight,
        confidence=confidence,
        decided_rps=decided,
    )


def decided_interval(points: Sequence[Point]) -> tuple[float | None, float | None]:
    """(highest rate decided to meet, lowest decided to miss above it): the rates settled on their percentile after
    their tries are left out, so the interval is only as narrow as the decided verdicts make it."""
    decided = [p for p in points if not p.verdict.settled and not p.verdict.undecided]
    hi = min((p.rate for p in decided if not p.verdict.meets), default=None)
    lo = max((p.rate for p in decided if p.verdict.meets and (hi is None or p.rate < hi)), default=None)
    return lo, hi


def _lowest(point: Point, why: str) -> str:
    return f"even the lowest rate probed, {point.rate:g} req/s, misses the SLO ({point.verdict.why}): {why}"


def _round(rate: float) -> float:
    """Four significant figures: readable in a command line and a table."""
    return float(f"{rate:.4g}")
