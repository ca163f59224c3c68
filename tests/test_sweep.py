"""runner.measuring.sweep: what the client's event lines say about a level is read as untrusted input (the image writes
them)."""

from __future__ import annotations

import pytest

from runner.measuring.sweep import calibrations


def test_a_levels_calibrations_are_two_positive_finite_numbers():
    assert calibrations({"calibration_ms": [9.8, 10.25]}) == [9.8, 10.25]
    assert calibrations({"calibration_ms": [10, 11]}) == [10.0, 11.0]


@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        [9.8],
        [9.8, 9.9, 10.0],
        [0, 9.8],
        [-1.0, 9.8],
        [float("inf"), 9.8],
        [1e6, 9.8],  # past catalogue.models.plausible's bound: the run file would not load
        [float("nan"), 9.8],
        [True, 9.8],
        ["9.8", 9.8],
        "9.8,9.9",
        {"before": 9.8},
    ],
)
def test_anything_else_is_no_reading(value):
    assert calibrations({"calibration_ms": value}) is None


def test_a_raw_result_nested_too_deep_or_past_a_bound_fails_its_level_in_one_line(tmp_path, repo):
    """The client runs in the recipe's image and writes the raw result: one nested 3,000 deep raised RecursionError
    mid-sweep, and one claiming a billion completed requests a ValidationError; each is now the level's ClientFailed."""
    import json
    import shutil

    from catalogue.models.loading import load_entry
    from runner.measuring.sweep import ClientFailed, Sweep
    from runner.planning.plan import make_plan
    from runner.state import Progress

    root = tmp_path / "examples"
    shutil.copytree(repo / "examples" / "tiny-cpu", root / "tiny-cpu", ignore=shutil.ignore_patterns("runs"))
    plan = make_plan(load_entry(root / "tiny-cpu"), local=True, stamp="20261127T000000Z")
    plan.raw_dir.mkdir(parents=True)
    sweep = Sweep(plan, None, Progress(), None)  # type: ignore[arg-type]  # _take reads no process
    event = {"name": "c1", "ok": True, "wall_s": 1.0}
    (plan.raw_dir / "c1.json").write_text("[" * 3000 + "]" * 3000)
    with pytest.raises(ClientFailed, match="nested more than 64 deep"):
        sweep._take(event)
    (committed,) = (repo / "examples" / "tiny-cpu" / "runs").glob("*/c1.json")
    raw = json.loads(committed.read_text())
    (plan.raw_dir / "c1.json").write_text(json.dumps({**raw, "completed": 10**9}))
    with pytest.raises(ClientFailed, match="completed: Input should be less than or equal to 1000000"):
        sweep._take(event)
    (plan.raw_dir / "c1.json").write_text(json.dumps(raw))
    sweep._take(event)
    assert sweep.progress.levels["c1"].completed == raw["completed"]


@pytest.mark.parametrize(
    ("plant", "why"),
    [
        ("not json", "events.jsonl:2: not JSON: Expecting value"),  # was an uncaught JSONDecodeError
        ('{"kind": "level", "name": 5}', "events.jsonl: a level event without its fields"),  # was a TypeError
        ("/dev/zero", "events.jsonl: a symbolic link"),  # was read_text() of an endless file
        ("fifo", "events.jsonl: not a regular file"),  # was a hang
    ],
)
def test_events_the_client_container_planted_fail_the_sweep_in_one_line(plant, why, tmp_path, repo):
    import os
    import shutil
    import subprocess

    from catalogue.models.loading import load_entry
    from runner.measuring import boot
    from runner.measuring.sweep import ClientFailed, Sweep
    from runner.planning.plan import make_plan
    from runner.state import Progress, Running

    root = tmp_path / "examples"
    shutil.copytree(repo / "examples" / "tiny-cpu", root / "tiny-cpu", ignore=shutil.ignore_patterns("runs"))
    plan = make_plan(load_entry(root / "tiny-cpu"), local=True, stamp="20261127T000000Z")
    plan.raw_dir.mkdir(parents=True)
    events = plan.raw_dir / "events.jsonl"
    if plant == "/dev/zero":
        events.symlink_to(plant)
    elif plant == "fifo":
        os.mkfifo(events)
    else:
        events.write_text(f'{{"kind": "ready"}}\n{plant}\n')
    client = subprocess.Popen(["sleep", "30"])
    try:
        running = Running(plan, client=client)
        sweep = Sweep(plan, running, Progress(), None)  # type: ignore[arg-type]  # no bar: fails before a level
        with pytest.raises(ClientFailed, match=why):
            sweep._until([], wait_exit=True)
        if "level event" not in why:  # the ready wait reads the same file the same way
            with pytest.raises(ClientFailed, match=why):
                boot.wait_client(plan, client, timeout_s=5)
    finally:
        client.kill()
        client.wait()
