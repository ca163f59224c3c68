"""How long a refresh will take, phase by phase, printed by `refresh --dry-run` before anything starts.

Each phase comes from the best source there is, and says which:
1. the recipe's newest run of the same workload, when its notes timed that phase (the runner writes `server healthy
   after X s` and `<level>: X s wall, ...` for every level and probe);
2. for a simulated recipe, the simulator's truth (simulator/truth.py): the level run in virtual time;
3. the newest run's figures: a closed-loop level is ceil(requests / concurrency) rounds of its mean E2E latency (or of
   output tokens × concurrency ÷ generation tok/s where it gives no E2E), at
   the nearest concurrency that run measured.
The capacity search is PROBES probes of the window probe_size gives at the lowest level's E2E (each at least 30
E2E), within the recipe's search budget; PROBES is the median number of probes of the committed searches."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from catalogue.models.benchmark import BenchmarkRun
from catalogue.models.launch import sweep_workload
from catalogue.models.loading import Entry
from catalogue.stats.probe_size import WINDOW_E2E
from runner.planning.jobs import Job
from runner.planning.plan import Plan
from simulator.profile import load_profile
from simulator.truth import Level, Scheduler, simulate

OUTSIDE_S = 0.8
"""Seconds a level spends outside its benchmark window (the client's request set-up and result file): 0.7-0.9 s in
the notes of the committed tiny runs."""
PROBES = 12
"""Probes of a capacity search: 12 and 13 in the committed capacity runs, 13-18 on the simulator's CI profile."""
SETUP_S = 50.0
"""What a refresh spends outside its phases: the client's start (it imports vLLM), preflight, the flag snapshot, the
passports before and after, stopping and recording. The sim-spark-gptoss-120b refresh of 2026-11-27 took 286.7 s
of wall time on a shared two-core machine for 236.9 s of timed phases."""
SIMULATOR_BOOT_S = 2.0
"""The simulator answers /health within about a second of its start (aiohttp and the tokenizer load)."""
_WALL = re.compile(r"^(?P<name>[\w.-]+): (?P<wall>[\d.]+) s wall")
_BOOT = re.compile(r"^server healthy after (?P<s>[\d.]+) s")


@dataclass(frozen=True)
class Phase:
    """One phase of the refresh: its estimated seconds (None: not known) and where the figure comes from."""

    name: str
    seconds: float | None
    basis: str


def _timed_run(entry: Entry) -> BenchmarkRun | None:
    """The newest run of the recipe's present workload (its walls are comparable)."""
    key = sweep_workload(entry.recipe).key
    runs = [run for run in entry.runs if run.workload is not None and run.workload.key == key and not run.part]
    return runs[-1] if runs else None


def _walls(run: BenchmarkRun | None) -> dict[str, float]:
    out = {}
    for note in run.notes if run else []:
        if match := _WALL.match(note):
            out[match["name"]] = float(match["wall"])
    return out


def _level(entry: Entry, job: Job, walls: dict[str, float]) -> Phase:
    name = job.name
    if name in walls:
        return Phase(name, walls[name], "timed in the newest run of this workload")
    requests = int(job.argv[job.argv.index("--num-prompts") + 1]) + entry.recipe.sweep.warmups
    if job.rate is not None:
        e2e = _e2e_s(entry, 1)
        if e2e is None:
            return Phase(name, None, "no E2E latency known")
        return Phase(name, requests / job.rate + e2e + OUTSIDE_S, f"{requests} requests at {job.rate:g} req/s")
    concurrency = job.concurrency or 1
    simulator = entry.recipe.serving.simulator
    if simulator is not None:
        level = _truth(entry, requests, concurrency, job.prompt_tokens)
        return Phase(name, requests / level.request_rps + OUTSIDE_S, f"the {simulator.profile} profile's truth")
    e2e = _e2e_s(entry, concurrency)
    if e2e is None:
        return Phase(name, None, "no run of this recipe gives an E2E latency")
    rounds = math.ceil(requests / concurrency)
    return Phase(name, rounds * e2e + OUTSIDE_S, f"{rounds} rounds of the newest run's E2E ({e2e:.1f} s)")


def _truth(entry: Entry, requests: int, concurrency: int, prompt_tokens: int | None = None) -> Level:
    """A closed-loop level of a simulated recipe in virtual time."""
    simulator = entry.recipe.serving.simulator
    assert simulator is not None
    profile = load_profile(simulator.profile, slowdown=simulator.slowdown, slowdown_above=simulator.slowdown_above)
    return simulate(
        profile,
        Scheduler.of(profile, dict(entry.recipe.serving.flags)),
        prompts=requests,
        input_len=prompt_tokens or entry.recipe.sweep.input_len,
        output_len=entry.recipe.sweep.output_len,
        concurrency=concurrency,
    )


def _e2e_s(entry: Entry, concurrency: int) -> float | None:
    """The mean E2E latency, s, at `concurrency`: the simulator's truth, or the newest run's at the nearest
    concurrency it measured."""
    if entry.recipe.serving.simulator is not None:
        return _truth(entry, 4 * concurrency, concurrency).mean("e2e") / 1000
    run = entry.latest
    stated = run.workload.output_len if run and run.workload else None
    output = stated or entry.recipe.sweep.output_len  # a run that does not state it: the recipe's planned length
    known = {}
    for level in run.levels if run else []:
        if level.e2e_ms is not None and level.e2e_ms.mean is not None:
            known[level.concurrency] = level.e2e_ms.mean / 1000
        elif output and level.generation_tps:  # each stream's tokens at the level's output rate
            known[level.concurrency] = output * level.concurrency / level.generation_tps
    if not known:
        return None
    return known[min(known, key=lambda c: abs(math.log(c / concurrency)))]


def estimate(entry: Entry, plan: Plan) -> list[Phase]:
    """Every phase of the planned refresh, in order."""
    recipe = entry.recipe
    run = _timed_run(entry)
    walls = _walls(run)
    boot = next((float(m["s"]) for note in (run.notes if run else []) if (m := _BOOT.match(note))), None)
    if boot is not None:
        phases = [Phase("boot", boot, "timed in the newest run of this workload")]
    elif recipe.serving.simulator is not None:
        phases = [Phase("boot", SIMULATOR_BOOT_S, "the simulator's start")]
    else:
        phases = [Phase("boot", None, f"not timed yet: at most health_timeout_s, {recipe.sweep.health_timeout_s} s")]
    levels = [_level(entry, job, walls) for job in plan.levels]
    phases += levels
    if plan.capacity and recipe.sweep.open_loop is not None:
        phases.append(_capacity(entry, run))
    if recipe.sweep.quality.enabled:
        took = [
            float(m[1]) for note in (run.notes if run else []) if (m := re.search(r"^quality .* in ([\d.]+) s", note))
        ]
        phases.append(
            Phase("quality", sum(took), "timed in the newest run") if took else Phase("quality", None, "not timed yet")
        )
    if recipe.sweep.arena is not None:
        phases.append(Phase("arena", None, "not estimated: llama-benchy's runs are not timed in the run file"))
    phases.append(Phase("set-up and record", SETUP_S, "client start, preflight, flag snapshot, passports, record"))
    return phases


def _capacity(entry: Entry, run: BenchmarkRun | None) -> Phase:
    open_loop = entry.recipe.sweep.open_loop
    assert open_loop is not None
    if run is not None and run.capacity is not None and run.capacity.search_s:
        return Phase("capacity search", run.capacity.search_s, "timed in the newest run of this workload")
    e2e = _e2e_s(entry, 1)
    if e2e is None:
        return Phase("capacity search", None, "no E2E latency known")
    window = max(open_loop.min_window_s, WINDOW_E2E * e2e)
    seconds = min(open_loop.search_budget_s, PROBES * (window + e2e + OUTSIDE_S))
    return Phase(
        "capacity search",
        seconds,
        f"{PROBES} probes of {window:.0f} s (the larger of the recipe's window and {WINDOW_E2E} E2E of {e2e:.1f} s), "
        f"within the budget of {open_loop.search_budget_s:g} s",
    )


def lines(phases: list[Phase]) -> list[str]:
    """The dry run's estimate: a line per phase, then the total of the known ones."""
    out = ["", "estimated wall time:"]
    for phase in phases:
        figure = f"{phase.seconds:,.0f} s" if phase.seconds is not None else "unknown"
        out.append(f"  {phase.name}: {figure} ({phase.basis})")
    known = sum(p.seconds for p in phases if p.seconds is not None)
    unknown = [p.name for p in phases if p.seconds is None]
    out.append(f"  total: {known / 60:,.1f} min" + (f", plus {', '.join(unknown)} (not known)" if unknown else ""))
    return out
