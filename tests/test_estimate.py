"""`refresh --dry-run`'s estimate of each phase: from the newest run's timings, the simulator's truth, or the newest
run's latencies, each saying which."""

from __future__ import annotations

import json
import shutil

import pytest

from catalogue.models.loading import load_entry
from runner.planning.estimate import OUTSIDE_S, estimate, lines
from runner.planning.plan import make_plan
from tests.site_support import REPO


def _copy(tmp_path, name: str):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / name, root / name, ignore=shutil.ignore_patterns("runs"))
    return root / name


def test_a_simulated_recipe_is_estimated_from_its_profiles_truth(tmp_path):
    """The CI profile at c=1 without noise is 8 ms + 32 × 0.05 ms for the first token, then 8 + 0.6 + 0.5 × context
    / 1000 ms a token: 16 tokens take about 0.14 s, and a level of 16 requests about 16 of them."""
    folder = _copy(tmp_path, "sim-tiny")
    entry = load_entry(folder)
    phases = {p.name: p for p in estimate(entry, make_plan(entry, local=True, capacity=True))}
    per_request = (8 + 32 * 0.05 + 15 * (8 + 0.6 + 0.5 * 40 / 1000)) / 1000
    assert phases["c1"].seconds == pytest.approx(16 * per_request + OUTSIDE_S, rel=0.1)
    assert "ci profile's truth" in phases["c1"].basis
    assert phases["capacity search"].seconds is not None and phases["capacity search"].seconds <= 300


def test_timed_phases_of_the_newest_run_of_the_workload_come_first(tmp_path):
    folder = _copy(tmp_path, "tiny-cpu-capacity")
    shutil.copytree(REPO / "examples" / "tiny-cpu-capacity" / "runs", folder / "runs")
    entry = load_entry(folder)
    phases = {p.name: p for p in estimate(entry, make_plan(entry, local=True, capacity=True))}
    run = json.loads(next((folder / "runs").glob("*.json")).read_text())
    assert "server healthy after 28.6 s" in run["notes"]
    assert phases["boot"].seconds == 28.6 and phases["c1"].seconds == 1.58
    assert phases["capacity search"].seconds == run["capacity"]["search_s"]


def test_a_recipe_without_runs_says_what_is_not_known(tmp_path):
    folder = _copy(tmp_path, "tiny-cpu")
    entry = load_entry(folder)
    text = "\n".join(lines(estimate(entry, make_plan(entry, local=True))))
    assert "boot: unknown (not timed yet: at most health_timeout_s, 300 s)" in text
    assert "(not known)" in text.splitlines()[-1]
