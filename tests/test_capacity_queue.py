"""The capacity search against a server whose capacity is known: a queue with 20 s requests (a Spark-like E2E),
36 slots (1.8 req/s at most) and an SLO on p95 TTFT. Its levels are written as vLLM's client writes them with
--save-detailed and read by the runner's own code, so the whole path is under test: probe sizing, the steady-rate
saturation check, the early-stopping rule on pooled, autocorrelated samples, re-probes, and the interval published.

The search before this issue found 0.097 req/s on such a server ("converged"): vLLM's duration includes the drain,
so completed ÷ duration read every rate above 0.67 req/s as saturated."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalogue.imports.vllm_bench import rate_level_from_raw
from catalogue.models.benchmark import LevelResult, Stats
from runner.measuring.capacity_search import search
from runner.planning.jobs import Job
from runner.state import Progress
from tests.queue_model import QueueServer
from tests.test_capacity_search import Clock, setup

SERVER = QueueServer(slots=36, service_s=20.0)
LIMIT_MS = 2000
TRUTH = SERVER.slo_capacity(LIMIT_MS, 95)


class QueueClient:
    """The waiting benchmark client, answered by the queue model: each probe lasts its window plus its drain."""

    def __init__(self, progress: Progress, clock: Clock, seed: int) -> None:
        self.progress, self.clock, self.seed = progress, clock, seed
        self.failures: dict[str, str] = {}
        self.sent: list[Job] = []

    def one(self, job: Job) -> None:
        assert job.rate is not None and job.probe is not None
        self.sent.append(job)
        self.progress.probe_jobs[job.name] = job
        requests = int(job.argv[job.argv.index("--num-prompts") + 1])
        raw = SERVER.level(job.rate, requests, seed=self.seed * 1000 + job.probe, warm_s=0)
        self.clock.now += raw["duration"] + 1
        self.progress.rates[job.name] = rate_level_from_raw(raw, f"s/{job.name}.json", job.probe, {"ttft": LIMIT_MS})

    def end(self) -> None:
        pass


def closed_loop() -> dict[str, LevelResult]:
    """What the planned levels of the same boot saw: 32 streams at 1.6 req/s within the SLO, 64 at 1.8 not."""
    within = LevelResult(concurrency=32, completed=64, duration_s=40, ttft_ms=Stats(p95=300), e2e_ms=Stats(mean=20_000))
    over = LevelResult(
        concurrency=64, completed=128, duration_s=71, ttft_ms=Stats(p95=15_000), e2e_ms=Stats(mean=35_000)
    )
    return {"c32": within, "c64": over}


def run(tmp_path: Path, seed: int):
    entry, plan, progress = setup(tmp_path / str(seed), search_budget_s=50_000)
    entry.recipe.sweep.slo.__dict__.update(tpot=None)  # the SLO of this model: p95 TTFT only
    progress.levels = closed_loop()
    clock = Clock()
    client = QueueClient(progress, clock, seed)
    return search(plan, entry.recipe, client, progress, clock), client  # type: ignore[arg-type]


def test_the_true_capacity_lies_in_the_published_interval(tmp_path, capsys):
    """Measured on this model: the interval of decided verdicts (`decided_rps`) holds the truth in 17 of 20 searches;
    in the other three a rate 0.9-1.2 % above the truth was decided to meet. The bracket (met, missed) holds it in 11
    (13 before a rate's probes counted at most at the share their scatter allows: two searches now leave 1.28 req/s,
    8 % under the truth, undecided and settle it as a miss on its worst probe's percentile):
    a rate still undecided after three probes is settled on its percentile, and a queue this close to its capacity
    keeps its waits alike for longer than a probe lasts, so a settled bound may be wrong; the decided interval leaves
    settled rates out and is wider where they were."""
    assert pytest.approx(1.396, abs=0.001) == TRUTH  # Erlang C: P(wait > 1.7 s) = 5 % at 1.396 req/s
    searches = [run(tmp_path, seed) for seed in range(20)]
    results = [found for found, _ in searches]
    inside = [r for r in results if r.rps is not None and r.upper_rps is not None and r.rps <= TRUTH <= r.upper_rps]
    assert len(inside) >= 11, [(r.rps, r.upper_rps) for r in results]
    decided = [r.decided_rps for r in results]
    assert all(d is not None for d in decided)
    held = [d for d in decided if d is not None and (d[0] or 0) <= TRUTH <= (d[1] or float("inf"))]
    assert len(held) >= 17, decided
    for d in decided:  # where it misses, it misses by a decided meet just above the truth
        assert d is not None and (d[0] or 0) < TRUTH * 1.015
    # On a server that serves alike from one search to the next, the searches agree within ±15 % of their median
    # (measured: 1.164-1.413 req/s, ±14 %; three in a row within ±9 %): the spread of the bench's real searches beyond
    # that is the machine's (benchmarks.capacity names the decided verdicts that cross between its searches).
    middle = sorted(r.rps or 0 for r in results)[len(results) // 2]
    assert all(abs((r.rps or 0) / middle - 1) <= 0.15 for r in results), [r.rps for r in results]
    for found in results:  # never the 0.097 req/s of the search before, never far above the truth
        assert found.rps is not None and TRUTH * 0.8 < found.rps < TRUTH * 1.02
        assert found.confidence in (0.99, None)
    for found, client in searches:  # a rate settled on its percentile drops the confidence, and the run names it
        settled = [n for n in client.progress.notes if n.startswith("capacity settled: ")]
        if found.confidence is None:
            assert len(settled) == 1 and " req/s judged on their recorded percentiles after 3 probes each" in settled[0]
        else:
            assert settled == []
    assert any(found.confidence is None for found, _ in searches)  # the case above is met at least once


def test_probes_last_thirty_end_to_end_latencies_and_never_replay_a_seed(tmp_path, capsys):
    found, client = run(tmp_path, seed=3)
    first = client.sent[0]
    assert first.rate == pytest.approx(0.8 * 1.6)  # 0.8 x the best closed-loop rate within the SLO
    requests = int(first.argv[first.argv.index("--num-prompts") + 1])
    assert requests >= first.rate * 30 * 20  # 30 x the closed loop's 20 s E2E
    seeds = [job.argv[job.argv.index("--seed") + 1] for job in client.sent]
    assert len(set(seeds)) == len(seeds)
    assert found.probes == len(client.sent)
