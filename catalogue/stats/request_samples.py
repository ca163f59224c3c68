"""What an open-loop level's per-request samples (`vllm bench serve --save-detailed`) say that its summary cannot:
whether the server kept up while requests were being sent, and how many requests missed each SLO limit.

Both are plain functions of the raw result's arrays (`start_times`, `latencies`, `ttfts`, `output_lens`, `errors`,
seconds), so the runner, `catalogue import` and the tests read them the same way.

Kept up: vLLM's `duration` runs from the first send to the last completion, so completed ÷ duration is
W ÷ (W + E2E) of the offered rate even for an idle server, and a workload whose requests take 20 s end to end looks
"saturated" at any rate when the window is 30 s. Here the rate is read in the steady middle of the level instead:
the central 90 % of completions (by rank) per second of the time they took, against the same ranks of the sends.
A server that keeps up completes as fast as requests arrive, only later; one that does not completes at its own
pace, which no longer follows the sends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from catalogue.stats.order_stats import binom_cdf, rank_bounds

TRIM = 0.05
"""Share of sends and of completions left out at each end of the level when reading its steady rate."""

WARMUP = 0.1
"""Share of a level's requests, the first sent, that the early-stopping rule does not judge: an idle server is still
filling its batch and its queue while they arrive."""

MIN_SAMPLES = 10
"""Fewest successful requests from which a steady rate is read."""

LIMIT_SAMPLE = {"ttft": "ttft", "tpot": "tpot", "e2el": "e2el"}
"""vLLM's --goodput keys, as this module names each request's latency."""


@dataclass(frozen=True)
class Rates:
    """Requests per second in the middle of a level: sent, and completed."""

    sent: float
    kept_up: float


def successful(raw: dict[str, Any]) -> list[int]:
    """Indexes of the requests that succeeded (an empty error), when the file has per-request errors."""
    errors = raw.get("errors")
    if not isinstance(errors, list):
        return []
    return [i for i, error in enumerate(errors) if not error]


def steady_rates(raw: dict[str, Any]) -> Rates | None:
    """Sends and completions per second over the same central ranks of the level; None without per-request times."""
    starts, latencies = raw.get("start_times"), raw.get("latencies")
    if not isinstance(starts, list) or not isinstance(latencies, list) or len(starts) != len(latencies):
        return None
    ok = successful(raw)
    if len(ok) < MIN_SAMPLES:
        return None
    sends = sorted(float(starts[i]) for i in ok)
    ends = sorted(float(starts[i]) + float(latencies[i]) for i in ok)
    sent, kept_up = _rate(sends), _rate(ends)
    if sent is None or kept_up is None:
        return None
    return Rates(sent, kept_up)


def _rate(times: list[float]) -> float | None:
    """Events per second between the TRIM and 1 − TRIM ranks of sorted event times."""
    lo = math.floor(TRIM * (len(times) - 1))
    hi = math.ceil((1 - TRIM) * (len(times) - 1))
    span = times[hi] - times[lo]
    return (hi - lo) / span if span > 0 else None


def request_latencies(raw: dict[str, Any], judged_only: bool = False) -> dict[str, list[float]] | None:
    """Each successful request's TTFT, TPOT and E2E latency in ms (TPOT as vLLM defines it: the time after the first
    token ÷ the tokens after it; 0 for a one-token output, as vLLM's goodput counts it), in the order the requests
    were sent when the file has their times; `judged_only`: without the warm-up (the first WARMUP share of sends,
    while an idle server fills its batch); None without samples."""
    ttfts, latencies, lens = raw.get("ttfts"), raw.get("latencies"), raw.get("output_lens")
    if not isinstance(ttfts, list) or not isinstance(latencies, list) or not isinstance(lens, list):
        return None
    ok = [i for i in successful(raw) if i < min(len(ttfts), len(latencies), len(lens))]
    starts = raw.get("start_times")
    if isinstance(starts, list) and len(starts) == len(latencies):
        ok.sort(key=lambda i: float(starts[i]))
        if judged_only:
            ok = ok[math.ceil(WARMUP * len(ok)) :]
    if not ok:
        return None
    tpot = [
        (float(latencies[i]) - float(ttfts[i])) / (int(lens[i]) - 1) * 1000 if int(lens[i]) > 1 else 0.0 for i in ok
    ]
    return {
        "ttft": [float(ttfts[i]) * 1000 for i in ok],
        "tpot": tpot,
        "e2el": [float(latencies[i]) * 1000 for i in ok],
    }


def exceedances(raw: dict[str, Any], limits: dict[str, float]) -> dict[str, int] | None:
    """{goodput key: judged requests above its limit (ms)}; None without per-request samples."""
    samples = request_latencies(raw, judged_only=True)
    if samples is None or not limits:
        return None
    return {key: sum(1 for value in samples[key] if value > limit) for key, limit in limits.items()}


def judged_count(raw: dict[str, Any]) -> int | None:
    """Requests the early-stopping rule judges: the successful ones sent after the warm-up."""
    samples = request_latencies(raw, judged_only=True)
    return len(samples["e2el"]) if samples is not None else None


def independent_share(raw: dict[str, Any], limits: dict[str, float], percentile: float) -> dict[str, float] | None:
    """{goodput key: effective sample size ÷ requests} of each judged latency, in the order requests were sent.

    Requests that queue behind the same backlog wait alike, so a level's requests are not independent samples: a
    queue near its capacity keeps a long wait for many requests in a row. The integrated autocorrelation time τ of
    the latency series (Sokal's automatic window) says how many requests carry one independent sample's worth; the
    share is 1 / τ. Where no request (or every one) crossed the limit, the runs that matter are those of the
    requests nearest it: τ of "above the level's own `percentile`-th" (its tail, in the order sent). Such a level
    once counted as independent requests: on the simulator's CI profile 5 % above its true capacity (τ ≈ 4.6), one
    5 s probe in five saw no request over a p95 TTFT limit and its 120 requests decided 'meets' at 99 %; over 20
    searches in virtual time (benchmarks/truth_virtual.py) the published interval missed the truth in 9."""
    samples = request_latencies(raw, judged_only=True)
    if samples is None or not limits or not isinstance(raw.get("start_times"), list):
        return None
    out = {}
    for key, limit in limits.items():
        values = samples[key]
        over = sum(1 for value in values if value > limit)
        if 0 < over < len(values):
            out[key] = 1 / autocorrelation_time(values)
        else:
            tail = sorted(values)[min(len(values) - 1, math.ceil(percentile / 100 * len(values)) - 1)]
            out[key] = 1 / autocorrelation_time([1.0 if value > tail else 0.0 for value in values])
    return out


def autocorrelation_time(series: list[float], window: float = 5.0) -> float:
    """τ = 1 + 2 Σ ρ_k over lags k up to the first M ≥ window × τ(M) (Sokal); 1 for a constant or short series."""
    n = len(series)
    if n < 4:
        return 1.0
    mean = sum(series) / n
    centred = [x - mean for x in series]
    var = sum(x * x for x in centred) / n
    if var <= 0:
        return 1.0
    tau = 1.0
    for lag in range(1, n // 2):
        rho = sum(centred[i] * centred[i + lag] for i in range(n - lag)) / (n * var)
        tau += 2 * rho
        if lag >= window * tau:
            break
    return min(max(tau, 1.0), float(n))


def decide_effective(n: float, over: float, percentile: int, confidence: float) -> str:
    """`decide` on effective counts (requests × independent share), rounded against each verdict: a miss is counted
    high when asking 'meets?' and low when asking 'misses?'."""
    whole = math.floor(n)
    if decide(whole, min(whole, math.ceil(over - 1e-9)), percentile, confidence) == "meets":
        return "meets"
    if decide(whole, min(whole, math.floor(over + 1e-9)), percentile, confidence) == "misses":
        return "misses"
    return "undecided"


def decide(n: int, over: int, percentile: int, confidence: float) -> str:
    """'meets', 'misses' or 'undecided': whether the `percentile`-th percentile of a latency lies within its limit,
    from `n` requests of which `over` exceeded it, at `confidence` (one-sided; MLPerf's early-stopping rule).

    At the boundary a request exceeds the limit with probability q = 1 − percentile/100, so the count above it is
    Binomial(n, q). 'meets' when so few exceeded that P(X ≤ over) ≤ 1 − confidence; 'misses' when so many did that
    P(X ≥ over) ≤ 1 − confidence; otherwise more requests are needed to tell."""
    q = 1 - percentile / 100
    alpha = 1 - confidence
    if n <= 0:
        return "undecided"
    if binom_cdf(over, n, q) <= alpha:
        return "meets"
    if over > 0 and 1 - binom_cdf(over - 1, n, q) <= alpha:
        return "misses"
    return "undecided"


def fewest_to_meet(percentile: int, confidence: float) -> int:
    """The fewest requests that can show a percentile meets its limit: all of them within it, (p/100)^n ≤ 1 − c."""
    return math.ceil(math.log(1 - confidence) / math.log(percentile / 100))


PERCENTILE_NAMES = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99}


def intervals(values: list[float]) -> dict[str, tuple[float, float]]:
    """{'p99': (lo, hi), ...}: the 95 % order-statistic interval of each percentile the samples can bound."""
    ordered = sorted(values)
    out = {}
    for name, p in PERCENTILE_NAMES.items():
        ranks = rank_bounds(len(ordered), p)
        if ranks is not None:
            lo, hi = ranks
            out[name] = (ordered[lo - 1], ordered[hi - 1])
    return out


def itls_ms(raw: dict[str, Any]) -> list[float] | None:
    """Every inter-token latency of the successful requests, ms; None without per-request data."""
    itls = raw.get("itls")
    if not isinstance(itls, list):
        return None
    ok = successful(raw)
    return [float(x) * 1000 for i in ok if i < len(itls) and isinstance(itls[i], list) for x in itls[i]]
