"""benchmarks.capacity's reading of three searches: which rates each decided, and the decided verdicts that cross
between searches (hand-computed with the early-stopping rule at 99 %)."""

from __future__ import annotations

from benchmarks.capacity import contradictions, decided
from catalogue.models.benchmark import RateLevel, Stats
from catalogue.models.slo import Slo

SLO = Slo(percentile=95, ttft=400)


def rate(rps: float, judged: int, over: int) -> dict:
    """A probe as the run file keeps it: `over` of `judged` requests above the 400 ms TTFT limit."""
    p95 = 500.0 if over * 20 > judged else 300.0
    level = RateLevel(offered_rps=rps, completed=judged, judged=judged, exceed={"ttft": over}, ttft_ms=Stats(p95=p95))
    return level.model_dump(mode="json", exclude_none=True)


def test_only_decided_rates_count():
    """90 of 90 within the limit meet (0.95^90 = 0.0099); 12 of 100 over miss (P(X >= 12) = 0.0043); 1 of 100 over
    is undecided (P(X <= 1) = 0.037) and is left out, until a second probe at that rate decides it."""
    run = {"rates": [rate(10, 90, 0), rate(12, 100, 1), rate(14, 100, 12)]}
    assert decided(run, SLO) == {10: True, 14: False}
    run["rates"].append(rate(12, 100, 0))  # pooled: 1 of 200 over, P(X <= 1) = 0.0004
    assert decided(run, SLO) == {10: True, 12: True, 14: False}


def test_a_rate_met_above_one_missed_elsewhere_is_named():
    first = {"rates": [rate(10, 90, 0), rate(12, 100, 1)]}
    second = {"rates": [rate(9, 100, 12)]}  # missed below the first's decided pass
    third = {"rates": [rate(11, 100, 12)]}  # missed above it, below the first's undecided rate: no contradiction
    assert contradictions([first, second, third], SLO) == ["search 1 met 10 req/s, search 2 missed 9"]
    assert contradictions([first, third], SLO) == []
