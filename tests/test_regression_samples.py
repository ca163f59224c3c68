"""catalogue.stats.regression_samples at its edges, level by level: what per-request samples it reads (n from 2 up, a
std no n non-negative samples can exceed), when two p99 intervals touch, when a mean lies exactly Z standard errors
away, and which earlier run is too wide to read (SPREAD_OUTLIER × the median)."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from catalogue.models.benchmark import LevelResult, Stats
from catalogue.stats.metrics import BY_NAME
from catalogue.stats.regression_samples import within_sampling_noise

P99 = BY_NAME["ttft_p99_ms"]
MEAN = BY_NAME["ttft_mean_ms"]


def with_mean(mean: float, std: float, n: int) -> LevelResult:
    return LevelResult(concurrency=1, ttft_ms=Stats(mean=mean, std=std, n=n))


def with_p99(p99: float, lo: float, hi: float) -> LevelResult:
    return LevelResult(concurrency=1, ttft_ms=Stats(p99=p99, ci={"p99": (lo, hi)}))


def test_a_mean_exactly_z_standard_errors_away_clears_and_a_closer_one_does_not():
    """std 3 over n 9 on both sides: each standard error 1, the difference's sqrt(2) = 1.414, so Z = 3 of them is
    4.243 ms. 100 against 104.25 clears it; against 104.2 it is noise."""
    old = with_mean(100.0, 3.0, 9)
    assert within_sampling_noise(MEAN, with_mean(100 + 3 * math.sqrt(2) + 1e-9, 3.0, 9), [old]) is None
    why = within_sampling_noise(MEAN, with_mean(104.2, 3.0, 9), [old])
    assert why == "104.20 ms (n 9) lies within 3 standard errors (4.24 ms) of an earlier run's 100.00 ms (n 9)"


def test_which_samples_are_read():
    old = with_mean(100.0, 3.0, 9)
    assert within_sampling_noise(MEAN, with_mean(101.0, 3.0, 2), [old]) is not None  # two requests are a sample
    assert within_sampling_noise(MEAN, with_mean(101.0, 3.0, 1), [old]) is None  # one is not
    with pytest.raises(
        ValidationError
    ):  # no run sends 10**15: the run-file schema bounds n (catalogue.models.plausible)
        Stats(mean=101.0, std=3.0, n=10**15)
    # the largest std n non-negative samples with this mean can have is mean x sqrt(n): 101 x 3 for n = 9
    assert within_sampling_noise(MEAN, with_mean(101.0, 303.0, 9), [old]) is not None
    assert within_sampling_noise(MEAN, with_mean(101.0, 303.0 + 1e-6, 9), [old]) is None
    no_std = LevelResult(concurrency=1, ttft_ms=Stats(mean=100.0, n=9))
    assert within_sampling_noise(MEAN, no_std, [old]) is None and within_sampling_noise(MEAN, old, [no_std]) is None
    assert within_sampling_noise(MEAN, old, []) is None


def test_p99_intervals_that_touch_overlap_and_one_must_hold_its_own_p99():
    old = with_p99(40.0, 30.0, 45.0)
    touching = within_sampling_noise(P99, with_p99(50.0, 45.0, 60.0), [old])
    assert touching == "its 95 % interval [45.0–60.0] overlaps an earlier run's [30.0–45.0]"
    assert within_sampling_noise(P99, with_p99(50.0, 45.1, 60.0), [old]) is None  # clear of it
    below = within_sampling_noise(P99, with_p99(30.0, 20.0, 30.0), [old])  # touching from below, p99 at its end
    assert below == "its 95 % interval [20.0–30.0] overlaps an earlier run's [30.0–45.0]"
    assert within_sampling_noise(P99, with_p99(61.0, 45.0, 60.0), [old]) is None  # p99 outside its interval
    assert within_sampling_noise(P99, with_p99(50.0, 45.0, 60.0), [with_p99(46.0, 47.0, 50.0)]) is None


def test_an_earlier_run_four_times_wider_than_the_median_is_still_read_but_not_more():
    """Three earlier runs with standard errors 1, 1 and 4 (std 3 over n 9, twice; std 12 over n 9): 4 = SPREAD_OUTLIER
    x the median 1, so the wide one is read, and with the near run (108: 2 ms off, inside 3 x sqrt(2) = 4.24) it is
    two vetoes of three, a majority; at 4.01 x it is left out, one veto of two is no majority and the change stands."""
    near, far = with_mean(108.0, 3.0, 9), with_mean(100.0, 3.0, 9)
    new = with_mean(110.0, 3.0, 9)  # 10 ms from the far run: 7.1 standard errors
    assert within_sampling_noise(MEAN, new, [near, far, with_mean(105.0, 12.0, 9)]) is not None
    assert within_sampling_noise(MEAN, new, [near, far, with_mean(105.0, 12.03, 9)]) is None
    # two earlier runs: none is left out, but one wide run alone of two never vetoes (one run file muted every mean)
    assert within_sampling_noise(MEAN, new, [far, with_mean(105.0, 12.0, 9)]) is None
    # p99 intervals alike: widths 10, 10 and 40 (read: with the overlapping narrow one, two of three), 40.1 (left out)
    olds = [with_p99(72.0, 70.0, 80.0), with_p99(41.0, 35.0, 45.0)]
    new_p99 = with_p99(80.0, 75.0, 85.0)
    assert within_sampling_noise(P99, new_p99, [*olds, with_p99(60.0, 40.0, 80.0)]) is not None
    assert within_sampling_noise(P99, new_p99, [*olds, with_p99(60.0, 40.0, 80.1)]) is None


def test_a_mean_counts_only_its_independent_samples():
    """The closed loop at c = 64: 256 TTFTs in four rounds of 64 alike are worth 4 samples, not 256. std 40 on both
    sides: counted as 256 each the difference's standard error is 3.54 ms and 100 against 115 is a change; counted
    at a share of 1/64 (4 each) it is 28.28 ms, and 115 is within 3 of them (84.85 ms). A share of 0 is read as not
    measured."""
    old = LevelResult(concurrency=64, ttft_ms=Stats(mean=100.0, std=40.0, n=256))
    new = LevelResult(concurrency=64, ttft_ms=Stats(mean=115.0, std=40.0, n=256))
    assert within_sampling_noise(MEAN, new, [old]) is None
    alike = {"independent": 1 / 64}
    old, new = (lv.model_copy(update={"ttft_ms": lv.ttft_ms.model_copy(update=alike)}) for lv in (old, new))
    why = within_sampling_noise(MEAN, new, [old])
    assert why == "115.00 ms (n 4) lies within 3 standard errors (84.85 ms) of an earlier run's 100.00 ms (n 4)"
    zero = new.model_copy(update={"ttft_ms": new.ttft_ms.model_copy(update={"independent": 0.0})})
    assert "(n 256)" in (within_sampling_noise(MEAN, zero, [zero]) or "")


def test_a_p99_is_judged_only_from_enough_independent_requests():
    """368 samples bound a p99 at 95 %: 1,024 requests alike in rounds of 64 (share 1/22) are worth 47 and veto its
    change; the same requests counted independent leave it to the intervals."""

    def level(p99: float, lo: float, hi: float, independent: float | None) -> LevelResult:
        stats = Stats(p99=p99, ci={"p99": (lo, hi)}, n=1024, independent=independent)
        return LevelResult(concurrency=64, ttft_ms=stats)

    old, new = level(40.0, 38.0, 42.0, 1 / 22), level(60.0, 55.0, 65.0, 1 / 22)
    assert (
        within_sampling_noise(P99, new, [old])
        == "a p99 of 1024 requests worth 47 independent is not bounded (368+ needed)"
    )
    assert within_sampling_noise(P99, level(60.0, 55.0, 65.0, 1.0), [old]) is None
    assert within_sampling_noise(P99, level(60.0, 55.0, 65.0, None), [old]) is None
