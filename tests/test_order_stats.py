"""Order-statistic bounds of a percentile, against exact binomial values."""

from __future__ import annotations

import pytest

from catalogue.stats.order_stats import binom_cdf, binom_pmfs, fewest_samples, rank_bounds


def test_binomial_cdf_exact_values():
    assert binom_cdf(0, 10, 0.5) == 0.5**10
    assert abs(binom_cdf(5, 10, 0.5) - 638 / 1024) < 1e-12
    assert binom_cdf(10, 10, 0.3) == 1.0 or abs(binom_cdf(10, 10, 0.3) - 1.0) < 1e-12


def test_a_p99_needs_368_samples_for_a_95_percent_upper_bound():
    assert fewest_samples(0.99) == 368  # ln(0.025) / ln(0.99) = 367.03
    assert 1 - 0.99**368 >= 0.975 > 1 - 0.99**367
    assert rank_bounds(8, 0.99) is None and rank_bounds(367, 0.99) is None
    # The lower end, by hand: Y = samples above the true p99 ~ Bin(368, 0.01). The 360th smallest lies above the
    # p99 only if at least 9 samples do: P(Y >= 9) = 0.0128 <= 2.5 %, while P(Y >= 8) = 0.0336 > 2.5 % rules out the
    # 361st (exact binomial sums in fractions, math.comb).
    assert rank_bounds(368, 0.99) == (360, 368)


def test_upper_percentiles_of_many_samples_have_exact_ranks_at_both_ends():
    """Hand-computed with exact fractions: lower rank = the largest k with P(Bin(n, p) < k) <= 2.5 %, upper = the
    smallest k with P(Bin(n, p) < k) >= 97.5 %."""
    # n=368, p=0.95: P(<341) = 0.0193, P(<342) = 0.0317; P(<357) = 0.9581, P(<358) = 0.9777
    assert rank_bounds(368, 0.95) == (341, 358)
    # n=368, p=0.90: P(<320) = 0.0244, P(<321) = 0.0352; P(<342) = 0.9678, P(<343) = 0.9794
    assert rank_bounds(368, 0.9) == (320, 343)
    # n=100, p=0.95: P(<90) = 0.0115, P(<91) = 0.0282; P(<99) = 0.9629 < 0.975 <= P(<100) = 0.9941
    assert rank_bounds(100, 0.95) == (90, 100)
    # n=100, p=0.90: P(<84) = 0.0206, P(<85) = 0.0399; P(<95) = 0.9424, P(<96) = 0.9763
    assert rank_bounds(100, 0.9) == (84, 96)
    # n=1000, p=0.99: P(<983) = 0.0138, P(<984) = 0.0264; P(<996) = 0.9713, P(<997) = 0.9899
    assert rank_bounds(1000, 0.99) == (983, 997)
    # 59 samples cannot bound a p95 from above (1 - 0.95**59 = 0.9515 < 0.975); 72 is the fewest that can (0.9751;
    # 71: 0.9738)
    assert rank_bounds(59, 0.95) is None and fewest_samples(0.95) == 72


def test_the_median_of_100_samples_lies_between_ranks_40_and_61():
    lo, hi = rank_bounds(100, 0.5)
    assert (lo, hi) == (40, 61)  # the textbook 95 % interval for the median of 100 (ranks 40 and 61)
    assert binom_cdf(hi - 1, 100, 0.5) - binom_cdf(lo - 1, 100, 0.5) >= 0.95


def test_certain_outcomes_and_the_cdf_past_its_ends():
    """p = 0 and p = 1 have no logarithm: all the mass sits on 0 or on n. The CDF is 0 below 0, and 1 at n and past
    it, never above 1 although the summed floats can be (Bin(3, 0.5): 1 + 7e-16)."""
    assert list(binom_pmfs(3, 0.0)) == [1.0, 0.0, 0.0, 0.0] and list(binom_pmfs(3, 1.0)) == [0.0, 0.0, 0.0, 1.0]
    assert list(binom_pmfs(2, 0.5)) == pytest.approx([0.25, 0.5, 0.25])
    assert binom_cdf(-1, 10, 0.5) == 0.0
    assert sum(binom_pmfs(3, 0.5)) > 1.0 and binom_cdf(3, 3, 0.5) == 1.0 and binom_cdf(7, 3, 0.5) == 1.0


def test_a_lower_end_at_the_smallest_sample_and_the_fewest_samples_at_its_edges():
    # n=6, p=0.3: P(X=0) = 0.7**6 = 0.118 > 2.5 %, so no sample but the smallest bounds the 30th percentile from
    # below; P(X <= 3) = 0.9295 < 97.5 % <= P(X <= 4) = 0.9891: the 5th from above.
    assert rank_bounds(6, 0.3) == (1, 5)
    # One sample bounds a 1st percentile from above (1 - 0.01 = 0.99 >= 97.5 %); a median needs 6 (1 - 0.5**5 =
    # 0.969 < 0.975 <= 1 - 0.5**6 = 0.984); at 75 % confidence exactly 3 (1 - 0.5**3 = 0.875 = 1 - 0.125, in binary
    # fractions exact: the bound is met with equality)
    assert fewest_samples(0.01) == 1 and fewest_samples(0.5) == 6 and fewest_samples(0.5, 0.75) == 3
