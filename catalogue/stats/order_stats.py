"""Distribution-free confidence bounds for a percentile from n samples (order statistics, binomial).

The number of samples below the true p-quantile is Binomial(n, p), so the k-th smallest sample bounds it from
above with probability P(Bin(n, p) < k). A percentile whose upper bound would need more samples than there are
cannot be bounded: its published value is the maximum (or near it) of a few requests, not a p99."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from itertools import islice
from math import exp, lgamma, log, log1p

CONFIDENCE = 0.95


NEGLIGIBLE = -800.0
"""A term whose logarithm is below this is under 1e-347 (0.0 as a float): the terms before the first one above it add
nothing a sum of ten million of them could show."""


def _log_pmf(i: int, n: int, log_p: float, log_q: float) -> float:
    return lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) + i * log_p + (n - i) * log_q


def first_term(n: int, p: float) -> int:
    """The first i whose P(Bin(n, p) = i) is not negligible (the terms rise to the mode, then fall): found by
    bisection, so a rule at a million requests reads the few thousand terms around the mode, not all before it."""
    if p <= 0 or p >= 1:
        return 0
    log_p, log_q = log(p), log1p(-p)
    low, high = 0, min(n, int((n + 1) * p))
    if _log_pmf(low, n, log_p, log_q) >= NEGLIGIBLE:
        return 0
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if _log_pmf(mid, n, log_p, log_q) < NEGLIGIBLE else (low, mid)
    return high


def binom_pmfs(n: int, p: float, start: int = 0) -> Iterator[float]:
    """P(Bin(n, p) = i) for i = start..n in turn, each from its logarithm (exact for any n, no huge integers), made
    only as they are read: a rule that needs k terms costs k, never n (a list of n terms was 30 GB at 1e9)."""
    if p <= 0 or p >= 1:
        yield from (1.0 if i == (0 if p <= 0 else n) else 0.0 for i in range(start, n + 1))
        return
    log_p, log_q = log(p), log1p(-p)
    for i in range(start, n + 1):
        yield exp(_log_pmf(i, n, log_p, log_q))


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) <= k)."""
    start = first_term(n, p)
    if k < start:
        return 0.0
    return min(1.0, sum(islice(binom_pmfs(n, p, start), min(k, n) - start + 1)))


def rank_bounds(n: int, p: float, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (lo, hi) of the order statistics that bracket the p-quantile with `confidence` (two-sided,
    equal tails), or None when n samples cannot bound it from above. One pass over the binomial CDF from its first
    term that is not negligible (the CDF is 0.0 before it, within the lower tail)."""
    tail = (1 - confidence) / 2
    start = min(first_term(n, p), n)
    lo, cdf = max(1, start), 0.0
    for k, mass in enumerate(islice(binom_pmfs(n, p, start), n - start), start=start + 1):
        cdf += mass  # P(Bin(n, p) <= k - 1)
        if cdf >= 1 - tail:
            return lo, k
        if cdf <= tail:
            lo = k
    return None


@cache  # asked for p99 of every level of every page: hundreds of steps each time
def fewest_samples(p: float, confidence: float = CONFIDENCE) -> int:
    """The smallest n whose samples bound the p-quantile from above: 1 - p**n >= 1 - tail."""
    n = 1
    while 1 - p**n < 1 - (1 - confidence) / 2:
        n += 1
    return n
