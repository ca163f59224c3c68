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
