"""Results of vLLM's benchmark client: one `vllm bench serve --save-result` JSON, or a `vllm bench sweep serve` /
`serve_workload` folder. A result at a finite `--request-rate` is an open-loop level (RateLevel); one at the
default rate (inf) with `--max-concurrency` is a concurrency level. The runner maps its own raw results with
`level_from_raw` and `rate_level_from_raw` too: one mapping for both."""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path
from typing import Any

from pydantic import Field, create_model

from catalogue.imports.schema import MAX_SAMPLES, Count, Figure, Raw, Signed, Text, Tokens, checked
from catalogue.imports.source import ImportedLevels, file_date, is_number, read_json, regular_file, require
from catalogue.models.benchmark import LevelResult, RateLevel, Stats
from catalogue.models.errors import CatalogueError
from catalogue.stats.request_samples import (
    autocorrelation_time,
    exceedances,
    independent_share,
    intervals,
    itls_ms,
    judged_count,
    request_latencies,
    steady_rates,
)

TOOL = "vllm bench serve"
PREFILL_DERIVATION = (
    "concurrency × (total_input_tokens ÷ completed) ÷ mean TTFT: prompt tokens per request over the mean "
    "time to first token, times the requests in flight — the speed of a prefill burst, not the level's "
    "sustained ingest rate (total_input_tokens ÷ duration)"
)
DEFINITIONS = (
    "Generation: output_throughput (output tokens ÷ benchmark duration). Peak: max_output_tokens_per_s "
    "(best one-second bucket). Total: total_token_throughput. Latencies as the client reports them. "
    "Prefill is derived: " + PREFILL_DERIVATION + "."
)
RATE_DEFINITIONS = (
    "Open-loop levels (--request-rate R): offered = request_rate; achieved = completed ÷ duration; goodput = "
    "request_goodput (completed requests per second whose TTFT, TPOT = (latency − TTFT) ÷ (output tokens − 1) and "
    "end-to-end latency all met their --goodput limit); attainment = request_goodput ÷ request_throughput (the share "
    "of completed requests that met every limit). --request-rate inf without --max-concurrency sends every request "
    "at once: offered 'as fast as possible'."
)
REQUIRED = ("completed", "duration", "output_throughput", "total_input_tokens", "total_output_tokens")
SWEEP = "sweep"
"""Format name of a `vllm bench sweep serve` folder (`catalogue import`'s FORMATS key)."""
WORKLOAD_SWEEP = "sweep serve_workload"
"""Format name of a `vllm bench sweep serve_workload` folder: its combination folders end in `WL-<var>=<value>`."""

_LATENCIES: dict[str, Any] = {
    f"{stat}_{name}_ms": (Figure | None, None)
    for name in ("ttft", "tpot", "itl", "e2el")
    for stat in ("mean", "std", "median", "p50", "p90", "p95", "p99")
}
_Latencies = create_model("_Latencies", __base__=Raw, **_LATENCIES)
"""Each latency summary vLLM writes (mean_ttft_ms, p99_e2el_ms, ...): a finite non-negative number or absent."""


class _Result(_Latencies):
    """The fields of a `vllm bench serve --save-result` JSON the catalogue reads (vLLM writes more)."""

    completed: Count
    """Requests that finished."""
    failed: Count | None = None
    """Requests that failed."""
    num_prompts: Count | None = None
    """Requests the client sent."""
    max_concurrency: Count | None = None
    """The --max-concurrency cap, null without one (0 is refused with its own line)."""
    duration: Figure
    """Seconds the benchmark ran."""
    total_input_tokens: Tokens
    """Prompt tokens over every completed request."""
    total_output_tokens: Tokens
    """Output tokens over every completed request."""
    output_throughput: Figure
    """Output tokens ÷ duration."""
    total_token_throughput: Figure | None = None
    """All tokens ÷ duration."""
    max_output_tokens_per_s: Figure | None = None
    """Best one-second bucket of output tokens."""
    request_throughput: Figure | None = None
    """Completed requests ÷ duration."""
    request_goodput: Figure | None = None
    """Requests per second that met every --goodput limit."""
    burstiness: Figure | None = None
    """The gamma arrivals' shape (1: Poisson)."""
    model_id: Text | None = None
    """Model name the client sent."""
    date: Text | None = None
    """When it ran, YYYYMMDD-HHMMSS."""
    ttfts: list[Figure] | None = Field(None, max_length=MAX_SAMPLES)
    """Per-request time to first token, s (--save-detailed)."""
    latencies: list[Figure] | None = Field(None, max_length=MAX_SAMPLES)
    """Per-request end-to-end latency, s."""
    start_times: list[Signed] | None = Field(None, max_length=MAX_SAMPLES)
    """Per-request send time, s on the client's clock."""
    output_lens: list[Count] | None = Field(None, max_length=MAX_SAMPLES)
    """Per-request output tokens."""
    itls: list[list[Figure]] | None = Field(None, max_length=MAX_SAMPLES)
    """Per-request inter-token gaps, s."""
    errors: list[Text | None] | None = Field(None, max_length=MAX_SAMPLES)
    """Per-request error text, empty for a success."""


def looks_like(data: Any) -> bool:
    """A `vllm bench serve` result: the keys the client always writes (the figures are checked later)."""
    return isinstance(data, dict) and {"backend", "model_id", "num_prompts", "max_concurrency"} <= data.keys()


def _stats(raw: dict[str, Any], name: str, requests: dict[str, list[float]] | None = None) -> Stats | None:
    values = {
        "mean": raw.get(f"mean_{name}_ms"),
        "std": raw.get(f"std_{name}_ms"),
        "p50": raw.get(f"p50_{name}_ms", raw.get(f"median_{name}_ms")),
        "p90": raw.get(f"p90_{name}_ms"),
        "p95": raw.get(f"p95_{name}_ms"),
        "p99": raw.get(f"p99_{name}_ms"),
    }
    present = {k: float(v) for k, v in values.items() if v is not None}
    if not present:
        return None
    if name == "itl":  # tens of thousands of gaps: no autocorrelation read (regression_samples says so)
        samples = itls_ms(raw)
        return Stats(**present, n=len(samples), ci=intervals(samples)) if samples else Stats(**present)
    samples = (requests or {}).get(name)
    if samples:
        return Stats(**present, n=len(samples), ci=intervals(samples), independent=1 / autocorrelation_time(samples))
    return Stats(**present)


def level_from_raw(
    raw: dict[str, Any], concurrency: int, raw_name: str, prompt_tokens: int | None = None
) -> LevelResult:
    """One level's figures from one raw result JSON."""
    completed = int(raw.get("completed", 0))
    mean_ttft = raw.get("mean_ttft_ms")
    prefill = None
    if completed and mean_ttft:
        prefill = concurrency * (raw["total_input_tokens"] / completed) / (mean_ttft / 1000)
    return LevelResult(
        concurrency=concurrency, prompt_tokens=prompt_tokens, prefill_tps=prefill, **_figures(raw, raw_name)
    )


def _figures(raw: dict[str, Any], raw_name: str) -> dict[str, Any]:
    """What every level of a raw result carries, closed loop or open."""
    requests = request_latencies(raw)  # once per file: each latency's per-request samples, when kept
    return {
        "generation_tps": raw.get("output_throughput"),
        "peak_tps": raw.get("max_output_tokens_per_s"),
        "total_tps": raw.get("total_token_throughput"),
        "ttft_ms": _stats(raw, "ttft", requests),
        "itl_ms": _stats(raw, "itl"),
        "tpot_ms": _stats(raw, "tpot", requests),
        "e2e_ms": _stats(raw, "e2el", requests),
        "duration_s": raw.get("duration"),
        "completed": int(raw.get("completed", 0)),
        "failed": int(raw.get("failed") or 0),
        "raw": [raw_name],
    }


def offered_rate(raw: dict[str, Any]) -> float | None:
    """The result's `request_rate`: a number, or None for vLLM's default 'inf' (every request at once)."""
    rate = raw.get("request_rate", "inf")
    if rate is None or rate == "inf" or (is_number(rate) and math.isinf(rate)):
        return None
    return float(rate)


def rate_level_from_raw(
    raw: dict[str, Any],
    raw_name: str,
    probe: int | None = None,
    limits: dict[str, float] | None = None,
    percentile: float = 95,
) -> RateLevel:
    """One open-loop level (`--request-rate`, `--burstiness`, `--goodput`) from one raw result JSON: offered and
    achieved rate, vLLM's goodput, and attainment = goodput ÷ request throughput (counts over the same window);
    `probe` numbers a capacity-search probe. With per-request samples (`--save-detailed`): the send and
    completion rates of the level's steady middle, and the requests above each of the SLO's `limits` (ms)."""
    completed = int(raw.get("completed", 0))
    duration = raw.get("duration")
    offered = offered_rate(raw)
    burstiness = raw.get("burstiness")
    goodput = raw.get("request_goodput")
    throughput = raw.get("request_throughput")
    attainment = None
    if goodput is not None and throughput:
        attainment = min(1.0, max(0.0, goodput / throughput))
    cap = raw.get("max_concurrency")
    steady = steady_rates(raw) if offered is not None else None
    return RateLevel(
        sent_rps=steady.sent if steady else None,
        kept_up_rps=steady.kept_up if steady else None,
        exceed=exceedances(raw, limits or {}),
        judged=judged_count(raw) if limits else None,
        independent=independent_share(raw, limits or {}, percentile),
        offered_rps=offered,
        burstiness=float(burstiness) if offered is not None and burstiness else None,
        arrivals=(None if offered is None or not burstiness else "poisson" if burstiness == 1 else "gamma"),
        achieved_rps=completed / duration if duration else None,
        goodput_rps=goodput,
        attainment=attainment,
        max_concurrency=cap if isinstance(cap, int) and is_number(cap) and cap > 0 else None,
        probe=probe,
        **_figures(raw, raw_name),
    )


def is_open_loop(raw: dict[str, Any]) -> bool:
    """An open-loop result: a finite request rate, or inf without a concurrency cap (everything at once)."""
    return offered_rate(raw) is not None or raw.get("max_concurrency") is None


def _checked(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    checked(path, _Result, data)
    for name in REQUIRED:
        require(path, data, name, (int, float))
    if data.get("ramp_up_strategy"):
        raise CatalogueError(
            path,
            f"a {data['ramp_up_strategy']} ramp-up from {data.get('ramp_up_start_rps')} to "
            f"{data.get('ramp_up_end_rps')} req/s has no one offered rate; the catalogue keeps a level per rate",
            "ramp_up_strategy",
        )
    rate = data.get("request_rate", "inf")
    if rate != "inf" and not (is_number(rate) and rate > 0):
        raise CatalogueError(path, f"not a positive request rate (req/s) or 'inf': {rate!r}", "request_rate")
    burstiness = data.get("burstiness")
    if burstiness is not None and not (is_number(burstiness) and burstiness > 0):
        raise CatalogueError(path, f"not a positive burstiness: {burstiness!r}", "burstiness")
    concurrency = data.get("max_concurrency")
    if concurrency is not None and not (isinstance(concurrency, int) and is_number(concurrency) and concurrency > 0):
        raise CatalogueError(path, f"not a positive number of requests in flight: {concurrency!r}", "max_concurrency")
    goodput = data.get("request_goodput")
    if goodput is not None and not (is_number(goodput) and goodput >= 0):
        raise CatalogueError(path, f"not a rate (req/s): {goodput!r}", "request_goodput")
    if not data["completed"]:
        raise CatalogueError(path, "no request completed", "completed")
    return data


def _levels(path: Path, data: dict[str, Any], raw_name: str) -> ImportedLevels:
    open_loop = is_open_loop(data)
    part = ImportedLevels(
        tool=TOOL,
        tool_version=None,
        model=str(data.get("model_id") or ""),
        date=_date(path, data.get("date")),
        input_tokens=data["total_input_tokens"] / data["completed"],
        output_tokens=data["total_output_tokens"] / data["completed"],
        prompts=int(data.get("num_prompts") or data["completed"]),
        levels=[] if open_loop else [level_from_raw(data, int(data["max_concurrency"]), raw_name)],
        rates=[rate_level_from_raw(data, raw_name)] if open_loop else [],
        files=[path],
        definitions=DEFINITIONS + (" " + RATE_DEFINITIONS if open_loop else ""),
    )
    if open_loop and data.get("request_goodput") is not None:
        part.goodput_without_limits = True
    return part


def read_result(path: Path) -> ImportedLevels:
    """One `vllm bench serve --save-result` file: one level."""
    data = _checked(path, read_json(path))
    return _levels(path, data, path.name)


def _run_files(folder: Path) -> list[Path]:
    """The sweep's `run=N.json` results (not its `run=N.failure.json` records of failed runs)."""
    return sorted(p for p in folder.glob("**/run=*.json") if re.fullmatch(r"run=\d+\.json", p.name))


def looks_like_sweep(folder: Path) -> bool:
    """A `vllm bench sweep serve` or `serve_workload` experiment: folders of `run=N.json` (and summary.json)."""
    return folder.is_dir() and bool(_run_files(folder))


def sweep_kind(folder: Path) -> str:
    """SWEEP or WORKLOAD_SWEEP: serve_workload names each combination's folder `...WL-<variable>=<value>`."""
    return WORKLOAD_SWEEP if any(re.search(r"(^|-)WL-", p.parent.name) for p in _run_files(folder)) else SWEEP


def read_sweep(folder: Path) -> list[ImportedLevels]:
    """Every parameter combination of a sweep folder, one level each, from its `run=N.json` (the summary.json
    beside it repeats the same figures and is kept as a raw file). serve_workload folders read the same way: each
    explored request rate is an open-loop level, each explored max_concurrency a concurrency level."""
    out = []
    for combo in sorted({p.parent for p in _run_files(folder)}):
        runs = [p for p in _run_files(combo) if p.parent == combo]
        if len(runs) > 1:
            raise CatalogueError(
                combo,
                f"{len(runs)} runs of one combination (--num-runs {len(runs)}): the catalogue keeps one result "
                "per level; import one run=N.json of it, or sweep with --num-runs 1",
            )
        data = _checked(runs[0], read_json(regular_file(runs[0], folder)))
        part = _levels(runs[0], data, str(runs[0].relative_to(folder)))
        summary = combo / "summary.json"
        if summary.exists() or summary.is_symlink():
            part.files.append(regular_file(summary, folder))
            extra = {"raw": [*(part.levels or part.rates)[0].raw, str(summary.relative_to(folder))]}
            part.levels = [lv.model_copy(update=extra) for lv in part.levels]
            part.rates = [lv.model_copy(update=extra) for lv in part.rates]
        part.relative_to = folder
        out.append(part)
    if not out:
        raise CatalogueError(folder, "no run=N.json results in this `vllm bench sweep` folder")
    failed = [regular_file(p, folder) for p in sorted(folder.glob("**/*failure.json"))]
    if failed:
        out[0].files += failed
        out[0].notes.append(
            f"{len(failed)} run(s) of the sweep failed (--continue-on-error) and have no figures; their records are "
            "kept: " + ", ".join(str(p.relative_to(folder)) for p in failed) + "."
        )
    return out


def _date(path: Path, text: object) -> dt.date | None:
    """'20261123-025228' -> 2026-11-23; a day that is no calendar day (20261399) is refused."""
    if isinstance(text, str) and len(text) >= 8 and text[:8].isdigit():
        return file_date(path, f"{text[:4]}-{text[4:6]}-{text[6:8]}", "date")
    return None
