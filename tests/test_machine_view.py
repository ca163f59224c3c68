"""The GPUs during each level on the pages: a throttled level marked and never a headline, energy and cost only for
a level whose power was measured, tokens per joule on the index and in comparisons only like for like; the committed
example runs (no GPU) show no energy or cost figure anywhere."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from catalogue.models.loading import Entry, load_catalogue, load_entry
from catalogue.models.platform import load_platform
from catalogue.site import view
from catalogue.site.compare import Member, metric_rows
from catalogue.site.index_page import index_row
from catalogue.site.machine_view import machine_box
from catalogue.site.pages import render_index, render_recipe
from catalogue.stats.metrics import BY_NAME
from catalogue.stats.price_model import cost_per_million, load_price_model
from catalogue.stats.sampling import HostLevelSamples, LevelMachine

REPO = Path(__file__).resolve().parents[1]
T0 = dt.datetime(2026, 11, 25, 3, 0, tzinfo=dt.UTC)


def machine(energy: float | None, reasons: list[str] | None = None, why: str | None = None) -> LevelMachine:
    host = HostLevelSamples(
        host="spark1",
        gpu="NVIDIA GB10",
        samples=10,
        power_samples=10 if energy else 0,
        sm_clock_mhz_min=850 if reasons else 2405,
        sm_clock_mhz_max=2405,
        temperature_c_max=88 if reasons else 61,
        throttle_reasons=reasons or [],
        energy_j=energy,
        not_measured=why,
    )
    window = {"window_start": T0, "window_end": T0 + dt.timedelta(seconds=10), "output_tokens": 1000, "hosts": [host]}
    if energy is None:
        return LevelMachine(**window, not_measured=f"host spark1: {why}")
    return LevelMachine(
        **window,
        power_source="GPU power",
        energy_j=energy,
        mean_power_w=energy / 10,
        j_per_output_token=energy / 1000,
        output_tokens_per_j=1000 / energy,
    )


def spark_entry(machines: dict[int, LevelMachine], generation: dict[int, float]) -> Entry:
    """The committed docker example as if measured on a Spark: its newest run's levels carrying `machines`."""
    entry = load_entry(REPO / "examples" / "tiny-cpu-docker")
    run = entry.latest
    levels = [
        lv.model_copy(update={"machine": machines.get(lv.concurrency), "generation_tps": generation[lv.concurrency]})
        for lv in run.levels
    ]
    runs = [r for r in entry.runs if r is not run] + [run.model_copy(update={"levels": levels})]
    return dataclasses.replace(entry, runs=runs, platform=load_platform("dgx-spark"))


GAP = "a gap of 4.0 s without a power sample (more than 3 s)"


def test_a_throttled_level_is_marked_and_never_the_headline():
    entry = spark_entry(
        {1: machine(500.0), 2: machine(400.0, ["hw_thermal_slowdown"]), 4: machine(None, why=GAP)},
        {1: 100.0, 2: 300.0, 4: 200.0},
    )
    run = entry.latest
    best = view.best_generation(run, entry.platform)
    assert best is not None and best.concurrency == 4  # c=2 is faster, but it throttled
    assert view.best_generation(run).concurrency == 2  # without the platform's gates it would lead
    row = index_row(entry, None)
    assert row["best"] == 200.0 and row["best_c"] == 4 and row["single"] == 100.0
    assert row["tokens_per_j"] is None and row["tokens_per_j_why"] == f"host spark1: {GAP}"
    page = render_recipe(entry).markdown()
    assert page.count(">throttled</span>") == 2  # in the performance table and in the GPU box
    assert 'title="throttled during the level: hw_thermal_slowdown"' in page
    assert f"not measured: host spark1: {GAP}" in page and "none of them is a headline" in page


def test_energy_and_cost_only_for_the_levels_whose_power_was_measured():
    entry = spark_entry({1: machine(500.0), 2: machine(None, why=GAP), 4: machine(250.0)}, {1: 100, 2: 150, 4: 200})
    box = machine_box(entry.latest, entry.platform)
    assert box is not None and box.measured and box.costed and box.currency == "USD"
    rows = {r.level: r for r in box.rows}
    assert (rows["c=1"].energy_j, rows["c=1"].j_per_token, rows["c=1"].tokens_per_j) == (500.0, 0.5, 2.0)
    expected = cost_per_million(load_price_model(), "dgx-spark", 1, 50.0, 100.0)
    assert expected is not None and rows["c=1"].cost == expected
    assert (
        rows["c=2"].cost is None and rows["c=2"].energy_j is None and rows["c=2"].not_measured == f"host spark1: {GAP}"
    )
    page = render_recipe(entry).markdown()
    assert "Cost per 1M output tokens (USD)" in page and "box price ÷ (years × 365 × hours a day)" in page
    assert "<td>Output per joule (tok/J)</td>" not in page and ">Output per joule (tok/J)</th>" in page
    row = index_row(entry, None)
    assert row["best_c"] == 4 and row["tokens_per_j"] == 4.0  # 1,000 tokens ÷ 250 J at the best level


def test_a_run_sampled_without_a_gpu_says_so_and_shows_no_figure():
    entry = spark_entry({c: machine(None, why="no GPU") for c in (1, 2, 4)}, {1: 1.0, 2: 2.0, 4: 3.0})
    box = machine_box(entry.latest, entry.platform)
    assert box is not None and not box.measured and not box.costed
    page = render_recipe(entry).markdown()
    assert "power not measured" in page and "Power not measured (host spark1: no GPU)" in page
    for figure in ("Energy (J)", "J per output token", "Cost per 1M", "tok/J"):
        assert figure not in page, figure


def test_the_committed_example_runs_show_no_energy_or_cost_figure():
    entries = load_catalogue([REPO / "examples"])
    assert entries
    for entry in entries:
        page = render_recipe(entry).markdown()
        for figure in ("Energy (J)", "J per output token", "Output tokens per J</th>", "Cost per 1M", "(tok/J)"):
            assert figure not in page, (entry.id, figure)
        assert index_row(entry, None)["tokens_per_j"] is None
    index = render_index(entries).markdown()
    assert 'data-label="Tokens per J" data-value="" class="rc-empty">—</td>' in index


def test_comparisons_rank_tokens_per_joule_only_among_measured_levels():
    measured = spark_entry({1: machine(500.0), 2: machine(400.0), 4: machine(250.0)}, {1: 1, 2: 2, 4: 3})
    other = spark_entry(
        {1: machine(250.0), 2: machine(None, why=GAP), 4: machine(500.0, ["hw_slowdown"])}, {1: 1, 2: 2, 4: 3}
    )
    members = [Member(measured, "a", 1), Member(other, "b", 1)]
    rows = {r.concurrency: r for r in metric_rows(members, BY_NAME["output_tokens_per_j"], per_node=False)}
    assert rows[1].values == [2.0, 4.0] and rows[1].winners[0].member == 1
    assert rows[2].values == [2.5, None] and rows[2].winners == []  # a measured figure is never ranked against none
    assert rows[4].values == [4.0, 2.0] and rows[4].winners == []  # b's c=4 throttled: shown, not ranked


def test_each_levels_cpu_calibration_is_shown():
    """The client's calibration before and after each level (catalogue.stats.machine_speed) is a column of the machine
    box. Without readings: no column."""
    entry = spark_entry({c: machine(None, why="no GPU") for c in (1, 2, 4)}, {1: 1.0, 2: 2.0, 4: 3.0})
    run = entry.latest
    readings = {1: [9.8, 9.9], 2: [10.0, 15.0]}
    levels = [lv.model_copy(update={"calibration_ms": readings.get(lv.concurrency)}) for lv in run.levels]
    calibrated = dataclasses.replace(entry, runs=[*entry.runs[:-1], run.model_copy(update={"levels": levels})])
    box = machine_box(calibrated.latest, calibrated.platform)
    assert box is not None and box.calibrated
    assert [(r.level, r.cpu) for r in box.rows][:3] == [("c=1", "9.8 → 9.9"), ("c=2", "10 → 15"), ("c=4", "N/A")]
    page = render_recipe(calibrated).markdown()
    assert "<th>CPU calibration (ms, before → after)</th>" in page
    assert "<td>10 → 15</td>" in page
    bare = run.model_copy(
        update={
            "levels": [lv.model_copy(update={"calibration_ms": None}) for lv in run.levels],
            "long_context": [lv.model_copy(update={"calibration_ms": None}) for lv in run.long_context],
            "rates": [lv.model_copy(update={"calibration_ms": None}) for lv in run.rates],
        }
    )
    uncalibrated = dataclasses.replace(entry, runs=[*entry.runs[:-1], bare])
    plain = machine_box(uncalibrated.latest, uncalibrated.platform)
    assert plain is not None and not plain.calibrated
    assert "CPU calibration (ms" not in render_recipe(uncalibrated).markdown()
