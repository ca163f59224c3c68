"""runner.recording.rerun: what a resumed run keeps of the run it finishes."""

from __future__ import annotations

from pathlib import Path

from catalogue.models.loading import load_entry
from runner.planning.plan import make_plan
from runner.recording.rerun import finished_probe_jobs, finished_rates
from tests.site_support import REPO


def test_the_kept_probes_commands_are_the_ones_the_committed_run_recorded(monkeypatch):
    """A resumed run writes every kept probe's command again: rebuilt from the plan's probe template and the probe's
    recorded rate and number, each equals the argv the runner recorded when it ran that probe (a resumed search
    once dropped them: its run file held 16 commands for 17 rate levels). The run was made from the repository's
    root with `--root examples`, as its recorded `--result-dir` says."""
    monkeypatch.chdir(REPO)
    entry = load_entry(Path("examples") / "tiny-cpu-capacity")
    run = entry.latest
    assert run is not None and any(lv.probe for lv in run.rates)
    recorded = {argv[argv.index("--result-filename") + 1]: argv for argv in run.provenance.bench_commands}
    plan = make_plan(entry, local=True, stamp=run.stamp, capacity=True)
    jobs = finished_probe_jobs(run, plan)
    probes = [lv.probe for lv in run.rates if lv.probe is not None]
    assert sorted(jobs) == sorted(f"probe{n}" for n in probes)
    for name, job in jobs.items():
        assert job.argv == recorded[f"{name}.json"], name
    assert set(jobs) <= set(finished_rates(run))  # each is a kept level the run file lists again


def test_a_plan_without_a_search_rebuilds_no_probe():
    entry = load_entry(REPO / "examples" / "tiny-cpu-capacity")
    assert entry.latest is not None
    assert finished_probe_jobs(entry.latest, make_plan(entry, local=True, stamp=entry.latest.stamp)) == {}
