"""`nox -s bench -- truth`: the runner's statistics against a known answer, on the simulator (examples/sim-tiny).

The truth comes from simulator/truth.py (the same latency model in virtual time, no HTTP, client or clock); every
figure it is compared with comes from real refreshes (`catalogue refresh`, vLLM's `vllm bench serve`) of the
simulated server. In order, each line printed as it is known:

1. the regression alarm, on a copy with levels 1, 8, 32, 64 and 64 sequences: NOCHANGE refreshes with nothing changed
   and `--fail-on-regression` (target: no alarm), then every decode step 10 % slower (target: flagged at every level,
   the figure named), then 10 % slower only in steps decoding more than 32 sequences (target: flagged at c64 and
   nowhere else);
2. the capacity search: one refresh of a grid of 8 rates 10 % apart around the truth, each with enough requests to
   decide at the same confidence, then SEARCHES refreshes with `--capacity`, each with its own noise seed, against
   the true capacity (target: each within ±10 %; the decided interval holds the truth in at least 18 of 20; the
   search's probes take at most half the grid's wall time). A running tally follows each search.

The last four lines are the summary: searches within 10 %, intervals covering, no-change alarms, slowdown flagged.
BENCH_SEARCHES=N runs fewer searches (the summary says of how many)."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from benchmarks.capacity import _set_open_loop, _walls
from benchmarks.synthetic import REPO
from catalogue.models.loading import load_entry
from catalogue.stats.probe_size import deciding
from catalogue.stats.regression import report
from runner.refresh import REGRESSED
from simulator.profile import load_profile
from simulator.truth import Scheduler, capacity

RECIPE = "sim-tiny"
SEARCHES = 20
NOCHANGE = 5
REGRESSION_LEVELS = [1, 8, 32, 64]
GRID = 8
STEP = 1.1


def _edit(folder: Path, change: dict) -> None:
    """Set keys of the recipe (dotted paths) and write it back."""
    path = folder / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    for dotted, value in change.items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _refresh(root: Path, name: str, port: int, *extra: str) -> tuple[int, dict]:
    """One refresh of `name`; its exit code and its newest run file."""
    argv = [sys.executable, "-m", "catalogue", "--root", str(root), "refresh", name, "--port", str(port)]
    done = subprocess.run(
        [*argv, "--allow", "no container", *extra],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode not in (0, REGRESSED):
        raise SystemExit(f"refresh failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    entry = load_entry(root / name)
    assert entry.latest is not None
    return done.returncode, entry.latest.model_dump(mode="json")


def _regressed_levels(folder: Path) -> list[str]:
    """'c64 TPOT' for each figure of the newest run the regression check calls regressed."""
    entry = load_entry(folder)
    assert entry.latest is not None
    found = report(entry.runs, entry.latest, entry.recipe.sweep.regression)
    return [f"{change.level} {change.metric.label}" for change in found.changes if change.regressed]


def bench_regression(root: Path, port: int) -> tuple[int, bool]:
    """The alarm part: (no-change refreshes that alarmed, both slowdowns flagged where and only where expected)."""
    name = f"{RECIPE}-regression"
    folder = root / name
    shutil.copytree(root / RECIPE, folder)
    _edit(folder, {"sweep.concurrency": REGRESSION_LEVELS, "serving.flags.max-num-seqs": 64})
    print(f"\n## Regression alarm: levels {REGRESSION_LEVELS}, 64 sequences, band of {name}", flush=True)
    alarms = 0
    for i in range(1, NOCHANGE + 1):
        _edit(folder, {"serving.simulator.seed": 1000 + i})
        code, _ = _refresh(root, name, port, "--fail-on-regression")
        flagged = _regressed_levels(folder)
        alarms += code == REGRESSED
        print(f"no-change refresh {i}: exit {code}; regressed: {', '.join(flagged) or 'nothing'}", flush=True)
    expected_all = {f"c{c}" for c in REGRESSION_LEVELS}
    _edit(folder, {"serving.simulator.seed": 2001, "serving.simulator.slowdown": 1.1})
    _refresh(root, name, port, "--fail-on-regression")
    flagged = _regressed_levels(folder)
    levels_all = {item.split()[0] for item in flagged}
    print(f"decode steps 10 % slower: regressed {', '.join(flagged) or 'nothing'}", flush=True)
    print(f"  flagged at every level: {'yes' if levels_all >= expected_all else 'no'}", flush=True)
    _edit(folder, {"serving.simulator.seed": 2002, "serving.simulator.slowdown_above": 32})
    _refresh(root, name, port, "--fail-on-regression")
    flagged = _regressed_levels(folder)
    levels_above = {item.split()[0] for item in flagged}
    print(f"10 % slower above 32 sequences: regressed {', '.join(flagged) or 'nothing'}", flush=True)
    print(f"  flagged at c64 and nowhere else: {'yes' if levels_above == {'c64'} else 'no'}", flush=True)
    return alarms, levels_all >= expected_all and levels_above == {"c64"}


def true_capacity(folder: Path) -> float:
    """The recipe's true capacity under its SLO (simulator/truth.py)."""
    recipe = load_entry(folder).recipe
    assert recipe.sweep.slo is not None and recipe.serving.simulator is not None
    profile = load_profile(recipe.serving.simulator.profile)
    return capacity(
        profile,
        Scheduler.of(profile, dict(recipe.serving.flags)),
        limits=recipe.sweep.slo.limits,
        percentile=recipe.sweep.slo.percentile,
        input_len=recipe.sweep.input_len,
        output_len=recipe.sweep.output_len,
    )


def bench_truth(port: int) -> None:
    searches = int(os.environ.get("BENCH_SEARCHES", SEARCHES))
    print("\n## The runner's statistics against the simulator's truth (examples/sim-tiny, profile ci)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "examples"
        shutil.copytree(REPO / "examples" / RECIPE, root / RECIPE, ignore=shutil.ignore_patterns("runs"))
        shutil.copytree(REPO / "examples" / "tiny-cpu" / "model", root / "tiny-cpu" / "model")
        folder = root / RECIPE
        truth = true_capacity(folder)
        slo = load_entry(folder).recipe.sweep.slo
        assert slo is not None
        print(f"SLO: {slo.describe()}; true capacity {truth:.2f} req/s (virtual time, 600 s per rate)", flush=True)

        alarms, slowdown = bench_regression(root, port)

        grid = [round(truth / STEP ** (GRID // 2) * STEP**i, 3) for i in range(GRID)]
        grid_folder = root / f"{RECIPE}-grid"
        shutil.copytree(folder, grid_folder)
        _set_open_loop(grid_folder, grid, min_requests=deciding(slo))
        _, gridded = _refresh(root, grid_folder.name, port)
        grid_s = sum(wall for wall, _ in _walls(gridded, "r").values())
        print(
            f"\ngrid of {GRID} rates {grid[0]:g}..{grid[-1]:g} req/s, at least {deciding(slo)} requests each: "
            f"{grid_s:.0f} s",
            flush=True,
        )

        print(f"\n## {searches} capacity searches against the truth", flush=True)
        within = covers = 0
        probe_walls: list[float] = []
        for i in range(1, searches + 1):
            _edit(folder, {"serving.simulator.seed": i})
            _, run = _refresh(root, RECIPE, port, "--capacity")
            cap = run["capacity"] or {}
            found = cap.get("rps")
            low, high = cap.get("decided_rps") or (None, None)
            near = found is not None and abs(found / truth - 1) <= 0.10
            holds = (low is None or low <= truth) and (high is None or truth <= high) and (low or high) is not None
            within += near
            covers += holds
            walls = sum(wall for wall, _ in _walls(run, "probe").values())
            probe_walls.append(walls)
            ratio = f"{found / truth - 1:+.0%}" if found else "none"
            print(
                f"search {i}: {found} req/s ({ratio} of the truth), decided interval {low}..{high} "
                f"({'holds' if holds else 'misses'} the truth), {cap.get('probes')} probes, {walls:.0f} s; "
                f"so far within 10 %: {within}/{i}, covering: {covers}/{i}",
                flush=True,
            )
        mean_search = statistics.mean(probe_walls) if probe_walls else 0.0
        print(
            f"search probes {mean_search:.0f} s on average against the grid's {grid_s:.0f} s: "
            f"ratio {mean_search / grid_s:.2f} (target <= 0.5)",
            flush=True,
        )
        print(f"searches within 10 % of truth: {within}/{searches}")
        print(f"interval covers truth: {covers}/{searches}")
        print(f"no-change alarms: {alarms}/{NOCHANGE}")
        print(f"slowdown flagged: {'yes' if slowdown else 'no'}")
