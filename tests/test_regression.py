"""Regression check: each level and figure against the newest earlier run of the same workload, topology and
hardware, outside its noise band, with what differs between the two runs."""

from __future__ import annotations

import json
import shutil

from catalogue.loading import load_entry
from catalogue.recipe import RegressionBand
from catalogue.regression import baseline, report
from catalogue.site.pages import render_recipe


def slower_copy(tmp_path, repo, factor: float, **extra):
    """tiny-cpu-docker with a later run whose generation is `factor` times the measured one, one flag changed."""
    folder = tmp_path / "tiny-cpu-docker"
    shutil.copytree(repo / "examples" / "tiny-cpu-docker", folder)
    measured = next((folder / "runs").glob("*.json"))
    data = json.loads(measured.read_text())
    data["recorded_at"] = "2026-12-01T12:00:00+00:00"
    command = data["provenance"]["serve_command"]
    data["provenance"]["serve_command"] = [*command, "--max-num-seqs", "1"]
    for level in data["levels"]:
        level["generation_tps"] = level["generation_tps"] * factor
    data.update(extra)
    (folder / "runs" / "20261201T120000Z.json").write_text(json.dumps(data))
    return load_entry(folder)


def test_a_slower_run_is_named_level_by_level_with_what_changed(tmp_path, repo):
    entry = slower_copy(tmp_path, repo, 0.5)
    before, after = entry.runs
    found = report(entry.runs, after, RegressionBand())
    assert found.baseline is before and [c.level for c in found.regressions] == ["c1", "c2", "c4"]
    assert {c.metric.name for c in found.regressions} == {"generation_tps"}
    c4 = next(c for c in found.regressions if c.level == "c4")
    assert c4.line().startswith("regressed: c4 Generation: ") and "(0.50x; band 0.8x)" in c4.line()
    assert found.differences == ["flags: +--max-num-seqs 1"]
    text = found.text()
    assert text.startswith(f"regression check: {after.stamp} against {before.stamp}: 3 regressed, 0 improved")
    assert text.endswith("what differs: flags: +--max-num-seqs 1")


def test_within_the_band_nothing_is_reported_and_the_band_is_the_recipes(tmp_path, repo):
    entry = slower_copy(tmp_path, repo, 0.85)
    after = entry.runs[-1]
    assert report(entry.runs, after, RegressionBand()).changes == []
    strict = report(entry.runs, after, RegressionBand(throughput_ratio=0.9))
    assert [c.level for c in strict.regressions] == ["c1", "c2", "c4"] and "band 0.9x" in strict.regressions[0].line()
    faster = slower_copy(tmp_path / "f", repo, 1.5)
    assert [c.regressed for c in report(faster.runs, faster.runs[-1], RegressionBand()).changes] == [False] * 3


def test_repeats_give_a_two_sigma_band(tmp_path, repo):
    entry = slower_copy(tmp_path, repo, 0.85)
    before = entry.runs[0]
    noisy = before.model_copy(
        update={"levels": [lv.model_copy(update={"generation_std": lv.generation_tps * 0.02}) for lv in before.levels]}
    )
    found = report([noisy, entry.runs[1]], entry.runs[1], RegressionBand())
    assert [c.level for c in found.regressions] == ["c1", "c2", "c4"]  # 15 % down is outside 2 sigma of 2 %
    assert "band ± 2σ" in found.regressions[0].line()


def test_the_baseline_has_the_same_workload(tmp_path, repo):
    entry = slower_copy(tmp_path, repo, 0.5)
    before, after = entry.runs
    other = after.model_copy(update={"workload": after.workload.model_copy(update={"output_len": 999})})
    assert baseline([before, other], other) is None
    assert (
        report([before, other], other, RegressionBand())
        .text()
        .endswith("has no earlier run of its workload, topology and hardware")
    )


def test_the_page_marks_the_regressed_run_in_its_history(tmp_path, repo):
    entry = slower_copy(tmp_path, repo, 0.5)
    page = render_recipe(entry).markdown()
    assert "regressed: c4 Generation" in page and "flags: +--max-num-seqs 1" in page


def test_the_trend_marks_the_regressed_run(tmp_path, repo):
    from catalogue.site.history import trend_charts

    entry = slower_copy(tmp_path, repo, 0.5)
    (chart,) = trend_charts(entry)
    assert "regressed (see the run history)" in chart
    assert "regressed (see the run history)" not in "".join(trend_charts(slower_copy(tmp_path / "ok", repo, 0.95)))


def lower_capacity_copy(tmp_path, repo, factor: float, slo: dict | None = None):
    """tiny-cpu-capacity's measured run, and a later copy whose capacity is `factor` times as high."""
    for name in ("tiny-cpu", "tiny-cpu-capacity"):
        shutil.copytree(repo / "examples" / name, tmp_path / name)
    folder = tmp_path / "tiny-cpu-capacity"
    measured = next((folder / "runs").glob("*.json"))
    data = json.loads(measured.read_text())
    data["recorded_at"] = "2026-12-01T12:00:00+00:00"
    data["capacity"]["rps"] = round(data["capacity"]["rps"] * factor, 2)
    data["capacity"]["upper_rps"] = round(data["capacity"]["upper_rps"] * factor, 2)
    if slo is not None:
        data["slo"] = slo
    (folder / "runs" / "20261201T120000Z.json").write_text(json.dumps(data))
    return load_entry(folder)


def test_a_lower_capacity_under_the_same_slo_is_a_regression(tmp_path, repo):
    entry = lower_capacity_copy(tmp_path, repo, 0.5)
    before, after = entry.runs
    found = report(entry.runs, after, RegressionBand())
    assert [c.line() for c in found.regressions] == [
        f"regressed: under {after.slo.describe()} Capacity: {before.capacity.rps:,.1f} → "
        f"{after.capacity.rps:,.1f} req/s (0.50x; band 0.8x)"
    ]


def test_capacities_under_different_slos_are_not_compared(tmp_path, repo):
    entry = lower_capacity_copy(tmp_path, repo, 0.5, slo={"percentile": 99, "ttft": 100, "tpot": 20})
    found = report(entry.runs, entry.runs[-1], RegressionBand())
    assert found.baseline is not None and found.regressions == []
