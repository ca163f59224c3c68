"""How many requests a capacity probe sends (catalogue.stats.capacity's search; runner.measuring.capacity_search sends
them).

A probe must last long enough to measure the server rather than its start: the recipe's window and minimum, and
WINDOW_E2E end-to-end latencies. A first probe at a rate sends that: a rate well over its limits is decided to miss
by a handful of requests (two of two over a p95 limit: 0.05² < 1 %), so a larger first probe only spends the
search's budget where it misses. A rate that meets needs more (a p95 at 99 %: 90 judged requests, none over the
limit), so a rate still undecided is probed again, sized from what its pooled probes saw: the share of requests
above each limit and how independent they were (a queue near capacity keeps long waits for many requests in a
row), to the size at which that share would decide, net of the next probe's warm-up, and at most `deciding` requests
or the window. Before, a retry sent "90 minus those judged", lost a tenth of it to the warm-up and a share to
autocorrelation, and a third probe was needed at most rates of the tiny CPU server's capacity bench."""

from __future__ import annotations

import math
from collections.abc import Sequence

from catalogue.models.benchmark import RateLevel
from catalogue.models.slo import OpenLoop, Slo
from catalogue.stats.capacity_verdict import CONFIDENCE, effective_counts, judged_requests
from catalogue.stats.request_samples import WARMUP, decide_effective, fewest_to_meet

WINDOW_E2E = 30
"""A probe's window is at least this many end-to-end latencies. Near capacity a queue's waits stay alike for far
longer than one request: on the queue model of tests/test_capacity_queue.py (20 s requests) 10 latencies let a
probe decide wrongly in half the searches; 30 (600 s there, MLPerf's minimum run) kept the truth inside the
published interval in 17 of 20."""

MOST_TIMES = 4
"""A retry aims at most this many times the fewest judged requests that can show the percentile met (360 for p95 at
99 %): a share of requests over the limit this close to the percentile's own is settled after the rate's tries."""


MOST_REQUESTS = 100_000
"""No probe sends more. A rate, latency or independent share read from a resumed run file, or a window from a recipe,
is untrusted: 1e308 req/s or a share of 1e-307 overflowed the count, and 1e15 req/s asked the client for 6e16
requests. 100,000 is 100 s at 1,000 req/s; the largest probe measured here sent 4,070."""


def probe_requests(
    open_loop: OpenLoop, slo: Slo, rate: float, e2e_ms: float | None, earlier: Sequence[RateLevel] = ()
) -> int:
    """Requests a probe at `rate` sends: its window (the recipe's, and WINDOW_E2E end-to-end latencies), and at a
    rate measured before (`earlier`, still undecided) enough more for the share over the limits seen so far to
    decide the pooled verdict (MLPerf's early stopping: extend while undecided), at most `deciding` requests or the
    window: where requests are so alike in a row that the count to decide runs to many windows (the queue model's),
    longer retries cost hours and kept the truth inside no more intervals; the rate's tries and the search's budget
    decide there."""
    seconds = max(open_loop.min_window_s, WINDOW_E2E * (e2e_ms or 0) / 1000)
    window = requests_count(max(open_loop.min_requests, rate * seconds))
    if not earlier:
        return window
    return max(window, min(more_to_decide(earlier, slo), deciding(slo)))


def requests_count(requests: float) -> int:
    """A count of requests to send: whole, and at most MOST_REQUESTS however large (or infinite) `requests` came out."""
    return math.ceil(min(requests, MOST_REQUESTS))


def deciding(slo: Slo) -> int:
    """Requests to send for the fewest that can show the SLO's percentile met to be judged (after the warm-up): 100
    for a p95 at 99 %."""
    return math.ceil(fewest_to_meet(slo.percentile, CONFIDENCE) / (1 - WARMUP))


def more_to_decide(levels: Sequence[RateLevel], slo: Slo) -> int:
    """Requests to send beyond `levels` (one rate's probes so far) for each limit's share over it to be decided,
    counting the warm-up and the independent share of the next probe as those of the ones before."""
    judged = sum(judged_requests(lv) for lv in levels)
    if not judged:
        return deciding(slo)
    most = MOST_TIMES * fewest_to_meet(slo.percentile, CONFIDENCE)
    more = 0.0
    for key in slo.limits:
        n_eff, over_eff = effective_counts(levels, key)
        if not n_eff or decide_effective(n_eff, over_eff, slo.percentile, CONFIDENCE) != "undecided":
            continue
        target = effective_to_decide(n_eff, over_eff, slo.percentile, most)
        more = max(more, (target - n_eff) / (n_eff / judged))  # judged requests, at the share independent so far
    return requests_count(more / (1 - WARMUP))


def effective_to_decide(n: float, over: float, percentile: int, most: int) -> int:
    """The fewest effective requests, from `n` up to `most`, at which the share over the limit seen so far
    (`over` ÷ `n`) decides meets or misses at CONFIDENCE; `most` when none does (a share at the percentile's own)."""
    share = over / n if n else 0.0
    for total in range(math.floor(n) + 1, most + 1):
        if decide_effective(total, share * total, percentile, CONFIDENCE) != "undecided":
            return total
    return max(most, math.ceil(n))
