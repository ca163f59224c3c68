"""catalogue.stats.request_samples: the steady rates of a level, requests over a limit, the early-stopping rule and the
independent share of a queued series, each against hand-computed cases."""

from __future__ import annotations

import random

import pytest

from catalogue.stats.request_samples import (
    autocorrelation_time,
    decide,
    decide_effective,
    exceedances,
    fewest_to_meet,
    independent_share,
    intervals,
    itls_ms,
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


def test_the_steady_rates_leave_out_the_first_and_last_five_percent_of_ranks():
    """21 requests: ranks 1 and 19 (of 0..20) bound the steady middle, floor(0.05 × 20) and ceil(0.95 × 20). Sent at
    0, then 10, 11, ..., 28, then 100: 18 sends over 18 s, 1 req/s (the stragglers at 0 and 100 are trimmed). The
    middle requests take 0.5 s longer each (request i ends at 9 + 1.5 i): 18 completions over 27 s, 2/3 req/s."""
    starts = [0.0, *[9.0 + i for i in range(1, 20)], 100.0]
    latencies = [0.0, *[0.5 * i for i in range(1, 20)], 0.0]
    rates = steady_rates(level(starts, latencies))
    assert rates is not None and rates.sent == pytest.approx(1.0) and rates.kept_up == pytest.approx(2 / 3)
    assert steady_rates(level(starts[:9], latencies[:9])) is None  # 9 requests: under the 10 needed
    assert steady_rates(level([5.0] * 12, [1.0] * 12)) is None  # every send at one instant: no span, no rate
    assert steady_rates({**level(starts, latencies), "latencies": latencies[:-1]}) is None  # lengths differ


def test_request_latencies_in_send_order_with_tpot_as_vllm_defines_it():
    """TTFT and E2E in ms; TPOT = (E2E − TTFT) ÷ (tokens − 1), 0 for a one-token answer; failed requests left out;
    ordered by send time; judged_only drops the first ceil(10 % × n) sends."""
    raw = {
        "start_times": [3.0, 1.0, 2.0, 0.0],
        "ttfts": [0.1, 0.2, 0.3, 0.4],
        "latencies": [1.1, 0.7, 0.3, 2.4],
        "output_lens": [11, 6, 1, 3],
        "errors": ["", "", "", "boom"],
    }
    samples = request_latencies(raw)
    assert samples is not None
    # sent order of the successful ones: index 1 (t=1), 2 (t=2), 0 (t=3)
    assert samples["ttft"] == pytest.approx([200.0, 300.0, 100.0])
    assert samples["e2el"] == pytest.approx([700.0, 300.0, 1100.0])
    assert samples["tpot"] == pytest.approx([100.0, 0.0, 100.0])  # (0.7 - 0.2) ÷ 5; one token; (1.1 - 0.1) ÷ 10
    judged = request_latencies(raw, judged_only=True)  # ceil(0.1 x 3) = 1 warm-up request dropped
    assert judged is not None and judged["ttft"] == pytest.approx([300.0, 100.0])
    assert judged_count(raw) == 2
    assert exceedances(raw, {"ttft": 150.0, "e2el": 1000.0}) == {"ttft": 1, "e2el": 1}
    assert exceedances(raw, {}) is None and request_latencies({**raw, "errors": ["x"] * 4}) is None


def test_independent_share_and_inter_token_latencies_by_hand():
    """A series of four low then four high latencies: τ = 1 + 2 (0.625 + 0.25 − 0.125) = 2.5 (lags 1..3 of 8), so
    each request carries 0.4 of an independent sample where some but not all exceed the limit. Where none does, the
    runs of the requests above the SLO's percentile count (requests that wait alike are no more independent for
    staying under the limit): at the median, the same four low then four high. The window stops the sum once the
    lag reaches window × τ: at window 0.5, after lag 2 (τ = 2.75)."""
    series = [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    assert autocorrelation_time(series) == pytest.approx(2.5)
    assert autocorrelation_time(series, window=0.5) == pytest.approx(2.75)
    assert autocorrelation_time([1.0, -1.0] * 4) == 1.0  # anticorrelated: never below one sample per request
    assert autocorrelation_time([2.0] * 8) == 1.0 and autocorrelation_time([1.0, 2.0, 3.0]) == 1.0
    # 9 requests sent in order; the first (ceil(0.9) = 1) is the warm-up; the judged 8 are the series above (ms)
    e2e = [5.0, *(x + 1.0 for x in series)]  # seconds: 1 s then 2 s
    raw = level([float(i) for i in range(9)], e2e)
    share = independent_share(raw, {"e2el": 1500.0, "ttft": 10_000.0}, 50)
    # e2el: mixed at its limit, τ of the series; ttft: none over, τ of "above the median" (the same 0 0 0 0 1 1 1 1)
    assert share is not None and share["e2el"] == pytest.approx(1 / 2.5) and share["ttft"] == pytest.approx(1 / 2.5)
    spread = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]  # the high half alternates: no runs, one sample a request
    raw = level([float(i) for i in range(9)], [5.0, *(x + 1.0 for x in spread)])
    assert independent_share(raw, {"e2el": 60_000.0}, 50) == {"e2el": 1.0}
    assert independent_share({k: v for k, v in raw.items() if k != "start_times"}, {"e2el": 1.0}, 95) is None
    assert independent_share(raw, {}, 95) is None
    itls = {"itls": [[0.01, 0.02], "bad", [0.5]], "errors": ["", "", "boom"]}
    assert itls_ms(itls) == pytest.approx([10.0, 20.0]) and itls_ms({"errors": [""]}) is None
