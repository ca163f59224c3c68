"""The capacity search against the simulator's truth in virtual time: the runner's own search
(runner.measuring.capacity_search.search), probe sizing and verdicts, fed by the simulator's engine with no HTTP, client
or clock.

Each probe is the open-loop level `vllm bench serve --request-rate R --save-detailed` would send (Poisson arrivals,
the first at 0, on an idle engine), written as that client writes it and read by the runner's own reader; the
closed-loop levels before the search likewise. What this part finds is the statistics' own error; what the end-to-end
bench (benchmarks/truth.py) finds beyond it is the machine's, the client's and HTTP's. The grid at the same confidence
probes each of its eight rates as the search probes one: a window, then retries sized to decide, up to MAX_TRIES."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import itertools
import math
import random
import statistics
from dataclasses import dataclass
from typing import Any

from catalogue.imports.vllm_bench import level_from_raw, rate_level_from_raw
from catalogue.models.benchmark import BenchmarkRun, ImportedProvenance
from catalogue.models.launch import sweep_workload
from catalogue.models.loading import Entry
from catalogue.models.recipe import RegressionBand
from catalogue.stats.capacity import MAX_TRIES
from catalogue.stats.probe_size import probe_requests
from catalogue.stats.regression import report
from runner.measuring.capacity_search import rate_verdict, search
from runner.planning.jobs import Job
from runner.planning.plan import make_plan
from runner.state import Progress
from simulator.engine import Engine, Request
from simulator.profile import Profile
from simulator.truth import Scheduler, replay

OVERHEAD_S = 1.0
"""What each probe costs beyond its requests' span (the end-to-end bench measured 1-2.6 s outside the window)."""


def bench_raw(
    profile: Profile, scheduler: Scheduler, requests: int, lengths: tuple[int, int], seed: int, **load: Any
) -> dict[str, Any]:
    """One level as `vllm bench serve --save-detailed` writes it: open loop at `rate`, or closed at `concurrency`."""
    rate, concurrency = load.get("rate"), load.get("concurrency")
    engine = Engine(profile, max_num_seqs=scheduler.max_num_seqs, seed=seed, prefix_caching=False,
                    max_num_batched_tokens=scheduler.max_num_batched_tokens)  # fmt: skip
    gaps = random.Random(seed + 7)
    times = [0.0] * min(requests, concurrency or requests)
    if rate is not None:
        times = list(itertools.accumulate((gaps.expovariate(rate) for _ in range(requests - 1)), initial=0.0))
    done = replay(engine, times, requests, lengths, closed=rate is None)
    return _summary(sorted(done, key=lambda r: r.arrival), rate, concurrency, lengths)


def _summary(done: list[Request], rate: float | None, concurrency: int | None, lengths: tuple[int, int]) -> dict:
    starts = [r.arrival for r in done]
    ttfts = [(r.first_token or 0) - r.arrival for r in done]
    latencies = [(r.last_token or 0) - r.arrival for r in done]
    n, duration = len(done), max(s + lat for s, lat in zip(starts, latencies, strict=True)) - min(starts)
    raw: dict[str, Any] = {
        "request_rate": rate if rate is not None else "inf", "burstiness": 1.0, "max_concurrency": concurrency,
        "completed": n, "failed": 0, "duration": duration, "request_throughput": n / duration,
        "output_throughput": n * lengths[1] / duration, "total_input_tokens": lengths[0] * n,
        "total_output_tokens": lengths[1] * n, "start_times": starts, "ttfts": ttfts, "latencies": latencies,
        "output_lens": [lengths[1]] * n, "errors": [""] * n,
        "itls": [[b - a for a, b in zip(r.token_times, r.token_times[1:])] for r in done],
    }  # fmt: skip
    tpots = [(lat - t) / (lengths[1] - 1) * 1000 for t, lat in zip(ttfts, latencies, strict=True)]
    gaps = [gap * 1000 for itl in raw["itls"] for gap in itl]
    named = {"ttft": [x * 1000 for x in ttfts], "tpot": tpots, "e2el": [x * 1000 for x in latencies], "itl": gaps}
    for name, values in named.items():
        raw[f"mean_{name}_ms"], raw[f"std_{name}_ms"] = statistics.mean(values), statistics.pstdev(values)
        for p in (50, 90, 95, 99):
            raw[f"p{p}_{name}_ms"] = sorted(values)[min(n - 1, math.ceil(p / 100 * n) - 1)]
    return raw


@dataclass
class VirtualClient:
    """The waiting benchmark client, answered by the engine in virtual time: each probe lasts its span plus
    OVERHEAD_S on `clock`."""

    entry: Entry
    profile: Profile
    progress: Progress
    seed: int
    clock: list[float]

    def __post_init__(self) -> None:
        self.failures: dict[str, str] = {}

    def one(self, job: Job) -> None:
        assert job.rate is not None and job.probe is not None
        self.progress.probe_jobs[job.name] = job
        raw = self.measure(job.rate, int(job.argv[job.argv.index("--num-prompts") + 1]), job.probe)
        self.progress.rates[job.name] = rate_level_from_raw(raw, f"{job.name}.json", job.probe, *self.slo_args())
        self.clock[0] += raw["duration"] + OVERHEAD_S

    def measure(self, rate: float, requests: int, probe: int) -> dict[str, Any]:
        sweep = self.entry.recipe.sweep
        scheduler = Scheduler.of(self.profile, dict(self.entry.recipe.serving.flags))
        lengths = (sweep.input_len, sweep.output_len)
        return bench_raw(self.profile, scheduler, requests, lengths, self.seed * 1000 + probe, rate=rate)

    def slo_args(self) -> tuple[dict[str, float], float]:
        slo = self.entry.recipe.sweep.slo
        assert slo is not None
        return slo.limits, slo.percentile

    def end(self) -> None:
        pass


def one_search(entry: Entry, profile: Profile, seed: int) -> tuple[Any, float]:
    """One search from its closed-loop levels: (the runner's Capacity, the probes' virtual wall time, s)."""
    recipe = entry.recipe
    progress = Progress()
    scheduler = Scheduler.of(profile, dict(recipe.serving.flags))
    lengths = (recipe.sweep.input_len, recipe.sweep.output_len)
    for c in recipe.sweep.concurrency:
        n = max(recipe.sweep.prompts_per_level, c * recipe.sweep.prompts_per_stream)
        raw = bench_raw(profile, scheduler, n, lengths, seed * 100 + c, concurrency=c)
        progress.levels[f"c{c}"] = level_from_raw(raw, c, f"c{c}.json")
    clock = [0.0]
    client = VirtualClient(entry, profile, progress, seed, clock)
    plan = make_plan(entry, local=True, capacity=True, stamp="20261127T000000Z")
    with contextlib.redirect_stderr(io.StringIO()):
        found = search(plan, recipe, client, progress, lambda: clock[0])  # type: ignore[arg-type]
    return found, clock[0]


def grid_wall(entry: Entry, profile: Profile, rates: list[float], seed: int) -> tuple[float, int]:
    """The grid at the search's confidence: each rate probed for its window, then as the search retries an undecided
    rate (sized to decide), up to MAX_TRIES. (Virtual wall time, s; rates decided.)"""
    slo, open_loop = entry.recipe.sweep.slo, entry.recipe.sweep.open_loop
    assert slo is not None and open_loop is not None
    client = VirtualClient(entry, profile, Progress(), seed, [0.0])
    decided = 0
    for i, rate in enumerate(rates):
        levels = []
        e2e = None
        for attempt in range(MAX_TRIES):
            raw = client.measure(rate, probe_requests(open_loop, slo, rate, e2e, levels), 10 * i + attempt)
            levels.append(rate_level_from_raw(raw, "grid.json", attempt + 1, *client.slo_args()))
            client.clock[0] += raw["duration"] + OVERHEAD_S
            e2e = raw["mean_e2el_ms"]
            verdict = rate_verdict(levels, slo)
            if not (verdict.undecided or verdict.settled):
                decided += 1
                break
    return client.clock[0], decided


def sweep_run(entry: Entry, profile: Profile, seed: int, minute: int) -> BenchmarkRun:
    """One closed-loop sweep of the recipe in virtual time, as a run file (recorded `minute` minutes into a day)."""
    sweep = entry.recipe.sweep
    scheduler = Scheduler.of(profile, dict(entry.recipe.serving.flags))
    levels = []
    for c in sweep.concurrency:
        requests = max(sweep.prompts_per_level, c * sweep.prompts_per_stream)
        raw = bench_raw(
            profile, scheduler, requests, (sweep.input_len, sweep.output_len), seed * 100 + c, concurrency=c
        )
        levels.append(level_from_raw(raw, c, f"c{c}.json"))
    when = dt.datetime(2026, 11, 27, tzinfo=dt.UTC) + dt.timedelta(minutes=minute)
    provenance = ImportedProvenance(method="imported", source_title="virtual sweep", source="simulator/truth.py")
    return BenchmarkRun(recorded_at=when, provenance=provenance, workload=sweep_workload(entry.recipe), levels=levels)


def regression_virtual(entry: Entry, profile: Profile, nochange: int) -> tuple[list[list[str]], list[str], list[str]]:
    """The alarm's part in virtual time, as the end-to-end bench runs it: `nochange` sweeps each against those
    before, then one with every decode step 10 % slower, then one slower only above 32 sequences. (What each
    no-change sweep called regressed; what the two slowdowns did: 'c64 ITL mean', ...)."""
    band = entry.recipe.sweep.regression
    runs: list[BenchmarkRun] = []
    alarms = []
    for i in range(1, nochange + 1):
        runs.append(sweep_run(entry, profile, 1000 + i, i))
        alarms.append(_flagged(runs, band))
    slower = profile.model_copy(update={"slowdown": 1.1})
    runs.append(sweep_run(entry, slower, 2001, 50))
    everywhere = _flagged(runs, band)
    runs.append(sweep_run(entry, slower.model_copy(update={"slowdown_above": 32}), 2002, 51))
    return alarms, everywhere, _flagged(runs, band)


def _flagged(runs: list[BenchmarkRun], band: RegressionBand) -> list[str]:
    """'c64 ITL mean' for each figure of the newest run the regression check calls slower (confirmed or not)."""
    found = report(runs, runs[-1], band)
    return [f"{change.level} {change.metric.label}" for change in found.changes if change.regressed]
