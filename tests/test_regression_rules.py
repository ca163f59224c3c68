"""catalogue.stats.regression_rules on small windows by hand: a change's line in the report, and a drift whose steps
each stay inside the band (two bands from the oldest run, seen twice in a row)."""

from __future__ import annotations

from catalogue.models.recipe import RegressionBand
from catalogue.stats.metrics import BY_NAME
from catalogue.stats.regression_rules import Change, outside

BAND = RegressionBand()  # 0.8x for throughputs, 1.2x for latencies
GEN, TTFT, COMPLETED = BY_NAME["generation_tps"], BY_NAME["ttft_mean_ms"], BY_NAME["completed"]


def test_a_change_reads_as_one_line():
    assert Change("c4", GEN, 210.5, 140.2, True, "0.8x").line() == (
        "regressed: c4 Generation: 210.5 → 140.2 tok/s (0.67x; band 0.8x)"
    )
    assert Change("c1", COMPLETED, 0.0, 12.0, False, "1.25x").line() == (
        "improved: c1 Completed: 0.0 → 12.0 (infx; band 1.25x)"  # no unit; from nothing, an infinite ratio
    )
    assert (
        Change("c2", GEN, 100.0, 130.0, False, "1.25x", confirmed=False)
        .line()
        .startswith("faster, not confirmed: c2 Generation: 100.0 → 130.0 tok/s (1.30x")
    )
    assert (
        Change("c2", TTFT, 100.0, 130.0, True, "1.2x", confirmed=False)
        .line()
        .startswith("slower, not confirmed: c2 TTFT mean: 100.0 → 130.0 ms (1.30x")
    )


def test_a_drift_two_bands_from_the_oldest_run_seen_twice_in_a_row():
    """Generation 100, 66, 63 and now 60: each within 0.8x of the window's median (66), so no single step regressed;
    but 60 and the newest earlier run (63) are both under 0.64x of the oldest (64): a drift. With the newest earlier
    run at 65 (over 64) it is one low run, not a drift. TTFT 100, 130, 145 and now 150: over 1.44x of the oldest
    (144) twice."""
    drift = outside("c1", GEN, [100.0, 66.0, 63.0], 60.0, BAND)
    assert drift == Change("c1", GEN, 100.0, 60.0, True, "drift: 0.64x of the oldest of 3 runs")
    assert outside("c1", GEN, [100.0, 66.0, 65.0], 60.0, BAND) is None
    slower = outside("c2", TTFT, [100.0, 130.0, 145.0], 150.0, BAND)
    assert slower == Change("c2", TTFT, 100.0, 150.0, True, "drift: 1.44x of the oldest of 3 runs")
    assert outside("c2", TTFT, [100.0, 130.0, 143.0], 150.0, BAND) is None
    assert outside("c1", GEN, [66.0, 63.0], 60.0, BAND) is None  # two runs: no drift to see
    assert outside("c1", GEN, [0.0, 66.0, 63.0], 60.0, BAND) is None  # an oldest run of nothing: no ratio


def test_against_one_run_a_change_within_the_squared_band_is_not_confirmed():
    """One earlier run at 100: throughput regresses under 80 (0.8x) and improves over 125 (1/0.8), confirmed beyond
    the squared band (64, 156.25); a latency regresses over 120 (1.2x), improves under 83.3 (1/1.2), confirmed beyond
    144 and 69.4."""
    assert outside("c1", GEN, [100.0], 70.0, BAND) == Change("c1", GEN, 100.0, 70.0, True, "0.8x", False)
    assert outside("c1", GEN, [100.0], 60.0, BAND) == Change("c1", GEN, 100.0, 60.0, True, "0.8x", True)
    assert outside("c1", GEN, [100.0], 130.0, BAND) == Change("c1", GEN, 100.0, 130.0, False, "1.25x", False)
    assert outside("c1", GEN, [100.0], 160.0, BAND) == Change("c1", GEN, 100.0, 160.0, False, "1.25x", True)
    assert outside("c1", GEN, [100.0], 81.0, BAND) is None and outside("c1", GEN, [100.0], 124.0, BAND) is None
    assert outside("c2", TTFT, [100.0], 130.0, BAND) == Change("c2", TTFT, 100.0, 130.0, True, "1.2x", False)
    assert outside("c2", TTFT, [100.0], 150.0, BAND) == Change("c2", TTFT, 100.0, 150.0, True, "1.2x", True)
    assert outside("c2", TTFT, [100.0], 80.0, BAND) == Change("c2", TTFT, 100.0, 80.0, False, "0.83x", False)
    assert outside("c2", TTFT, [100.0], 60.0, BAND) == Change("c2", TTFT, 100.0, 60.0, False, "0.83x", True)
    assert outside("c2", TTFT, [100.0], 119.0, BAND) is None and outside("c2", TTFT, [100.0], 84.0, BAND) is None


def test_against_three_runs_the_median_and_its_spread():
    """Runs at 100, 102 and 98: median 100, MAD 2, so 3 × 1.4826 × 2 = 8.9 of noise. 60 lies beyond it, under 0.8x of
    every run (78.4) and of the median squared (64): confirmed. 85 is within 0.8x of the lowest run: noise."""
    found = outside("c1", GEN, [100.0, 102.0, 98.0], 60.0, BAND)
    assert found == Change("c1", GEN, 100.0, 60.0, True, "0.8x of the median of 3 runs, beyond 3×MAD (8.9)")
    assert outside("c1", GEN, [100.0, 102.0, 98.0], 85.0, BAND) is None
    slower = outside("c2", TTFT, [100.0, 102.0, 98.0], 150.0, BAND)
    assert slower == Change("c2", TTFT, 100.0, 150.0, True, "1.2x of the median of 3 runs, beyond 3×MAD (8.9)")
