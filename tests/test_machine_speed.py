"""catalogue.stats.machine_speed: runs measured with the machine in another state (its CPU calibration) are not
compared; hand-computed cases from the calibrations measured on this two-CPU machine (idle 9.6 ms, one CPU busy 14.4
ms)."""

from __future__ import annotations

import datetime as dt

import pytest

from catalogue.models.recipe import RegressionBand
from catalogue.stats.machine_speed import MACHINE_RATIO, apart, other_state
from catalogue.stats.regression import report
from tests.test_regression import series


def calibrated(run, before: float | None, after: float | None = None):
    """The run with its (one) host's calibrations before and after the sweep set."""
    hosts = []
    for host in run.provenance.hosts:
        passport = host.passport.model_copy(
            update={
                "before": host.passport.before.model_copy(update={"calibration_ms": before}),
                "after": host.passport.after.model_copy(update={"calibration_ms": after}),
            }
        )
        hosts.append(host.model_copy(update={"passport": passport}))
    return run.model_copy(update={"provenance": run.provenance.model_copy(update={"hosts": hosts})})


def test_calibrations_further_apart_than_the_ratio_are_another_machine_state(tmp_path, repo):
    old, new = series(tmp_path, repo, [1.0, 1.0])
    assert apart(calibrated(new, 14.4), calibrated(old, 9.6)) == pytest.approx(1.5)
    why = other_state(calibrated(new, 14.4), calibrated(old, 9.6))
    assert why == f"{old.stamp}: the machine's CPU calibrations were 1.50x apart (14.4 vs 9.6 ms)"
    assert other_state(calibrated(new, 6.4), calibrated(old, 9.6)) is not None  # 0.67x: faster counts too
    assert other_state(calibrated(new, 10.5), calibrated(old, 9.6)) is None  # 1.09x: the same state
    assert other_state(calibrated(new, 9.6 * MACHINE_RATIO), calibrated(old, 9.6)) is None
    unknown = calibrated(old, None)  # a run recorded before calibrations: not known, so compared
    assert other_state(calibrated(new, 14.4), unknown) is None and apart(calibrated(new, 14.4), unknown) is None


def test_the_closest_readings_of_before_and_after_decide(tmp_path, repo):
    """The measured refresh that read 11.9 ms before and 5.2 after: against a run at 9.8 its readings overlap, so it
    is compared; a run that read 14.4 and 16.0 against one at 9.6 and 10.0 is 1.44x apart at its closest."""
    old, new = series(tmp_path, repo, [1.0, 1.0])
    assert apart(calibrated(new, 11.9, 5.2), calibrated(old, 9.8)) == 1.0
    assert other_state(calibrated(new, 11.9, 5.2), calibrated(old, 9.8)) is None
    why = other_state(calibrated(new, 14.4, 16.0), calibrated(old, 9.6, 10.0))
    assert why == f"{old.stamp}: the machine's CPU calibrations were 1.44x apart (14.4–16 vs 9.6–10 ms)"


def test_the_window_leaves_out_runs_of_another_machine_state_and_says_so(tmp_path, repo):
    """The measured case: no-change refreshes read 0.55x generation against a run measured when the machine gave
    more CPU. With calibrations, that run is left out and the refresh is judged against the others."""
    runs = series(tmp_path, repo, [1.0, 0.55, 0.56, 0.54])
    fast, *slow = runs
    runs = [calibrated(fast, 9.6), *(calibrated(run, 14.4) for run in slow)]
    found = report(runs, runs[-1], RegressionBand())
    assert found.regressions == [] and [r.stamp for r in found.window] == [r.stamp for r in runs[1:3]]
    assert found.left_out == [f"{fast.stamp}: the machine's CPU calibrations were 1.50x apart (14.4 vs 9.6 ms)"]
    assert f"\n  left out: {fast.stamp}: the machine's CPU calibrations" in found.text()
    blind_runs = [calibrated(run, None) for run in (fast, *slow)]  # without calibrations: the old false alarm
    blind = report(blind_runs, blind_runs[-1], RegressionBand())
    assert [c.level for c in blind.regressions if c.metric.name == "generation_tps"] == ["c1", "c2", "c4"]
    alone = report(runs[:2], runs[1], RegressionBand())  # its one earlier run, in another state: 4x granted
    assert alone.changes == [] and "compared only beyond what the machine's state explains (4x)" in alone.text()
    no_passport = report([calibrated(fast, None), runs[1]], runs[1], RegressionBand())
    assert no_passport.baseline is None and "no CPU calibration in its passport" in no_passport.text()


def test_the_probe_times_every_cpu_hashing_at_once(monkeypatch):
    """The passport probe's calibration: each round hashes CALIBRATION_MIB on every CPU in threads, and the reading
    is the median round. A fake clock gives the rounds 10, 30, 20, ... ms: the median of 15 such rounds is 20."""
    from runner.scripts import passport_probe

    hashed: list[int] = []
    monkeypatch.setattr(passport_probe.hashlib, "sha256", lambda data: hashed.append(len(data)))
    monkeypatch.setattr(passport_probe.os, "cpu_count", lambda: 3)
    ticks = iter(t / 1000 for pair in ((0, d) for d in [10, 30, 20] * 5) for t in pair)
    monkeypatch.setattr(passport_probe.time, "perf_counter", lambda: next(ticks))
    assert passport_probe.calibration_ms() == 20
    assert hashed == [passport_probe.CALIBRATION_MIB << 20] * 3 * passport_probe.CALIBRATION_ROUNDS
    monkeypatch.undo()
    assert passport_probe.calibration_ms() > 0  # and for real, on this machine


def test_an_infinite_calibration_in_a_run_file_is_refused_in_one_line(tmp_path, repo):
    """A run file is untrusted: an infinite calibration would put every other run in 'another machine state' and
    silence the regression check. The loader refuses it, naming the file and the field."""
    import json
    import shutil

    from catalogue.models.errors import CatalogueError
    from catalogue.models.loading import load_entry

    folder = tmp_path / "tiny-cpu-docker"
    shutil.copytree(repo / "examples" / "tiny-cpu-docker", folder)
    path = next((folder / "runs").glob("*.json"))
    data = json.loads(path.read_text())
    data["provenance"]["hosts"][0]["passport"]["before"]["calibration_ms"] = float("inf")
    path.write_text(json.dumps(data))
    with pytest.raises(CatalogueError) as refused:
        load_entry(folder)
    assert str(refused.value) == f"{path}: not valid JSON: Infinity is not a JSON number"  # refused as it is read


def levels_calibrated(run, pairs: dict[int, tuple[float, float]]):
    """The run with the client's calibration around each closed-loop level (by concurrency) set."""
    levels = [
        lv.model_copy(update={"calibration_ms": list(pairs[lv.concurrency])}) if lv.concurrency in pairs else lv
        for lv in run.levels
    ]
    return run.model_copy(update={"levels": levels})


def test_each_level_is_judged_against_earlier_levels_of_its_own_machine_state(tmp_path, repo):
    """The no-change bench's shape: a refresh whose c1 ran while the machine gave 0.6x (its calibration before the
    level 16 ms against the earlier runs' 9.8) read 0.6x generation. Against levels measured at 9.8 ms that is not
    judged, and says why; c2 and c4, calibrated alike before them, are judged (0.6x: regressed). The reading after a
    level is not compared: c4's 15 ms after it (the server finishing its work) changes nothing."""
    runs = series(tmp_path, repo, [1.0, 1.0, 1.0, 0.6])
    idle = {1: (9.8, 9.9), 2: (9.7, 10.0), 4: (9.8, 9.8)}
    earlier = [levels_calibrated(run, idle) for run in runs[:3]]
    new = levels_calibrated(runs[3], {1: (16.0, 16.4), 2: (9.9, 10.1), 4: (10.0, 15.0)})
    found = report([*earlier, new], new, RegressionBand())
    by_level = {(r.level, r.metric.name): r for r in found.rows}
    assert by_level[("c1", "generation_tps")].outcome == "not enough data"
    assert by_level[("c1", "generation_tps")].why == (
        "every earlier run measured this level with the machine in another state (CPU calibration): "
        "a change within the machine's 1.63x is not judged"
    )
    assert by_level[("c2", "generation_tps")].outcome == "regressed"
    assert by_level[("c4", "generation_tps")].outcome == "regressed"
    assert {c.level for c in found.regressions} == {"c2", "c4"}
    alike = levels_calibrated(runs[3], idle)
    assert {c.level for c in report([*earlier, alike], alike, RegressionBand()).regressions} == {"c1", "c2", "c4"}


def test_a_change_beyond_what_the_machine_state_explains_is_judged_across_states(tmp_path, repo):
    """Every earlier run read 9.8 ms before c1, this one 16.0 (1.63x): that much slower a machine explains 0.61x of
    the generation, not 0.3x. Hand-computed: the earlier 1.0 granted the machine is 1 / 1.633 = 0.612, and 0.3 is
    0.49x of it, beyond the default 0.8x band and its square (0.64x): regressed, the line naming the earlier figure
    as the rules saw it (granted) and the machine's share. The same 0.3x from a machine 1.63x *faster* is judged the
    same way (the grant goes toward the new figure whichever way the reading points); 0.55x against a 2x slower
    machine is not judged."""
    runs = series(tmp_path, repo, [1.0, 1.0, 1.0, 0.3])
    idle = {1: (9.8, 9.9), 2: (9.8, 9.9), 4: (9.8, 9.9)}
    earlier = [levels_calibrated(run, idle) for run in runs[:3]]
    slower = levels_calibrated(runs[3], {1: (16.0, 16.4), 2: (16.0, 16.4), 4: (16.0, 16.4)})
    found = {(r.level, r.metric.name): r for r in report([*earlier, slower], slower, RegressionBand()).rows}
    row = found[("c1", "generation_tps")]
    assert row.outcome == "regressed" and row.change is not None
    assert row.median == earlier[0].levels[0].generation_tps  # the window's own median
    assert row.change.before == pytest.approx(row.median / (16.0 / 9.8))  # what the band rules compared with
    assert row.why == "0.8x of the median of 3 runs; earlier figures granted the machine's 1.63x"
    assert row.change.line().endswith(
        "(0.49x; band 0.8x of the median of 3 runs; earlier figures granted the machine's 1.63x)"
    )
    assert not row.withheld
    # a run file written to excuse any change (1e-6 ms before its levels, 1e6 after) is no baseline beside them
    hostile = levels_calibrated(runs[2], {1: (1e-6, 1e6), 2: (1e-6, 1e6), 4: (1e-6, 1e6)})
    hostile = hostile.model_copy(update={"recorded_at": runs[2].recorded_at + dt.timedelta(hours=1)})
    rows = report([earlier[0], hostile, slower], slower, RegressionBand()).rows  # granted, it would be the median
    assert {(r.level, r.outcome) for r in rows if r.metric.name == "generation_tps"} >= {("c1", "regressed")}
    faster = levels_calibrated(runs[3], {1: (6.0, 6.1), 2: (6.0, 6.1), 4: (6.0, 6.1)})
    found = {(r.level, r.metric.name): r for r in report([*earlier, faster], faster, RegressionBand()).rows}
    assert found[("c1", "generation_tps")].outcome == "regressed"
    assert "granted the machine's 1.63x" in found[("c1", "generation_tps")].why
    half = series(tmp_path / "half", repo, [1.0, 1.0, 1.0, 0.55])
    earlier = [levels_calibrated(run, idle) for run in half[:3]]
    busy = levels_calibrated(half[3], {1: (19.6, 20.0), 2: (19.6, 20.0), 4: (19.6, 20.0)})
    found = {(r.level, r.metric.name): r for r in report([*earlier, busy], busy, RegressionBand()).rows}
    assert found[("c1", "generation_tps")].outcome == "not enough data"
    assert found[("c1", "generation_tps")].why.endswith("a change within the machine's 2.00x is not judged")
    assert found[("c1", "generation_tps")].withheld  # the report lists it as not judged: never silently


def test_an_earlier_run_whose_state_changed_during_it_is_no_baseline(tmp_path, repo):
    """A run file claiming 1e-6 ms before its sweep and 1e6 after matched every machine state by its closest pair,
    and became the only baseline of a run measured while the machine was busy. A run whose own readings lie 1.25x
    apart, with no readings around its levels, is left out and says so; so is a level whose readings do."""
    runs = series(tmp_path, repo, [1.0, 1.0, 1.0, 0.5, 0.5])
    real = [calibrated(run, 9.6, 9.8) for run in runs[:3]]
    wildcard = calibrated(runs[3], 1e-6, 1e6)
    new = calibrated(runs[4], 14.4, 14.6)
    found = report([*real, wildcard, new], new, RegressionBand())
    # every earlier run in another state: read anyway, granted the most a state explains (0.5x is within it)
    assert found.regressions == [] and len(found.window) == 4
    assert (
        "compared only beyond what the machine's state explains (4x): "
        f"{wildcard.stamp}: the machine changed speed during that run (CPU calibrations 1e-06 and 1e+06 ms)"
    ) in found.left_out
    shorter = runs[3].model_copy(update={"long_context": []})
    steady = levels_calibrated(shorter, {1: (14.4, 14.5), 2: (14.4, 14.5), 4: (14.4, 20.0)})
    assert other_state(new, calibrated(steady, 1e-6, 1e6)) is None  # its levels tell their state one by one
    wide = levels_calibrated(shorter, {1: (1e-6, 1e6), 2: (1e-6, 1e6), 4: (1e-6, 1e6)})
    lonely = levels_calibrated(new.model_copy(update={"long_context": []}), {1: (14.5, 14.6)})
    found = report([*real, calibrated(wide, 1e-6, 1e6), lonely], lonely, RegressionBand())
    c1 = {r.metric.name: r for r in found.rows if r.level == "c1"}
    assert c1["generation_tps"].outcome == "not enough data"  # 1e-6 before its c1 matches no state
    assert c1["generation_tps"].why == (
        "every earlier run measured this level with the machine in another state (CPU calibration): a change within "
        "the machine's 4.00x is not judged"
    )  # the real runs, read with 4x granted; beyond MAX_GRANT a level (1e-6 ms) is no baseline, granted or not


def test_a_level_the_machine_slowed_during_is_judged_only_beyond_its_slowdown(tmp_path, repo):
    """Measured in a no-change bench with tests run beside it: c1 read 16.04 ms before and 32.4 ms after (2.02x) and
    0.47x generation against the refresh before it, 'regressed'. A level whose reading after it is 1.75x the one
    before spans 9.9-19.9 ms, 2.03x from the earlier 9.8: 0.47x against 1 / 2.03 = 0.49 is not judged, and says
    why; 0.2x is (0.41x of 0.49, beyond 0.8x and its square). 15 ms after 10 (the server finishing its work, 1.5x)
    changes nothing. As an earlier run's level it is a baseline only where no level of this state is: a 0.5x run
    after a 1.0x whose c1 slowed and a 0.5x is judged on the 0.5x."""
    runs = series(tmp_path, repo, [1.0, 1.0, 1.0, 0.47])
    idle = {1: (9.8, 9.9), 2: (9.7, 10.0), 4: (9.8, 15.0)}
    earlier = [levels_calibrated(run, idle) for run in runs[:3]]
    new = levels_calibrated(runs[3], {1: (9.9, 19.9), 2: (9.9, 10.1), 4: (10.0, 15.0)})
    rows = {(r.level, r.metric.name): r for r in report([*earlier, new], new, RegressionBand()).rows}
    assert rows[("c1", "generation_tps")].outcome == "not enough data"
    assert rows[("c1", "generation_tps")].why == (
        "the machine slowed during this level (CPU calibration 9.9 ms before it, 19.9 ms after): "
        "a change within the machine's 2.03x is not judged"
    )
    far = levels_calibrated(series(tmp_path / "far", repo, [0.2])[0], {1: (9.9, 19.9)})
    far = far.model_copy(update={"recorded_at": new.recorded_at})
    rows_far = {(r.level, r.metric.name): r for r in report([*earlier, far], far, RegressionBand()).rows}
    assert rows_far[("c1", "generation_tps")].outcome == "regressed"
    assert rows_far[("c1", "generation_tps")].why.endswith("; earlier figures granted the machine's 2.03x")
    # A fresh CI machine's readings: every level's after-reading 1.6-1.9x its before-reading (the server finishing
    # its work on a slower VM), so the one earlier run's c4 (23.69 → 43.27 ms, 1.83x) was no baseline and a
    # `max-num-seqs: 1` refresh (27.95 → 43.48, 1.56x: not shifted) went unjudged. The machine during the earlier
    # level lay within 23.69-43.27 ms, the new one's at 27.95: at most 43.27 / 27.95 = 1.548x apart. Granted that,
    # 1 / 1.548 = 0.646, and 0.2x is 0.31x of it, beyond the squared band that one earlier run needs. Both levels
    # slowed alike (23.7 → 43.0 and 23.69 → 43.27) lie 43.27 / 23.7 = 1.83x apart at most, not 1.83 x 1.81.
    once, slow = series(tmp_path / "ci", repo, [1.0, 0.2])
    once = levels_calibrated(once, {4: (23.69, 43.27)})
    slow = levels_calibrated(slow, {4: (27.95, 43.48)})
    c4 = {r.metric.name: r for r in report([once, slow], slow, RegressionBand()).rows if r.level == "c4"}
    assert c4["generation_tps"].outcome == "regressed" and c4["generation_tps"].why.endswith(
        "granted the machine's 1.55x"
    )
    alike = levels_calibrated(series(tmp_path / "ci2", repo, [0.3])[0], {4: (23.7, 43.0)})
    alike = alike.model_copy(update={"recorded_at": slow.recorded_at})
    c4 = {r.metric.name: r for r in report([once, alike], alike, RegressionBand()).rows if r.level == "c4"}
    assert c4["generation_tps"].outcome == "regressed" and c4["generation_tps"].why.endswith(
        "granted the machine's 1.83x"
    )
    assert rows[("c2", "generation_tps")].outcome == rows[("c4", "generation_tps")].outcome == "regressed"
    # without the rule, 1.0 and 0.5 are two earlier runs that disagree: 'not enough data'
    first, second, third = series(tmp_path / "low", repo, [1.0, 0.5, 0.5])
    slowed = levels_calibrated(first, {1: (9.8, 30.0), 2: (9.7, 10.0), 4: (9.8, 9.9)})
    second, third = (levels_calibrated(run, idle) for run in (second, third))
    c1 = {r.metric.name: r for r in report([slowed, second, third], third, RegressionBand()).rows if r.level == "c1"}
    # one level of this state is not the baseline of two: the slowed one counts too, granted, and the two disagree
    assert c1["generation_tps"].outcome == "not enough data" and "disagree" in c1["generation_tps"].why
    c2 = {r.metric.name: r for r in report([slowed, second, third], third, RegressionBand()).rows if r.level == "c2"}
    assert c2["generation_tps"].outcome == "not enough data" and "disagree" in c2["generation_tps"].why


def test_an_earlier_run_without_a_passport_is_no_baseline_and_one_level_is_never_picked(tmp_path, repo):
    """A run file 10x slower with no calibration anywhere counted as 'the same machine state' and, preferred over the
    honest runs whose levels read 1.28x apart, set the baseline alone: a 0.3x run read 'improved'. A baseline needs a
    passport; and a level whose reading matched (or was missing) is never picked alone over most of the others."""
    runs = series(tmp_path, repo, [1.0, 1.0, 1.0, 0.1, 0.3])
    idle = {1: (9.8, 9.9), 2: (9.8, 9.9), 4: (9.8, 9.9)}
    honest = [levels_calibrated(calibrated(run, 9.6, 9.7), idle) for run in runs[:3]]
    new = levels_calibrated(calibrated(runs[4], 9.6, 9.7), {1: (12.5, 12.6), 2: (12.5, 12.6), 4: (12.5, 12.6)})
    for hostile in (runs[3], calibrated(runs[3], 9.6, 9.7)):  # no passport; a passport but no level readings
        found = report([*honest, hostile, new], new, RegressionBand())
        regressed = {c.level for c in found.regressions if c.metric.name == "generation_tps"}
        assert regressed == {"c1", "c2", "c4"}, found.text()
    found = report([*honest, runs[3], new], new, RegressionBand())
    assert f"left out: {runs[3].stamp}: no CPU calibration in its passport" in found.text()


def test_a_faked_calibration_excuses_at_most_what_a_machine_state_can(tmp_path, repo):
    """The image takes the calibration: one that read 100 ms put every earlier run in 'another machine state', and a
    run 10x slower went unjudged. When most earlier runs are of another state they are read anyway, granted the most a
    state explains (4x): 0.1x is beyond it (0.4x of 0.25), 0.5x within it."""
    runs = series(tmp_path, repo, [1.0, 1.0, 1.0, 0.1])
    honest = [calibrated(run, 9.6, 9.7) for run in runs[:3]]
    faked = calibrated(runs[3], 100.0, 100.0)
    found = report([*honest, faked], faked, RegressionBand())
    assert {c.level for c in found.regressions if c.metric.name == "generation_tps"} == {"c1", "c2", "c4"}
    assert "compared only beyond what the machine's state explains (4x)" in found.text()
    half = calibrated(series(tmp_path / "half", repo, [0.5])[0], 100.0, 100.0)
    half = half.model_copy(update={"recorded_at": faked.recorded_at})
    assert report([*honest, half], half, RegressionBand()).regressions == []


def simulated(run):
    """The run as if the simulator had answered it (its workload names a profile)."""
    assert run.workload is not None
    return run.model_copy(update={"workload": run.workload.model_copy(update={"simulator": "ci"})})


def test_a_simulated_run_is_judged_whatever_the_machine_state(tmp_path, repo):
    """The measured case above, from a simulator: c1's 16 ms before it against 9.8 no longer withholds its 0.6x
    generation, and an earlier run 1.5x apart by its passport stays in the window (a simulated step is a sleep of
    the model's length, not CPU work). The same runs measured keep the gate."""
    runs = series(tmp_path, repo, [1.0, 1.0, 1.0, 0.6])
    idle = {1: (9.8, 9.9), 2: (9.7, 10.0), 4: (9.8, 9.8)}
    earlier = [calibrated(levels_calibrated(run, idle), 9.6) for run in runs[:3]]
    earlier[0] = calibrated(earlier[0], 14.4)
    new = calibrated(levels_calibrated(runs[3], {1: (16.0, 16.4), 2: (9.9, 10.1), 4: (10.0, 15.0)}), 9.6)
    measured = report([*earlier, new], new, RegressionBand())
    assert {c.level for c in measured.regressions} == {"c2", "c4"} and len(measured.window) == 2
    sim = [simulated(run) for run in [*earlier, new]]
    found = report(sim, sim[-1], RegressionBand())
    assert {c.level for c in found.regressions} == {"c1", "c2", "c4"}
    assert found.left_out == [] and len(found.window) == 3
    assert not [why for why in found.unjudged if "machine" in why]  # only p99s of too few requests stay unjudged
