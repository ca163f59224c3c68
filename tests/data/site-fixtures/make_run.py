"""Writes capacity-fixture/runs/<stamp>.json: the page tests' open-loop run. Computed, not measured.

The made-up server completes at most MU requests/s, and its latencies grow with load as rho / (1 - rho), the wait of
an M/M/1 queue (rho = rate / MU). The closed-loop levels, the planned rates and the capacity search all read that one
formula; the search is catalogue.capacity's own (start, next_step, judge, result), so the page shows what the runner's
search did against such a server when the fixture was written. The committed run stays as it is when the search
changes (the page tests read its figures); run this again to follow the search, then update those tests:

    python tests/data/site-fixtures/make_run.py
"""

from __future__ import annotations

import datetime as dt
import itertools
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from catalogue.benchmark import BenchmarkRun, LevelResult, RateLevel, Stats  # noqa: E402
from catalogue.loading import parse_recipe  # noqa: E402
from catalogue.slo import probe_name, rate_name  # noqa: E402

from catalogue import capacity  # noqa: E402

FOLDER = HERE / "capacity-fixture"
RECORDED = dt.datetime(2026, 11, 25, 10, 0, tzinfo=dt.UTC)
INPUT, OUTPUT = 256, 128
"""The recipe's prompt and output lengths."""
MU = 4.0
"""Requests per second the made-up server completes at most."""
SATURATED = 0.97
"""Share of MU it completes when offered more."""
FIXTURE_NOTE = (
    "Fixture for the page tests: every figure of this run is computed from a queueing formula by "
    "`tests/data/site-fixtures/make_run.py`. Nothing here was measured."
)


def wait(rho: float) -> float:
    rho = min(rho, 0.985)
    return rho / (1 - rho)


def stats(base: dict[str, float], slope: dict[str, float], q: float) -> Stats:
    return Stats(**{k: round(base[k] + slope[k] * q, 2) for k in base})


def latencies(rate: float) -> dict[str, Stats]:
    q = wait(rate / MU)
    keys = ("mean", "std", "p50", "p90", "p95", "p99")
    ttft = stats(dict(zip(keys, (100, 40, 90, 140, 160, 200))), dict(zip(keys, (140, 120, 110, 260, 330, 450))), q)
    tpot = stats(dict(zip(keys, (19, 3, 18, 22, 24, 28))), dict(zip(keys, (3, 1.5, 2.5, 4, 5, 7))), q)
    itl = stats(dict(zip(keys, (19, 5, 17, 24, 27, 33))), dict(zip(keys, (3, 2, 2.5, 5, 6, 9))), q)
    e2e_mean = (ttft.mean or 0) + (tpot.mean or 0) * (OUTPUT - 1)
    e2e = Stats(
        mean=round(e2e_mean, 2),
        std=round(0.15 * e2e_mean, 2),
        p50=round(0.98 * e2e_mean, 2),
        p90=round(1.2 * e2e_mean, 2),
        p95=round(1.3 * e2e_mean, 2),
        p99=round(1.5 * e2e_mean, 2),
    )
    return {"ttft_ms": ttft, "tpot_ms": tpot, "itl_ms": itl, "e2e_ms": e2e}


def share_within(s: Stats, limit: float) -> float:
    """The share of requests at or under `limit`, read off the percentiles (piecewise linear between them)."""
    marks = [(0.0, 0.0), (0.5, s.p50), (0.9, s.p90), (0.95, s.p95), (0.99, s.p99), (1.0, (s.p99 or 0) * 1.3)]
    for (q0, v0), (q1, v1) in itertools.pairwise(marks):
        assert v0 is not None and v1 is not None
        if limit <= v1:
            return q0 + (q1 - q0) * (limit - v0) / (v1 - v0)
    return 1.0


def closed_level(c: int, recipe) -> LevelResult:
    """Concurrency c in a closed loop: the rate at which c streams, each waiting for its last answer, send."""
    lo, hi = 1e-6, MU * SATURATED
    for _ in range(60):  # rate = c / mean e2e(rate)
        mid = (lo + hi) / 2
        if mid * (latencies(mid)["e2e_ms"].mean or 0) / 1000 < c:
            lo = mid
        else:
            hi = mid
    rate = lo
    lat = latencies(rate)
    completed = max(recipe.sweep.prompts_per_level, recipe.sweep.prompts_per_stream * c)
    return LevelResult(
        concurrency=c,
        prefill_tps=round(c * INPUT / (lat["ttft_ms"].mean or 1) * 1000, 2),
        generation_tps=round(rate * OUTPUT, 2),
        total_tps=round(rate * (INPUT + OUTPUT), 2),
        duration_s=round(completed / rate, 2),
        completed=completed,
        failed=0,
        raw=[f"{RECORDED:%Y%m%dT%H%M%SZ}/c{c}.json"],
        **lat,
    )


def rate_level(offered: float, recipe, probe: int | None) -> RateLevel:
    slo, loop = recipe.sweep.slo, recipe.sweep.open_loop
    achieved = offered * 0.99 if offered < MU * SATURATED else MU * SATURATED * 0.93
    lat = latencies(achieved)
    completed = loop.requests_at(offered)
    attainment = min(
        share_within(lat["ttft_ms"], slo.ttft),
        share_within(lat["tpot_ms"], slo.tpot),
    )
    name = probe_name(probe) if probe else rate_name(offered)
    level = RateLevel(
        offered_rps=offered,
        burstiness=loop.burstiness,
        achieved_rps=round(achieved, 3),
        goodput_rps=round(achieved * attainment, 3),
        attainment=round(attainment, 4),
        probe=probe,
        generation_tps=round(achieved * OUTPUT, 2),
        total_tps=round(achieved * (INPUT + OUTPUT), 2),
        duration_s=round(completed / achieved, 2),
        completed=completed,
        failed=0,
        raw=[f"{RECORDED:%Y%m%dT%H%M%SZ}/{name}.json"],
        **lat,
    )
    return level.model_copy(update={"verdict": capacity.judge(level, slo).why})


def bench(recipe, extra: list[str], name: str) -> list[str]:
    return [
        *shlex.split("vllm bench serve --backend openai --base-url http://127.0.0.1:8124 --endpoint /v1/completions"),
        *shlex.split("--model tiny --tokenizer /models/tiny-llama-cpu --dataset-name random"),
        *("--random-input-len", str(INPUT), "--random-output-len", str(OUTPUT)),
        *extra,
        *shlex.split("--ignore-eos --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99"),
        *("--save-result", "--result-dir", "/raw", "--result-filename", f"{name}.json"),
    ]


def main() -> None:
    recipe = parse_recipe(FOLDER / "recipe.yaml")
    sweep, slo, loop = recipe.sweep, recipe.sweep.slo, recipe.sweep.open_loop
    assert slo is not None and loop is not None
    assert (sweep.input_len, sweep.output_len) == (INPUT, OUTPUT)
    levels = [closed_level(c, recipe) for c in sweep.concurrency]
    commands = [
        bench(recipe, ["--num-prompts", str(lv.completed), "--max-concurrency", str(c)], f"c{c}")
        for lv in levels
        if (c := lv.concurrency)
    ]

    def open_args(rate: float) -> list[str]:
        return [
            *("--num-prompts", str(loop.requests_at(rate)), "--request-rate", f"{rate:g}"),
            *("--burstiness", f"{loop.burstiness:g}", *slo.goodput_args()),
        ]

    rates = [rate_level(r, recipe, None) for r in loop.rates]
    commands += [bench(recipe, open_args(r), rate_name(r)) for r in loop.rates]
    points = [capacity.Point(lv.offered_rps or 0, capacity.judge(lv, slo), probe=False) for lv in rates]
    by_rate = {lv.offered_rps or 0: lv for lv in rates}
    first, ceiling = capacity.start(levels, slo)
    search_s = 0.0
    while True:
        step = capacity.next_step(points, first, ceiling, loop.tolerance)
        if step.rate is None:
            break
        assert step.rate not in by_rate, step
        probe = sum(p.probe for p in points) + 1
        level = rate_level(step.rate, recipe, probe)
        rates.append(level)
        by_rate[step.rate] = level
        commands.append(bench(recipe, open_args(step.rate), probe_name(probe)))
        points.append(capacity.Point(step.rate, capacity.judge(level, slo)))
        search_s += (level.duration_s or 0) + 0.6
    found = capacity.result(points, by_rate, loop.tolerance, step.stopped, search_s)
    serve = [
        *shlex.split("docker run --name catalogue-capacity-fixture --ipc host --network host"),
        *("-e", "HF_HUB_OFFLINE=1", "-e", "VLLM_CPU_KVCACHE_SPACE=1", "local/vllm-cpu:0.32.0"),
        *shlex.split("vllm serve /models/tiny-llama-cpu --served-model-name tiny --host 127.0.0.1 --port 8124"),
        *shlex.split("--load-format dummy --max-model-len 512 --enforce-eager --dtype float32"),
    ]
    provenance = {
        "method": "measured",
        "runner_version": "0.1.0",
        "vllm_version": "0.32.0",
        "image": "local/vllm-cpu:0.32.0",
        "host": "fixture",
        "serve_command": serve,
        "bench_commands": commands,
        "prefill_derivation": "concurrency × prompt tokens per request ÷ mean TTFT (computed, like every figure here)",
        "client": "vLLM's benchmark client inside local/vllm-cpu:0.32.0",
        "client_vllm_version": "0.32.0",
    }
    run = BenchmarkRun(
        recorded_at=RECORDED,
        provenance=provenance,
        workload={
            "tool": "vllm bench serve",
            "tool_version": "0.32.0",
            "dataset": "random",
            "input_len": INPUT,
            "output_len": OUTPUT,
            "prompts_per_level": f"max({sweep.prompts_per_level}, {sweep.prompts_per_stream} × concurrency)",
            "repetitions": 1,
        },
        levels=levels,
        rates=rates,
        slo=slo,
        capacity=found,
        notes=[FIXTURE_NOTE],
    )
    out = FOLDER / "runs" / f"{run.stamp}.json"
    out.write_text(run.model_dump_json(indent=2, exclude_none=True) + "\n")
    print(f"wrote {out.relative_to(HERE.parents[2])}: capacity {found.rps} req/s, {found.probes} probes")


if __name__ == "__main__":
    main()
