"""Order-statistic bounds of a percentile, against exact binomial values."""

from __future__ import annotations

from catalogue.order_stats import binom_cdf, fewest_samples, rank_bounds


def test_binomial_cdf_exact_values():
    assert binom_cdf(0, 10, 0.5) == 0.5**10
    assert abs(binom_cdf(5, 10, 0.5) - 638 / 1024) < 1e-12
    assert binom_cdf(10, 10, 0.3) == 1.0 or abs(binom_cdf(10, 10, 0.3) - 1.0) < 1e-12


def test_a_p99_needs_368_samples_for_a_95_percent_upper_bound():
    assert fewest_samples(0.99) == 368  # ln(0.025) / ln(0.99) = 367.03
    assert 1 - 0.99**368 >= 0.975 > 1 - 0.99**367
    assert rank_bounds(8, 0.99) is None and rank_bounds(367, 0.99) is None
    lo, hi = rank_bounds(368, 0.99)
    assert hi == 368 and lo < 368


def test_the_median_of_100_samples_lies_between_ranks_40_and_61():
    lo, hi = rank_bounds(100, 0.5)
    assert (lo, hi) == (40, 61)  # the textbook 95 % interval for the median of 100 (ranks 40 and 61)
    assert binom_cdf(hi - 1, 100, 0.5) - binom_cdf(lo - 1, 100, 0.5) >= 0.95
