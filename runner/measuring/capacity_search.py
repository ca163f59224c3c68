"""`--capacity`: drive catalogue.stats.capacity's search against the running servers, one probe at a time, through the
same benchmark client process as the planned levels (it waits for each probe's command on its standard input)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable

from catalogue.models.benchmark import Capacity, RateLevel
from catalogue.models.recipe import Recipe
from catalogue.models.slo import Slo, probe_name
from catalogue.stats import capacity, capacity_verdict
from catalogue.stats.capacity_conditioning import flat_limit
from runner.measuring.sweep import Sweep
from runner.planning.jobs import rate_job
from runner.planning.plan import Plan
from runner.state import Progress

OVERHEAD_S = 2.0
"""What a probe costs beyond its window before one has been measured (import is done; the tail drains)."""


def by_rate(levels: Iterable[RateLevel]) -> dict[float, list[RateLevel]]:
    """Open-loop levels (a search's probes and planned rates), grouped by offered rate in the order given."""
    groups: dict[float, list[RateLevel]] = {}
    for level in levels:
        if level.offered_rps is not None:
            groups.setdefault(level.offered_rps, []).append(level)
    return groups


def rate_verdict(levels: list[RateLevel], slo: Slo) -> capacity.Verdict:
    """One rate's verdict: its levels pooled, settled on its percentile once it has had its tries."""
    return capacity.judge_pooled(levels, slo, settle=len(levels) >= capacity.MAX_TRIES)


def points(progress: Progress, slo: Slo, failures: dict[str, str]) -> list[capacity.Point]:
    """A point per rate measured so far, its levels' requests pooled into one verdict, and the probes the client
    could not run."""
    out = [
        capacity.Point(
            rate,
            rate_verdict(levels, slo),
            probe=any(lv.probe is not None for lv in levels),
            tries=len(levels),
        )
        for rate, levels in by_rate(progress.rates.values()).items()
    ]
    for name, error in failures.items():
        rate = progress.probe_jobs[name].rate
        assert rate is not None
        out.append(capacity.Point(rate, capacity.Verdict(False, error, outright=True)))
    return out


def e2e_estimate(progress: Progress, slo: Slo) -> float | None:
    """Mean end-to-end latency to size the next probe by, ms: the newest probe's that did not saturate, else the
    slowest closed-loop level within the SLO (else the lightest level's). Where the server did not keep up, its queue
    grows for as long as the probe sends, so that probe's mean latency measures the probe's own length, not the
    server: sized from one at 54 req/s, a bench search's next probe sent 3,724 requests (99 s, its window 10 s)."""
    probes = sorted(
        (lv for lv in progress.rates.values() if lv.probe and lv.e2e_ms and lv.e2e_ms.mean),
        key=lambda lv: lv.probe or 0,
    )
    kept = [lv.e2e_ms.mean for lv in probes if lv.e2e_ms and not capacity.judge(lv, slo).saturated]
    if kept:
        return kept[-1]
    closed = [lv for lv in progress.levels.values() if lv.prompt_tokens is None and lv.e2e_ms and lv.e2e_ms.mean]
    within = [lv for lv in closed if (m := capacity_verdict.latency_margin(lv, slo)[0]) is not None and m <= 1]
    pool = within or sorted(closed, key=lambda lv: lv.concurrency)[:1]
    return max((lv.e2e_ms.mean or 0 for lv in pool if lv.e2e_ms), default=None)


def rate_verdicts(progress: Progress, slo: Slo) -> dict[float | None, str]:
    """Each offered rate's verdict as the search saw it: its levels pooled, settled once it had its tries."""
    out: dict[float | None, str] = {
        rate: rate_verdict(levels, slo).why for rate, levels in by_rate(progress.rates.values()).items()
    }
    for level in progress.rates.values():
        if level.offered_rps is None:
            out[None] = capacity.judge(level, slo).why
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
        earlier = by_rate(progress.rates.values()).get(step.rate, [])
        requests = capacity.probe_requests(open_loop, slo, step.rate, e2e_estimate(progress, slo), earlier)
        cost = requests / step.rate + (max(spent) if spent else OVERHEAD_S)
        if clock() - started + cost > open_loop.search_budget_s:
            stopped = (
                f"the search's time budget ({open_loop.search_budget_s:g} s) would run out: the next probe, "
                f"{step.rate:g} req/s, needs about {cost:.0f} s"
            )
            break
        index = next_index(progress)
        job = rate_job(template, probe_name(index), step.rate, requests, probe=index, seed_base=plan.seed_base)
        print(f"\ncapacity probe {index}: {step.rate:g} req/s ({requests} requests)", file=sys.stderr)
        before = clock()
        sweep.one(job)
        level = progress.rates.get(job.name)
        if level is not None and level.duration_s is not None:
            spent.append(max(0.0, clock() - before - level.duration_s))
        verdict = capacity.judge(level, slo).why if level is not None else sweep.failures.get(job.name, "no result")
        print(f"capacity probe {index}: {verdict}", file=sys.stderr)
    sweep.end()
    newest = {rate: levels[-1] for rate, levels in by_rate(progress.rates.values()).items()}
    sampled = all(lv.exceed is not None for lv in progress.rates.values())
    settled = sorted(p.rate for p in found if p.verdict.settled)
    if settled:
        rates = ", ".join(f"{rate:g}" for rate in settled)
        progress.note(
            "capacity settled",
            f"capacity settled: {rates} req/s judged on their recorded percentiles after {capacity.MAX_TRIES} probes "
            f"each (undecided at {capacity_verdict.CONFIDENCE:.0%} confidence)",
        )
    ran = sum(1 for lv in progress.rates.values() if lv.probe is not None) + len(sweep.failures)
    result = capacity.result(
        found,
        newest,
        open_loop.tolerance,
        stopped,
        clock() - started,
        confidence=capacity_verdict.CONFIDENCE if sampled and progress.rates and not settled else None,
        probes=ran,
        sampled=sampled and bool(progress.rates),
    )
    progress.note("capacity search", f"capacity search: {describe(result, slo)}")
    flat = flat_limit(list(progress.rates.values()), result.rps, slo, list(progress.levels.values()))
    if flat is not None:
        progress.note("capacity flat", f"capacity flat: {flat.text()}")
        print(f"capacity: {flat.text()}", file=sys.stderr)
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
