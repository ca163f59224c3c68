"""`--capacity`: drive catalogue.capacity's search against the running servers, one probe at a time, through the
same benchmark client process as the planned levels (it waits for each probe's command on its standard input)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from catalogue import capacity
from catalogue.benchmark import Capacity, RateLevel
from catalogue.recipe import Recipe
from catalogue.slo import Slo, probe_name
from runner.jobs import rate_job
from runner.plan import Plan
from runner.state import Progress
from runner.sweep import Sweep

OVERHEAD_S = 2.0
"""What a probe costs beyond its window before one has been measured (import is done; the tail drains)."""


def points(progress: Progress, slo: Slo, failures: dict[str, str]) -> list[capacity.Point]:
    """Every open-loop level measured so far (planned rates too), and the probes the client could not run."""
    out = [
        capacity.Point(level.offered_rps, capacity.judge(level, slo), probe=level.probe is not None)
        for level in progress.rates.values()
        if level.offered_rps is not None
    ]
    for name, error in failures.items():
        rate = progress.probe_jobs[name].rate
        assert rate is not None
        out.append(capacity.Point(rate, capacity.Verdict(False, error, outright=True)))
    return out


def next_index(progress: Progress) -> int:
    """The next probe's number: after every probe recorded (a resumed search goes on counting)."""
    numbers = [lv.probe for lv in progress.rates.values()] + [job.probe for job in progress.probe_jobs.values()]
    return max((n for n in numbers if n is not None), default=0) + 1


def search(
    plan: Plan,
    recipe: Recipe,
    sweep: Sweep,
    progress: Progress,
    clock: Callable[[], float] = time.monotonic,
) -> Capacity:
    """Probe until the bracket closes, the search must stop, or its time budget would run out; then the result."""
    open_loop, slo, template = recipe.sweep.open_loop, recipe.sweep.slo, plan.probe_template
    assert open_loop is not None and slo is not None and template is not None
    first, ceiling = capacity.start(list(progress.levels.values()), slo)
    started = clock()
    spent: list[float] = []
    stopped: str | None = None
    while True:
        found = points(progress, slo, sweep.failures)
        step = capacity.next_step(found, first, ceiling, open_loop.tolerance)
        if step.rate is None:
            stopped = step.stopped
            break
        requests = open_loop.requests_at(step.rate)
        cost = requests / step.rate + (max(spent) if spent else OVERHEAD_S)
        if clock() - started + cost > open_loop.search_budget_s:
            stopped = (
                f"the search's time budget ({open_loop.search_budget_s:g} s) would run out: the next probe, "
                f"{step.rate:g} req/s, needs about {cost:.0f} s"
            )
            break
        index = next_index(progress)
        job = rate_job(template, probe_name(index), step.rate, requests, probe=index)
        print(f"\ncapacity probe {index}: {step.rate:g} req/s ({requests} requests)", file=sys.stderr)
        before = clock()
        sweep.one(job)
        level = progress.rates.get(job.name)
        if level is not None and level.duration_s is not None:
            spent.append(max(0.0, clock() - before - level.duration_s))
        verdict = capacity.judge(level, slo).why if level is not None else sweep.failures.get(job.name, "no result")
        print(f"capacity probe {index}: {verdict}", file=sys.stderr)
    sweep.end()
    by_rate: dict[float, RateLevel] = {lv.offered_rps: lv for lv in progress.rates.values() if lv.offered_rps}
    result = capacity.result(found, by_rate, open_loop.tolerance, stopped, clock() - started)
    progress.note("capacity search", f"capacity search: {describe(result, slo)}")
    return result


def describe(result: Capacity, slo: Slo) -> str:
    """One line for the log and the run's notes."""
    probes = f"{result.probes} probe{'s' if result.probes != 1 else ''}"
    took = f", {result.search_s:.0f} s" if result.search_s is not None else ""
    if result.rps is None:
        return f"no rate met {slo.describe()} ({probes}{took}): {result.stopped}"
    bracket = f"; {result.upper_rps:g} req/s missed" if result.upper_rps else ""
    end = "" if result.converged else f"; stopped early: {result.stopped}"
    return f"{result.rps:g} req/s within {slo.describe()}{bracket} ({probes}{took}){end}"
