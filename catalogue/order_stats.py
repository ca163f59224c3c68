"""Distribution-free confidence bounds for a percentile from n samples (order statistics, binomial).

The number of samples below the true p-quantile is Binomial(n, p), so the k-th smallest sample bounds it from
above with probability P(Bin(n, p) < k). A percentile whose upper bound would need more samples than there are
cannot be bounded: its published value is the maximum (or near it) of a few requests, not a p99."""

from __future__ import annotations

from functools import cache
from math import exp, lgamma, log, log1p

CONFIDENCE = 0.95


def binom_pmfs(n: int, p: float) -> list[float]:
    """P(Bin(n, p) = i) for i = 0..n, each from its logarithm (exact for any n, no huge integers)."""
    if p <= 0 or p >= 1:
        return [1.0 if i == (0 if p <= 0 else n) else 0.0 for i in range(n + 1)]
    log_p, log_q, head = log(p), log1p(-p), lgamma(n + 1)
    return [exp(head - lgamma(i + 1) - lgamma(n - i + 1) + i * log_p + (n - i) * log_q) for i in range(n + 1)]


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) <= k)."""
    if k < 0:
        return 0.0
    return min(1.0, sum(binom_pmfs(n, p)[: min(k, n) + 1]))


def rank_bounds(n: int, p: float, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (lo, hi) of the order statistics that bracket the p-quantile with `confidence` (two-sided,
    equal tails), or None when n samples cannot bound it from above. One pass over the binomial CDF."""
    tail = (1 - confidence) / 2
    lo, cdf = 1, 0.0
    for k, mass in enumerate(binom_pmfs(n, p)[:n], start=1):
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
