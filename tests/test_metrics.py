"""The metric table and when a one-second peak is published."""

from __future__ import annotations

from catalogue.benchmark import LevelResult
from catalogue.metrics import BY_NAME, METRICS, metric_value, peak_withheld, published_peak


def test_one_entry_per_metric_and_recipe_metrics_are_known():
    from typing import get_args

    from catalogue.recipe import Metric

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
