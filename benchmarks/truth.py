"""`nox -s bench -- truth`: the runner's statistics against a known answer, on the simulator (examples/sim-tiny).

The truth comes from simulator/truth.py (the same latency model in virtual time, no HTTP, client or clock); every
figure it is compared with comes from real refreshes (`catalogue refresh`, vLLM's `vllm bench serve`) of the
simulated server. In order, each line printed as it is known:

1. the regression alarm, on a copy with levels 1, 8, 32, 64, 64 sequences and 16 requests a stream: NOCHANGE
   refreshes with nothing changed and `--fail-on-regression` (target: no alarm), then every decode step 10 % slower
   (target: flagged at every level, the figure named), then 10 % slower only in steps decoding more than 32
   sequences (target: flagged at c64 and nowhere else);
2. the capacity search: one refresh of a grid of 8 rates 10 % apart around the truth, each with enough requests to
   decide at the same confidence, then SEARCHES refreshes with `--capacity`, each with its own noise and client
   seeds, against the true capacity (target: each within ±10 %; the decided interval holds the truth in at least 18
   of 20; the search's probes take at most half the grid's wall time). A running tally follows each search.

Before them, in seconds, the same searches, the grid at the search's confidence and the alarm's sweeps in virtual
time (benchmarks/truth_virtual.py): the statistics' own error, apart from the machine's. After every refresh, the
simulator's own word on how well it kept its model's schedule (its `lateness` line: a starved event loop shows there).
The refreshes run at raised priority where the bench may set it (PRIORITY), and the bench's wall time comes last.

The last four lines are the summary: searches within 10 %, intervals covering, no-change alarms, slowdown flagged.
BENCH_SEARCHES=N runs fewer searches (the summary says of how many)."""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

from benchmarks.capacity import _set_open_loop, _walls
from benchmarks.synthetic import REPO
from benchmarks.truth_virtual import grid_wall, one_search, regression_virtual
from catalogue.models.loading import load_entry
from catalogue.stats.capacity import MAX_TRIES
from catalogue.stats.probe_size import deciding
from catalogue.stats.regression import report
from runner.refresh import REGRESSED
from simulator.profile import load_profile
from simulator.server import lateness_line
from simulator.truth import Scheduler, capacity

RECIPE = "sim-tiny"
SEARCHES = 20
NOCHANGE = 5
REGRESSION_LEVELS = [1, 8, 32, 64]
ROUNDS = 16
"""Requests per stream of the alarm's levels: a closed loop's streams send together and wait alike, so a level's
TTFT mean is worth about its rounds (at 4, a c64 level was four samples, and its TTFT moved ±20 % between refreshes);
16 rounds cost 18 s a refresh more."""
GRID = 8
SEED_STEP = 100_000
"""Search i sends its client seeds moved by i x this (`refresh --seed-base`): the runner seeds probe n with 10,000 + n
in every refresh, so without it every search replayed the same arrivals, and one probe's burst at 18 req/s set
four of the first five searches 35 % below the truth."""
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


REALTIME = 10
"""SCHED_FIFO priority of each refresh's simulator and benchmark client (runner/scripts/driver.py), where the bench may
set it: niceness was not enough when other work held the machine at a load of 11 (steps ended up to 436 ms late, and a
no-change refresh read every level slower). Both mostly wait; the runner, the flag snapshot and the rest keep the
ordinary scheduler."""
TIMED = ("/runner/driver.py", "-m\0simulator\0")


def _descendants(root: int) -> list[int]:
    """Every process below `root`, from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        found += (children := parents.get(todo.pop(), []))
        todo += children
    return found


def _realtime(root: int, stop: threading.Event) -> None:
    """Until `stop`: the simulator and the client below `root` to SCHED_FIFO REALTIME, once each."""
    done: set[int] = set()
    while not stop.wait(0.1):
        for pid in set(_descendants(root)) - done:
            with contextlib.suppress(OSError):
                if any(mark in Path(f"/proc/{pid}/cmdline").read_text() for mark in TIMED):
                    os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(REALTIME))
                    done.add(pid)


def _refresh(root: Path, name: str, port: int, *extra: str) -> tuple[int, dict]:
    """One refresh of `name`; its exit code and its newest run file."""
    argv = [sys.executable, "-m", "catalogue", "--root", str(root), "refresh", name, "--port", str(port)]
    with subprocess.Popen(  # other work holds containers and memory: a simulated server uses neither
        [*argv, "--allow", "no container", "--allow-state", "containers", "--allow-state", "memory", *extra],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        stop = threading.Event()
        watcher = threading.Thread(target=_realtime, args=(process.pid, stop), daemon=True)
        watcher.start()
        _, stderr = process.communicate()
        stop.set()
        watcher.join()
    if process.returncode not in (0, REGRESSED):
        raise SystemExit(f"refresh failed (exit {process.returncode}):\n{stderr[-3000:]}")
    entry = load_entry(root / name)
    assert entry.latest is not None
    log = root / name / "runs" / entry.latest.stamp / "server.log"
    print(f"  {lateness_line(log)}", flush=True)
    return process.returncode, entry.latest.model_dump(mode="json")


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
    _edit(
        folder,
        {"sweep.concurrency": REGRESSION_LEVELS, "sweep.prompts_per_stream": ROUNDS, "serving.flags.max-num-seqs": 64},
    )
    print(f"\n## Regression alarm: levels {REGRESSION_LEVELS}, 64 sequences, band of {name}", flush=True)
    entry = load_entry(folder)
    assert entry.recipe.serving.simulator is not None
    nochange, everywhere, above = regression_virtual(
        entry, load_profile(entry.recipe.serving.simulator.profile), NOCHANGE
    )
    print(
        f"virtual: no-change alarms {sum(bool(found) for found in nochange)}/{NOCHANGE}; decode steps 10 % slower: "
        f"{', '.join(everywhere) or 'nothing'}; above 32 sequences: {', '.join(above) or 'nothing'}",
        flush=True,
    )
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


def _covers(truth: float, low: float | None, high: float | None) -> bool:
    """The decided interval holds the truth, and has at least one end."""
    return (low is None or low <= truth) and (high is None or truth <= high) and (low or high) is not None


def bench_virtual(folder: Path, truth: float, searches: int) -> None:
    """The searches and the grid in virtual time (benchmarks/truth_virtual.py): the statistics' own figures."""
    entry = load_entry(folder)
    assert entry.recipe.serving.simulator is not None
    profile = load_profile(entry.recipe.serving.simulator.profile)
    print(f"\n## {searches} capacity searches in virtual time (no HTTP, client or clock)", flush=True)
    within = covers = 0
    walls = []
    for seed in range(1, searches + 1):
        found, wall = one_search(entry, profile, seed)
        low, high = found.decided_rps or (None, None)
        within += found.rps is not None and abs(found.rps / truth - 1) <= 0.10
        covers += _covers(truth, low, high)
        walls.append(wall)
    grid = [round(truth / STEP ** (GRID // 2) * STEP**i, 3) for i in range(GRID)]
    grid_s, decided = grid_wall(entry, profile, grid, seed=1)
    mean = statistics.mean(walls)
    print(
        f"virtual: within 10 % of the truth {within}/{searches}, interval covers it {covers}/{searches}; probes "
        f"{mean:.0f} s on average against {grid_s:.0f} s for the grid of {GRID} rates probed to decide as the search "
        f"does ({decided} of {GRID} decided in {MAX_TRIES} tries): ratio {mean / grid_s:.2f} (target <= 0.5)",
        flush=True,
    )


PRIORITY = -15
"""The niceness the refreshes run at, where the bench may set it: the simulator steps in real time and the client
times it, so on a shared machine (a load of 10 on two cores) both must get the CPU when they wake; they use little
of it. Whether they did, each refresh's lateness line says."""


def _raise_priority() -> str:
    try:
        os.setpriority(os.PRIO_PROCESS, 0, PRIORITY)
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))  # the bench itself stays ordinary
    except OSError as exc:
        return f"refreshes at the default priority ({exc.strerror})"
    try:
        os.sched_get_priority_max(os.SCHED_FIFO)
    except OSError:
        return f"refreshes at niceness {PRIORITY}"
    return f"refreshes at niceness {PRIORITY}, their simulator and client at SCHED_FIFO {REALTIME} where allowed"


def bench_truth(port: int) -> None:
    searches = int(os.environ.get("BENCH_SEARCHES", SEARCHES))
    began = time.monotonic()
    print(
        f"\n## The runner's statistics against the simulator's truth (examples/sim-tiny, profile ci; "
        f"{_raise_priority()})"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "examples"
        shutil.copytree(REPO / "examples" / RECIPE, root / RECIPE, ignore=shutil.ignore_patterns("runs"))
        shutil.copytree(REPO / "examples" / "tiny-cpu" / "model", root / "tiny-cpu" / "model")
        folder = root / RECIPE
        truth = true_capacity(folder)
        slo = load_entry(folder).recipe.sweep.slo
        assert slo is not None
        print(f"SLO: {slo.describe()}; true capacity {truth:.2f} req/s (virtual time, 600 s per rate)", flush=True)
        bench_virtual(folder, truth, searches)

        alarms, slowdown = bench_regression(root, port)

        grid = [round(truth / STEP ** (GRID // 2) * STEP**i, 3) for i in range(GRID)]
        grid_folder = root / f"{RECIPE}-grid"
        shutil.copytree(folder, grid_folder)
        _set_open_loop(grid_folder, grid, min_requests=deciding(slo))
        _, gridded = _refresh(root, grid_folder.name, port)
        grid_s = sum(wall for wall, _ in _walls(gridded, "r").values())
        print(
            f"\ngrid of {GRID} rates {grid[0]:g}..{grid[-1]:g} req/s, at least {deciding(slo)} requests each, probed "
            f"once (it decides only where none of them is over a limit): {grid_s:.0f} s",
            flush=True,
        )

        print(f"\n## {searches} capacity searches against the truth", flush=True)
        within = covers = 0
        probe_walls: list[float] = []
        for i in range(1, searches + 1):
            _edit(folder, {"serving.simulator.seed": i})
            _, run = _refresh(root, RECIPE, port, "--capacity", "--seed-base", str(SEED_STEP * i))
            cap = run["capacity"] or {}
            found = cap.get("rps")
            low, high = cap.get("decided_rps") or (None, None)
            near = found is not None and abs(found / truth - 1) <= 0.10
            holds = _covers(truth, low, high)
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
        print(f"truth bench: {time.monotonic() - began:.0f} s", flush=True)
        print(f"searches within 10 % of truth: {within}/{searches}")
        print(f"interval covers truth: {covers}/{searches}")
        print(f"no-change alarms: {alarms}/{NOCHANGE}")
        print(f"slowdown flagged: {'yes' if slowdown else 'no'}")
