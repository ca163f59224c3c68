"""runner.recording.rerun: which incomplete run `--resume` finishes (only one this machine left), and what a
resumed run keeps of it."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from catalogue.models.loading import load_entry, parse_run
from runner.planning.plan import make_plan
from runner.recording.record import write_run
from runner.recording.rerun import finished_probe_jobs, finished_rates, resumable
from tests.site_support import REPO


def same_checkout(argv: list[str]) -> list[str]:
    """The argv with the tiny model's absolute folder (`--tokenizer`) as one word: the run was recorded in another
    checkout of the repository than the one the test runs in."""
    return ["<tiny-cpu model>" if word.endswith("/examples/tiny-cpu/model") else word for word in argv]


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
        assert same_checkout(job.argv) == same_checkout(recorded[f"{name}.json"]), name
    assert set(jobs) <= set(finished_rates(run))  # each is a kept level the run file lists again


def test_a_plan_without_a_search_rebuilds_no_probe():
    entry = load_entry(REPO / "examples" / "tiny-cpu-capacity")
    assert entry.latest is not None
    assert finished_probe_jobs(entry.latest, make_plan(entry, local=True, stamp=entry.latest.stamp)) == {}


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """examples/tiny-cpu copied, its sweep run stopped early as a file on disk (not written by the runner)."""
    monkeypatch.setenv("CATALOGUE_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "tiny-cpu"
    shutil.copytree(REPO / "examples" / "tiny-cpu", folder)
    path = folder / "runs" / "20261125T071129Z.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "complete": False, "incomplete_reason": "interrupted (Ctrl-C)"}, indent=2))
    return folder, path


def test_a_committed_incomplete_run_is_not_resumed_and_one_line_says_why(tiny, capsys):
    folder, _ = tiny
    assert resumable(load_entry(folder)) is None
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "note: not resuming run 20261125T071129Z: this machine's runner did not leave it "
        "(no local record of it: committed or copied in)"
    ]


def test_an_incomplete_run_the_runner_left_here_is_resumed(tiny, capsys):
    folder, path = tiny
    write_run(parse_run(path), path)
    run = resumable(load_entry(folder))
    assert run is not None and run.stamp == "20261125T071129Z" and capsys.readouterr().err == ""


def test_an_incomplete_run_dated_later_than_now_is_not_resumed(tiny, capsys):
    folder, path = tiny
    run = parse_run(path)
    write_run(run, path)
    assert resumable(load_entry(folder), now=run.recorded_at - dt.timedelta(minutes=5)) is None
    assert "is later than now" in capsys.readouterr().err


def test_a_container_run_with_no_image_id_is_not_resumed(tiny, capsys):
    folder, path = tiny
    run = parse_run(path)
    prov = run.provenance.model_copy(update={"image": "local/vllm-cpu:0.32.0", "image_id": None})
    write_run(run.model_copy(update={"provenance": prov}), path)
    assert resumable(load_entry(folder)) is None
    assert "ran the container local/vllm-cpu:0.32.0 but recorded no image id" in capsys.readouterr().err
