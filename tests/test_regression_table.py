"""catalogue.publish.regression_table: the pull request's table of every figure compared, with its outcome."""

from __future__ import annotations

from catalogue.models.recipe import RegressionBand
from catalogue.publish.regression_table import cell, markdown
from catalogue.stats.regression import report
from tests.test_regression import series, slower_copy


def test_every_figure_gets_one_of_four_outcomes(tmp_path, repo):
    runs = series(tmp_path, repo, [1.00, 1.03, 0.97, 1.01, 0.5])
    text = markdown("tiny-cpu-docker", report(runs, runs[-1], RegressionBand()))
    lines = text.splitlines()
    assert lines[0] == f"#### Regression check: `tiny-cpu-docker` run {runs[-1].stamp}"
    assert "| Level | Figure | Baseline | This run | Ratio | Outcome |" in lines
    rows = [line for line in lines if line.startswith("| c") and not line.startswith("| ctx")]
    generation = [line for line in rows if "| Generation |" in line]
    assert len(generation) == 3 and all("🔴 regressed" in line and "0.50x" in line for line in generation)
    assert all("within noise" in line for line in rows if "| TTFT mean |" in line)
    assert any("not enough data (a p99 of " in line and " requests is their largest" in line for line in rows)
    summary = next(line for line in lines if line.startswith("Against the median of 4 earlier runs"))
    assert "3 regressed" in summary and "within noise" in summary and "not enough data" in summary


def test_one_earlier_run_is_not_enough_for_a_small_change(tmp_path, repo):
    entry = slower_copy(tmp_path, repo, 0.75)  # outside 0.8x, inside 0.64x, against one run
    text = markdown("tiny-cpu-docker", report(entry.runs, entry.runs[-1], RegressionBand()))
    assert "🔴" not in text and text.count("not enough data (0.8x)") == 3
    assert "What differs: flags: +--max-num-seqs 1" in text


def test_no_earlier_run_and_cells_that_cannot_break_the_table(tmp_path, repo):
    entry = slower_copy(tmp_path, repo, 1.0)
    assert "nothing to compare with" in markdown("x", report(entry.runs[:1], entry.runs[0], RegressionBand()))
    assert cell("a|b\n<script>") == "a\\|b &lt;script&gt;"
