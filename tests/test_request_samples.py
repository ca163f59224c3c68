"""catalogue.request_samples: the steady rates of a level, requests over a limit, the early-stopping rule and the
independent share of a queued series, each against hand-computed cases."""

from __future__ import annotations

import random

import pytest

from catalogue.request_samples import (
    autocorrelation_time,
    decide,
    decide_effective,
    exceedances,
    fewest_to_meet,
    intervals,
    judged_count,
    request_latencies,
    steady_rates,
)


def level(starts: list[float], latencies: list[float], errors: list[str] | None = None) -> dict:
    n = len(starts)
    return {
        "start_times": starts,
        "latencies": latencies,
        "ttfts": [lat / 4 for lat in latencies],
        "output_lens": [11] * n,
        "errors": errors or [""] * n,
    }


def test_a_server_that_keeps_up_completes_as_fast_as_requests_are_sent_however_long_they_take():
    """One request a second for 100 s, each taking 20 s: vLLM's completed ÷ duration reads 100 / 119 s, the
    steady middle reads 1 req/s both ways."""
    raw = level([float(i) for i in range(100)], [20.0] * 100)
    rates = steady_rates(raw)
    assert rates is not None
    assert rates.sent == pytest.approx(1.0) and rates.kept_up == pytest.approx(1.0)


def test_a_server_that_falls_behind_completes_at_its_own_pace():
    """Two requests a second sent; one a second completes (each waits for the one before it)."""
    starts = [i / 2 for i in range(200)]
    ends = [1.0 + i for i in range(200)]
    rates = steady_rates(level(starts, [e - s for s, e in zip(starts, ends)]))
    assert rates is not None
    assert rates.sent == pytest.approx(2.0) and rates.kept_up == pytest.approx(1.0)


def test_failed_requests_and_missing_samples():
    raw = level([float(i) for i in range(12)], [1.0] * 12, errors=["", "boom"] * 6)
    assert steady_rates(raw) is None  # 6 successful: too few to read a rate
    assert steady_rates({"completed": 3}) is None and request_latencies({}) is None
    samples = request_latencies(raw)
    assert samples is not None and len(samples["e2el"]) == 6


def test_requests_over_each_limit_with_tpot_as_vllm_defines_it():
    """E2E 1 s and 3 s, TTFT a quarter of it, 11 tokens: TPOT = (E2E − TTFT) ÷ 10 = 75 and 225 ms."""
    raw = level([0.0, 1.0, 2.0], [1.0, 3.0, 3.0])
    assert request_latencies(raw) == {
        "ttft": [250.0, 750.0, 750.0],
        "tpot": [75.0, 225.0, 225.0],
        "e2el": [1000.0, 3000.0, 3000.0],
    }
    # the first sent of the three is the warm-up (the first tenth, rounded up): not judged
    assert exceedances(raw, {"ttft": 500, "tpot": 225, "e2el": 999}) == {"ttft": 2, "tpot": 0, "e2el": 2}
    assert judged_count(raw) == 2


def test_the_fewest_requests_that_can_show_a_percentile_met():
    """0.95^59 = 0.0485 ≤ 0.05 < 0.95^58 = 0.0510; 0.99^299 = 0.0495 ≤ 0.05 < 0.99^298 = 0.0500."""
    assert fewest_to_meet(95, 0.95) == 59
    assert fewest_to_meet(99, 0.95) == 299
    assert fewest_to_meet(50, 0.95) == 5


@pytest.mark.parametrize(
    ("n", "over", "outcome"),
    [
        (59, 0, "meets"),  # P(X ≤ 0 | 59, 0.05) = 0.0485
        (58, 0, "undecided"),  # 0.0510
        (100, 1, "meets"),  # P(X ≤ 1 | 100, 0.05) = 0.0371
        (100, 10, "misses"),  # P(X ≥ 10 | 100, 0.05) = 0.0282
        (100, 9, "undecided"),  # P(X ≥ 9) = 0.0631
        (100, 5, "undecided"),
    ],
)
def test_the_early_stopping_rule_on_hand_computed_binomial_tails(n, over, outcome):
    assert decide(n, over, 95, 0.95) == outcome


def test_effective_counts_round_against_each_verdict():
    assert decide_effective(59.9, 0.0, 95, 0.95) == "meets"
    assert decide_effective(58.9, 0.0, 95, 0.95) == "undecided"  # 58 whole independent samples
    assert decide_effective(100.0, 0.2, 95, 0.95) == "meets"  # counted as 1 over: P(X ≤ 1) = 0.037
    assert decide_effective(100.0, 10.5, 95, 0.95) == "misses"  # counted as 10 over: P(X ≥ 10) = 0.028
    assert decide_effective(100.0, 9.9, 95, 0.95) == "undecided"  # 9 over: P(X ≥ 9) = 0.063


def test_autocorrelation_time_of_independent_and_of_queued_series():
    """Alternating values are anti-correlated (τ floors at 1); a series that holds each random value for 10 requests
    in a row (a backlog that many requests wait behind) has ρ_k = (10 − k) / 10, so τ = 1 + 2 × 4.5 = 10."""
    assert autocorrelation_time([1.0, 2.0] * 50) == 1.0
    assert autocorrelation_time([5.0] * 40) == 1.0
    rng = random.Random(1)
    blocks = [value for _ in range(200) for value in [rng.random()] * 10]
    assert 8 <= autocorrelation_time(blocks) <= 12
    independent = [rng.random() for _ in range(2000)]
    assert autocorrelation_time(independent) < 1.3


def test_the_methodology_pages_worked_examples_at_99_percent():
    """The numbers the methodology page gives for the capacity search's rule (p95, 99 % confidence)."""
    assert fewest_to_meet(95, 0.99) == 90
    assert decide(90, 0, 95, 0.99) == "meets" and decide(89, 0, 95, 0.99) == "undecided"
    assert decide(100, 1, 95, 0.99) == "undecided"
    assert decide(100, 12, 95, 0.99) == "misses" and decide(100, 11, 95, 0.99) == "undecided"


def test_each_percentile_gets_its_order_statistic_interval_or_none():
    """Ten samples bound the median by the 2nd and 9th (P(Bin(10, .5) ≤ 1) = 0.011 ≤ 0.025 < P(≤ 2) = 0.055;
    P(≤ 8) = 0.989 ≥ 0.975 > P(≤ 7) = 0.945) and no upper percentile; 400 bound the p99."""
    assert intervals([float(x) for x in range(10, 0, -1)]) == {"p50": (2.0, 9.0)}
    many = intervals([float(x) for x in range(1, 401)])
    assert set(many) == {"p50", "p90", "p95", "p99"}
    # Exact ranks for 400 samples, from P(Bin(400, p) < k) in exact fractions (the interval's ends are the k-th
    # smallest samples, and samples 1..400 are their own ranks). Lower end: the largest k with P(< k) <= 2.5 %;
    # upper end: the smallest k with P(< k) >= 97.5 %:
    #   p50: P(<180) = 0.0201, P(<181) = 0.0255; P(<220) = 0.9745, P(<221) = 0.9799  -> (180, 221)
    #   p90: P(<348) = 0.0217, P(<349) = 0.0311; P(<371) = 0.9643, P(<372) = 0.9765  -> (348, 372)
    #   p95: P(<371) = 0.0190, P(<372) = 0.0307; P(<388) = 0.9645, P(<389) = 0.9810  -> (371, 389)
    #   p99: P(<392) = 0.0208, P(<393) = 0.0502; P(<399) = 0.9095, P(<400) = 0.9820  -> (392, 400)
    assert many == {"p50": (180.0, 221.0), "p90": (348.0, 372.0), "p95": (371.0, 389.0), "p99": (392.0, 400.0)}
    # The ranks, not the values: shuffled and scaled samples give the same order statistics
    shuffled = [x * 0.5 for x in range(1, 401)]
    random.Random(7).shuffle(shuffled)
    assert intervals(shuffled)["p99"] == (196.0, 200.0) and intervals(shuffled)["p90"] == (174.0, 186.0)
