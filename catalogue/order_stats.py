"""Distribution-free confidence bounds for a percentile from n samples (order statistics, binomial).

The number of samples below the true p-quantile is Binomial(n, p), so the k-th smallest sample bounds it from
above with probability P(Bin(n, p) < k). A percentile whose upper bound would need more samples than there are
cannot be bounded: its published value is the maximum (or near it) of a few requests, not a p99."""

from __future__ import annotations

from math import comb

CONFIDENCE = 0.95


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) <= k)."""
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(max(k, -1) + 1))


def rank_bounds(n: int, p: float, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (lo, hi) of the order statistics that bracket the p-quantile with `confidence` (two-sided,
    equal tails), or None when n samples cannot bound it from above."""
    tail = (1 - confidence) / 2
    hi = next((k for k in range(1, n + 1) if binom_cdf(k - 1, n, p) >= 1 - tail), None)
    if hi is None:
        return None
    lo = max((k for k in range(1, hi) if binom_cdf(k - 1, n, p) <= tail), default=1)
    return lo, hi


def fewest_samples(p: float, confidence: float = CONFIDENCE) -> int:
    """The smallest n whose samples bound the p-quantile from above: 1 - p**n >= 1 - tail."""
    n = 1
    while 1 - p**n < 1 - (1 - confidence) / 2:
        n += 1
    return n
