"""The metric table and when a one-second peak is published."""

from __future__ import annotations

from catalogue.models.benchmark import LevelResult, Stats
from catalogue.stats.metrics import (
    BY_NAME,
    METRICS,
    metric_value,
    p99_interval,
    peak_withheld,
    published_p99,
    published_peak,
)


def test_one_entry_per_metric_and_recipe_metrics_are_known():
    from typing import get_args

    from catalogue.models.recipe import Metric

    assert len(BY_NAME) == len(METRICS)
    assert set(get_args(Metric)) <= set(BY_NAME)


def test_peak_published_only_over_a_long_enough_window_and_not_below_the_mean():
    fine = LevelResult(concurrency=4, generation_tps=100, peak_tps=140, duration_s=30)
    assert peak_withheld(fine) is None and published_peak(fine) == 140
    short = LevelResult(concurrency=4, generation_tps=100, peak_tps=140, duration_s=2.5)
    assert "under the 10 s" in peak_withheld(short) and published_peak(short) is None
    below = LevelResult(concurrency=4, generation_tps=260, peak_tps=128)
    assert "below the mean" in peak_withheld(below) and metric_value(below, "peak_tps") is None
    undated = LevelResult(concurrency=4, generation_tps=100, peak_tps=140)  # imported: no window length
    assert published_peak(undated) == 140


def test_a_published_p99_carries_its_interval_and_n_when_the_run_kept_requests():
    stats = Stats(mean=50, p99=120, n=400, ci={"p99": (110.0, 135.0)})
    level = LevelResult(concurrency=4, completed=400, ttft_ms=stats)
    assert p99_interval(level) == (110.0, 135.0, 400)
    assert p99_interval(level.model_copy(update={"ttft_ms": Stats(mean=50, p99=120)})) is None  # no samples kept
    few = LevelResult(concurrency=4, completed=8, ttft_ms=Stats(p99=120, n=8, ci={}))
    assert published_p99(few) is None and p99_interval(few) is None
