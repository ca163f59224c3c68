"""`nox -s bench -- capacity`: what the capacity search costs against a fixed grid of rates of the same precision.

Both run on the tiny CPU recipe with the example's SLO, each in one refresh (one boot). The search starts from the
closed-loop levels, as it does in a real refresh, with no planned rates to lean on. The grid has eight rates 10 % apart
(8 rates x 10 % cover a 1.9x range): what someone without a search would run to pin the capacity to 10 %, placed around
the search's answer (generous to the grid). Reported: probes, wall time of the open-loop part, the capacity each finds,
the ratio, and the time outside the benchmark window per probe (target: at most 1 s). The search runs SEARCHES times
first, and the spread of its answers is printed (target: within ±15 %), each beside its boot's closed-loop speed, its
probes' verdicts and, where its objective binds at the server's noise rather than its load, the caution its run carries
(catalogue.stats.capacity_conditioning), and the verdicts decided at 99 % that cross between searches (one met a rate
above one another missed: the server, not the rule, moved). Every refresh runs with `--cpus` on the last core this
process may use (runner.hosts.cpu_placement: spread over a small VM's cores the same searches spread ±20-63 %);
BENCH_CPUS=split starts the client on the first core (`--client-cpus`), BENCH_CPUS=all leaves the placement to the
system."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from benchmarks.synthetic import REPO
from catalogue.models.benchmark import RateLevel
from catalogue.models.loading import load_entry
from catalogue.models.slo import Slo
from catalogue.stats.capacity import judge_pooled, start
from catalogue.stats.capacity_verdict import CONFIDENCE
from catalogue.stats.probe_size import deciding
from runner.measuring.capacity_search import by_rate

RECIPE = "tiny-cpu-capacity"
GRID = 8
STEP = 1.1
SEARCHES = 3
"""Searches run back to back in one bench run: their spread is the search's own repeatability."""


def _cpus() -> list[str]:
    """The whole run on the last core this process may use (`--cpus N`); BENCH_CPUS=split starts the benchmark
    client on the first core instead (`--client-cpus`), BENCH_CPUS=all places nothing."""
    placement = os.environ.get("BENCH_CPUS", "one")
    if placement == "all":
        return []
    cores = sorted(os.sched_getaffinity(0))
    server = ["--cpus", str(cores[-1])]
    if placement != "split" or len(cores) < 2:
        return server
    return [*server, "--client-cpus", str(cores[0])]


def _refresh(root: Path, port: int, *extra: str) -> dict:
    argv = [sys.executable, "-m", "catalogue", "--root", str(root), "refresh", RECIPE, "--port", str(port), *_cpus()]
    done = subprocess.run(  # a local process: the owner's consent, given by name
        [*argv, "--allow", "no container", *extra], cwd=REPO, stderr=subprocess.PIPE, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"refresh failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    run_file = max((root / RECIPE / "runs").glob("*.json"))
    return json.loads(run_file.read_text())


def _set_open_loop(folder: Path, rates: list[float], min_requests: int | None = None) -> None:
    path = folder / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    data["sweep"]["open_loop"]["rates"] = rates
    if min_requests is not None:
        data["sweep"]["open_loop"]["min_requests"] = min_requests
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _walls(run: dict, prefix: str) -> dict[str, tuple[float, float]]:
    """{level name: (wall s, s outside the benchmark window)} from the run's notes."""
    out = {}
    for note in run["notes"]:
        name, _, rest = note.partition(": ")
        if name.startswith(prefix) and " s wall, " in rest:
            wall, outside = rest.split(" s wall, ")
            out[name] = (float(wall), float(outside.split(" s ")[0]))
    return out


def _boot_speed(run: dict) -> str:
    """The boot's own speed before its search: each closed-loop level's mean TPOT at the client and on the engine's
    clock, and the CPU calibration before it (does a faster boot find a higher capacity?)."""
    parts = []
    for level in run["levels"]:
        if level.get("prompt_tokens") is not None:
            continue
        tpot = (level.get("tpot_ms") or {}).get("mean")
        engine = (level.get("engine") or {}).get("tpot_ms")
        calibration = (level.get("calibration_ms") or [None])[0]
        parts.append(
            f"c{level['concurrency']} TPOT {tpot:.2f} ms"
            + (f" (engine {engine:.2f})" if engine else "")
            + (f", calibration {calibration:g} ms" if calibration else "")
        )
    return "; ".join(parts) or "no closed-loop level"


def _probe_verdicts(run: dict) -> str:
    """Each probe's rate, requests and verdict in a word (met, missed, undecided, saturated), in the order sent."""
    out = []
    for level in sorted((lv for lv in run["rates"] if lv.get("probe")), key=lambda lv: lv["probe"]):
        verdict = str(level.get("verdict", ""))
        if verdict == "meets":
            word = "met"
        elif verdict.startswith("undecided") or "not decided" in verdict:
            word = "undecided"
        elif verdict.startswith("saturated"):
            word = "saturated"
        else:
            word = "missed"
        out.append(f"{level['offered_rps']:g} ({level.get('completed')}) {word}")
    return ", ".join(out)


def decided(run: dict, slo: Slo) -> dict[float, bool]:
    """Each rate of a run whose pooled verdict was decided: True where it met at CONFIDENCE, False where it missed
    at CONFIDENCE, saturated or failed. Rates still undecided (or settled on their percentile) are left out."""
    out = {}
    for rate, levels in by_rate(RateLevel.model_validate(raw) for raw in run["rates"]).items():
        verdict = judge_pooled(levels, slo)
        if not verdict.undecided:
            out[rate] = verdict.meets
    return out


def contradictions(runs: list[dict], slo: Slo) -> list[str]:
    """Pairs of searches where one decided a rate met above a rate the other decided missed. Each verdict is wrong
    at most 1 - CONFIDENCE of the time, so such a pair says the server itself served differently between the two
    searches: a spread the search's rule cannot narrow."""
    verdicts = [decided(run, slo) for run in runs]
    out = []
    for i, one in enumerate(verdicts, 1):
        met = [rate for rate, ok in one.items() if ok]
        for j, other in enumerate(verdicts, 1):
            missed = [rate for rate, ok in other.items() if not ok]
            if i != j and met and missed and max(met) > min(missed):
                out.append(f"search {i} met {max(met):g} req/s, search {j} missed {min(missed):g}")
    return out


def bench_capacity(port: int) -> None:
    print("\n## Capacity search vs a fixed grid of the same precision (tiny CPU recipe)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "examples"
        for name in ("tiny-cpu", RECIPE):
            shutil.copytree(REPO / "examples" / name, root / name, ignore=shutil.ignore_patterns("runs"))
        folder = root / RECIPE
        _set_open_loop(folder, [])
        recipe = load_entry(folder).recipe
        assert recipe.sweep.slo is not None and recipe.sweep.open_loop is not None
        print(f"SLO: {recipe.sweep.slo.describe()}; window {recipe.sweep.open_loop.min_window_s:g} s per rate")
        print(f"placement: {' '.join(_cpus()) or 'as the system chose (BENCH_CPUS=all)'}")

        searches = [_refresh(root, port, "--capacity") for _ in range(SEARCHES)]
        for i, run in enumerate(searches, 1):
            cap = run["capacity"]
            probes = _walls(run, "probe")
            rates = ", ".join(f"{lv['offered_rps']:g}" for lv in run["rates"])
            print(
                f"search {i}: capacity {cap.get('rps')} req/s, {cap.get('upper_rps')} req/s missed "
                f"({cap['probes']} probes at {rates} req/s, {cap['search_s']:.1f} s wall"
                + (f"; stopped: {cap['stopped']}" if cap.get("stopped") else "")
                + ")"
            )
            print(f"  its boot: {_boot_speed(run)}")
            print(f"  its probes: {_probe_verdicts(run)}")
            for note in run["notes"]:
                if note.startswith("capacity flat: "):
                    print(f"  noise-bound: {note.removeprefix('capacity flat: ')}")
        found = [run["capacity"]["rps"] for run in searches if run["capacity"].get("rps")]
        if found:
            middle = sorted(found)[len(found) // 2]
            spread = max(abs(rate / middle - 1) for rate in found)
            print(f"spread of {len(found)} searches: ±{spread:.0%} around the median {middle:g} req/s (target ≤ ±15 %)")
        crossed = contradictions(searches, recipe.sweep.slo)
        print(
            f"verdicts decided at {CONFIDENCE:.0%} that cross between searches (the server served differently, not the "
            f"rule misjudged): {'; '.join(crossed) if crossed else 'none'}"
        )
        searched = searches[-1]
        cap = searched["capacity"]
        probes = _walls(searched, "probe")
        probe_s = sum(wall for wall, _ in probes.values())

        # The grid is centred on the search's answer: generous to the grid, which cannot know where to look.
        centre = cap.get("rps") or start(load_entry(folder).latest.levels, recipe.sweep.slo)[0]
        low = centre / STEP ** (GRID // 2)
        grid = [round(low * STEP**i, 3) for i in range(GRID)]
        # at the same confidence: each rate sends enough requests to show the percentile met
        decidable = deciding(recipe.sweep.slo)
        _set_open_loop(folder, grid, min_requests=decidable)
        gridded = _refresh(root, port)
        walls = _walls(gridded, "r")
        grid_s = sum(wall for wall, _ in walls.values())
        verdicts = [(lv["offered_rps"], lv.get("verdict") == "meets") for lv in gridded["rates"]]
        met = [rate for rate, ok in verdicts if ok]
        missed = [rate for rate, ok in verdicts if not ok and (not met or rate > max(met))]
        print(
            f"grid: {GRID} rates {grid[0]:g}..{grid[-1]:g} req/s ({STEP - 1:.0%} apart, around the search's answer; "
            f"at least {decidable} requests each)"
        )
        undecided = [lv["offered_rps"] for lv in gridded["rates"] if str(lv.get("verdict", "")).startswith("undecided")]
        if undecided:
            print(f"grid: undecided at {', '.join(f'{rate:g}' for rate in undecided)} req/s (no retries in a grid)")
        print(
            f"grid: {grid_s:.1f} s; capacity {max(met) if met else 'below the grid'} req/s, "
            f"{min(missed) if missed else 'none above it'} missed"
        )
        print(f"ratio search / grid wall time: {probe_s / grid_s:.2f} (target <= 0.5)")
        outside = [o for _, o in probes.values()]
        mean = sum(outside) / len(outside)
        print(f"outside the benchmark window per probe: max {max(outside):.2f} s, mean {mean:.2f} s")
