"""catalogue.regression_rules on small windows by hand: a change's line in the report, and a drift whose steps each
stay inside the band (two bands from the oldest run, seen twice in a row)."""

from __future__ import annotations

from catalogue.metrics import BY_NAME
from catalogue.recipe import RegressionBand
from catalogue.regression_rules import Change, outside

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
