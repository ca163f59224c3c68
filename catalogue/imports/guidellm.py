"""GuideLLM's JSON report (`benchmarks.json`, report version 2: GuideLLM 0.8): one level per benchmark.

A synchronous or concurrent benchmark is a closed loop (a concurrency level); a throughput, constant or poisson
benchmark is an open loop (a rate level). Every figure is the tool's own, read from the benchmark's `successful`
distributions."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from catalogue.imports.guidellm_schema import Report
from catalogue.imports.schema import checked
from catalogue.imports.source import ImportedLevels, require
from catalogue.imports.vllm_bench import PREFILL_DERIVATION
from catalogue.models.benchmark import LevelResult, RateLevel, Stats
from catalogue.models.errors import CatalogueError

TOOL = "GuideLLM"
REPORT_VERSIONS = (2,)
"""`metadata.version` of the reports this reader knows: GuideLLM bumps it on a breaking change to the layout."""
SLO_KEYS = {"ttft_ms": "ttft", "tpot_ms": "tpot", "e2el_ms": "e2el"}
"""GuideLLM's goodput objectives -> vLLM's --goodput keys (GuideLLM named them after vLLM's)."""
CLOSED = ("synchronous", "concurrent")
OPEN = ("throughput", "constant", "poisson")
DEFINITIONS = (
    "As GuideLLM defines them, over each benchmark's measurement window and its successful requests: TTFT = first "
    "token − request start; TPOT = GuideLLM's inter-token latency, (last token − first token) ÷ (output tokens − 1) "
    "per request, its distribution weighted by those tokens (GuideLLM's own goodput compares vLLM's tpot limit with "
    "it; its time_per_output_token, which includes the first token, is not shown); E2E = request end − request "
    "start. Generation and total tok/s = output (all) tokens ÷ window (output_tokens_per_second, "
    "tokens_per_second). Achieved req/s = requests_per_second (successful requests finished in the window ÷ its "
    "length). Goodput = request_goodput (those that met every objective, per second of the window); attainment = "
    "slo_attainment (the share of successful and errored requests that met every objective; errored ones count as "
    "missing it). Offered = the constant or poisson strategy's rate; throughput sends as fast as its worker "
    "processes allow, up to max_concurrency in flight. Synchronous (one request at a time) and concurrent@N are "
    "closed loops: prefill there is derived, " + PREFILL_DERIVATION + "."
)


def looks_like(data: Any) -> bool:
    """A GuideLLM report: `benchmarks` beside a `metadata` with the GuideLLM version, or generative benchmarks."""
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        return False
    metadata = data.get("metadata")
    if isinstance(metadata, dict) and "guidellm_version" in metadata:
        return True
    first = data["benchmarks"][0] if data["benchmarks"] else None
    return isinstance(first, dict) and first.get("type_") == "generative_benchmark"


def _object(path: Path, data: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    return require(path, data, name, (dict,), f"{where}.")


def _distribution(path: Path, metrics: dict[str, Any], name: str, where: str) -> dict[str, Any] | None:
    """The `successful` summary of one metric ({mean, std_dev, median, percentiles{p50,p90,p95,p99}, count})."""
    metric = metrics.get(name)
    if metric is None:
        return None
    if not isinstance(metric, dict):
        raise CatalogueError(path, f"expected an object {{successful, ...}}, got {metric!r}", f"{where}.{name}")
    summary = _object(path, metric, "successful", f"{where}.{name}")
    require(path, summary, "mean", (int, float), f"{where}.{name}.successful.")
    require(path, summary, "count", (int,), f"{where}.{name}.successful.")
    return summary


def _stats(path: Path, metrics: dict[str, Any], name: str, where: str, scale: float = 1.0) -> Stats | None:
    summary = _distribution(path, metrics, name, where)
    if summary is None or not summary["count"]:
        return None
    percentiles = summary.get("percentiles") or {}
    values = {
        "mean": summary["mean"],
        "std": summary.get("std_dev"),
        "p50": percentiles.get("p50", summary.get("median")),
        "p90": percentiles.get("p90"),
        "p95": percentiles.get("p95"),
        "p99": percentiles.get("p99"),
    }
    return Stats(**{k: float(v) * scale for k, v in values.items() if isinstance(v, (int, float))})


def _rate(path: Path, metrics: dict[str, Any], name: str, where: str) -> float | None:
    summary = _distribution(path, metrics, name, where)
    return float(summary["mean"]) if summary is not None else None


def _figures(path: Path, bench: dict[str, Any], where: str) -> dict[str, Any]:
    metrics = _object(path, bench, "metrics", where)
    at = f"{where}.metrics"
    totals = _object(path, metrics, "request_totals", at)
    completed = require(path, totals, "successful", (int,), f"{at}.request_totals.")
    if not completed:
        raise CatalogueError(path, "no request completed", f"{at}.request_totals.successful")
    return {
        "generation_tps": _rate(path, metrics, "output_tokens_per_second", at),
        "total_tps": _rate(path, metrics, "tokens_per_second", at),
        "ttft_ms": _stats(path, metrics, "time_to_first_token_ms", at),
        "tpot_ms": _stats(path, metrics, "inter_token_latency_ms", at),
        "e2e_ms": _stats(path, metrics, "request_latency", at, scale=1000.0),
        "duration_s": float(require(path, bench, "duration", (int, float), f"{where}.")),
        "completed": completed,
        "failed": int(totals.get("errored") or 0),
    }


def _tokens(path: Path, bench: dict[str, Any], name: str, where: str) -> tuple[float, int]:
    summary = _distribution(path, bench["metrics"], name, f"{where}.metrics")
    if summary is None:
        raise CatalogueError(path, "required field is missing", f"{where}.metrics.{name}")
    return float(summary["mean"]), int(summary["count"])


def _level(path: Path, bench: dict[str, Any], where: str) -> LevelResult | RateLevel:
    config = _object(path, bench, "config", where)
    strategy = _object(path, config, "strategy", f"{where}.config")
    kind = require(path, strategy, "type_", (str,), f"{where}.config.strategy.")
    figures = _figures(path, bench, where)
    metrics = bench["metrics"]
    if kind in CLOSED:
        streams = 1
        if kind == "concurrent":
            streams = require(path, strategy, "streams", (int,), f"{where}.config.strategy.")
        prompt, _ = _tokens(path, bench, "prompt_token_count", where)
        ttft = figures["ttft_ms"]
        prefill = streams * prompt / (ttft.mean / 1000) if ttft and ttft.mean else None
        label = "synchronous" if kind == "synchronous" else None
        return LevelResult(concurrency=streams, prefill_tps=prefill, label=label, raw=[path.name], **figures)
    if kind not in OPEN:
        raise CatalogueError(
            path,
            f"a {kind!r} benchmark has no level in the catalogue (it reads {', '.join(CLOSED + OPEN)})",
            f"{where}.config.strategy.type_",
        )
    cap = strategy.get("max_concurrency")
    offered = None
    if kind != "throughput":
        offered = float(require(path, strategy, "rate", (int, float), f"{where}.config.strategy."))
        if not offered > 0:
            raise CatalogueError(path, f"not a positive rate: {offered!r}", f"{where}.config.strategy.rate")
    goodput = metrics.get("request_goodput")
    attainment = metrics.get("slo_attainment")
    return RateLevel(
        offered_rps=offered,
        arrivals={"constant": "constant", "poisson": "poisson"}.get(kind),
        burstiness=1.0 if kind == "poisson" else None,
        achieved_rps=_rate(path, metrics, "requests_per_second", f"{where}.metrics"),
        goodput_rps=_rate(path, metrics, "request_goodput", f"{where}.metrics") if goodput else None,
        attainment=float(attainment) if isinstance(attainment, (int, float)) else None,
        max_concurrency=cap if isinstance(cap, int) and cap > 0 else None,
        label=(f"throughput@{cap or 'unlimited'}" if kind == "throughput" else f"{kind}@{offered:.2f}"),
        raw=[path.name],
        **figures,
    )


def _slo(path: Path, bench: dict[str, Any], where: str) -> dict[str, float] | None:
    slo = bench["config"].get("slo")
    if not slo:
        return None
    if not isinstance(slo, dict):
        raise CatalogueError(path, f"expected an object {{ttft_ms, tpot_ms, e2el_ms}}, got {slo!r}", f"{where}.slo")
    return {SLO_KEYS[k]: float(v) for k, v in slo.items() if k in SLO_KEYS and v is not None} or None


def _workload(path: Path, data: dict[str, Any]) -> tuple[str | None, int | None, int | None]:
    """(dataset, prompt tokens, output tokens) when the report's one data source fixes them (synthetic text with
    no spread), else (its kind or path, None, None)."""
    spec = (data.get("config") or {}).get("spec") or {}
    sources = spec.get("data") if isinstance(spec, dict) else None
    if not isinstance(sources, list) or len(sources) != 1 or not isinstance(sources[0], dict):
        return None, None, None
    source = sources[0]
    kind = source.get("kind")
    if kind != "synthetic_text":
        name = source.get("path") or source.get("data") or source.get("name") or kind
        return (str(name) if name else None), None, None
    spread = [source.get(f"{which}_tokens_{s}") for which in ("prompt", "output") for s in ("stdev", "min", "max")] + [
        source.get("first_prompt_tokens"),
        source.get("first_output_tokens"),
    ]
    prompt, output = source.get("prompt_tokens"), source.get("output_tokens")
    if any(v is not None for v in spread) or (source.get("turns") or 1) != 1:
        return "GuideLLM synthetic text (lengths vary)", None, None
    if not (isinstance(prompt, int) and isinstance(output, int)):
        return "GuideLLM synthetic text", None, None
    return "GuideLLM synthetic text", prompt, output


def _requests_rule(data: dict[str, Any]) -> str | None:
    """The report's stop constraints as a rule for requests per level, read after it as '... requests per level':
    '40', '4 s of', '40 or 4 s of' (whichever ends the benchmark first)."""
    spec = (data.get("config") or {}).get("spec") or {}
    constraints = spec.get("constraints") if isinstance(spec, dict) else None
    count = seconds = None
    for constraint in constraints if isinstance(constraints, list) else []:
        if isinstance(constraint, dict) and constraint.get("kind") == "max_requests":
            count = constraint.get("count")
        elif isinstance(constraint, dict) and constraint.get("kind") == "max_duration":
            seconds = constraint.get("seconds")
    count_text = f"{count:g}" if isinstance(count, (int, float)) else None
    seconds_text = f"{seconds:g} s of" if isinstance(seconds, (int, float)) else None
    return " or ".join(t for t in (count_text, seconds_text) if t) or None


def read_report(path: Path, data: dict[str, Any]) -> ImportedLevels:
    """One report: every benchmark a level; refused when its report version is not one this reader knows."""
    metadata = data.get("metadata")
    version = metadata.get("version") if isinstance(metadata, dict) else None
    tool_version = metadata.get("guidellm_version") if isinstance(metadata, dict) else None
    if version not in REPORT_VERSIONS:
        raise CatalogueError(
            path,
            f"GuideLLM report version {version!r}"
            + (f" (GuideLLM {tool_version})" if tool_version else "")
            + f": this reader knows version {', '.join(map(str, REPORT_VERSIONS))} (GuideLLM 0.8)",
            "metadata.version",
        )
    checked(path, Report, data)
    benchmarks = data["benchmarks"]
    if not benchmarks:
        raise CatalogueError(path, "no benchmark results", "benchmarks")
    levels: list[LevelResult] = []
    rates: list[RateLevel] = []
    limits: dict[str, float] | None = None
    model = None
    notes: list[str] = []
    prompt_sum = output_sum = 0.0
    prompt_n = output_n = 0
    incomplete = 0
    for i, bench in enumerate(benchmarks):
        where = f"benchmarks[{i}]"
        if not isinstance(bench, dict):
            raise CatalogueError(path, "expected an object", where)
        level = _level(path, bench, where)
        if isinstance(level, LevelResult):
            if any(lv.concurrency == level.concurrency for lv in levels):
                raise CatalogueError(path, f"concurrency {level.concurrency} repeats", f"{where}.config.strategy")
            levels.append(level)
        else:
            if any(lv.label == level.label for lv in rates):
                raise CatalogueError(path, f"{level.label} repeats", f"{where}.config.strategy")
            rates.append(level)
        slo = _slo(path, bench, f"{where}.config")
        if i and slo != limits:
            raise CatalogueError(path, "the benchmarks' goodput objectives differ", f"{where}.config.slo")
        limits = slo
        backend = bench["config"].get("backend")
        model = model or (backend.get("model") if isinstance(backend, dict) else None)
        mean, count = _tokens(path, bench, "prompt_token_count", where)
        prompt_sum, prompt_n = prompt_sum + mean * count, prompt_n + count
        mean, count = _tokens(path, bench, "output_token_count", where)
        output_sum, output_n = output_sum + mean * count, output_n + count
        totals = bench["metrics"]["request_totals"]
        incomplete += int(totals.get("incomplete") or 0)
        for warning in bench.get("warnings") or []:
            if isinstance(warning, dict) and warning.get("message"):
                name = level.label or f"concurrent@{getattr(level, 'concurrency', '')}"
                notes.append(f"GuideLLM warned at {name}: {warning['message']} {warning.get('note') or ''}".strip())
    if incomplete:
        notes.append(
            f"{incomplete} request(s) still running when a benchmark's window closed (GuideLLM's 'incomplete') are "
            "in no figure."
        )
    dataset, prompt_len, output_len = _workload(path, data)
    exact = prompt_len is not None and output_len is not None
    start = benchmarks[0].get("start_time")
    return ImportedLevels(
        tool=TOOL,
        tool_version=str(tool_version) if tool_version else None,
        model=str(model or ""),
        date=_day(path, start),
        input_tokens=prompt_len if exact else (prompt_sum / prompt_n if prompt_n else None),
        output_tokens=output_len if exact else (output_sum / output_n if output_n else None),
        prompts=_requests_rule(data),
        levels=sorted(levels, key=lambda lv: lv.concurrency),
        rates=rates,
        files=[path],
        definitions=DEFINITIONS,
        exact_lengths=exact,
        dataset=dataset,
        slo_limits=limits,
        notes=notes,
    )


def _day(path: Path, start: object) -> dt.date | None:
    """The UTC day of a benchmark's start_time (Unix seconds); one that is no time (1e300, nan) is refused."""
    if not isinstance(start, (int, float)) or isinstance(start, bool):
        return None
    try:
        return dt.datetime.fromtimestamp(start, dt.UTC).date()
    except (ValueError, OverflowError, OSError):
        raise CatalogueError(path, f"not a time (Unix seconds): {start!r}", "benchmarks[0].start_time") from None
