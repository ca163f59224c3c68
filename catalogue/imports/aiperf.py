"""NVIDIA AIPerf's `profile_export_aiperf.json` (export schema 1.4 and 1.5): one profiling run, one level.

A concurrency phase is a closed loop (a concurrency level); a poisson, gamma or constant phase at a request rate is
an open loop (a rate level, capped by --concurrency when one was set). Each metric is the tool's own
`{unit, avg, p50, p90, p95, p99, std, ...}`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import create_model

from catalogue.imports.schema import MAX_COUNT, Figure, Raw, Text, checked
from catalogue.imports.source import ImportedLevels, file_date, is_number, require
from catalogue.imports.vllm_bench import PREFILL_DERIVATION
from catalogue.models.benchmark import LevelResult, RateLevel, Stats
from catalogue.models.errors import CatalogueError

TOOL = "AIPerf"
SCHEMA_VERSIONS = ("1.4", "1.5")
"""`schema_version` of the exports this reader knows (AIPerf bumps it on a breaking change to the layout)."""
SLO_KEYS = {"time_to_first_token": "ttft", "inter_token_latency": "tpot", "request_latency": "e2el"}
"""AIPerf's goodput metric tags (in ms) -> vLLM's --goodput keys: its inter-token latency is vLLM's TPOT."""
RATE_PHASES = ("poisson", "gamma", "constant")
DEFINITIONS = (
    "As AIPerf defines them, over the profiling phase (benchmark duration = last response − first request): "
    "TTFT = time_to_first_token; TPOT = inter_token_latency, (request latency − TTFT) ÷ (output tokens − tokens of "
    "the first chunk) per request; E2E = request_latency. Generation tok/s = output_token_throughput and total = "
    "total_token_throughput, AIPerf's own token counts ÷ duration (it counts output tokens by tokenizing the text "
    "it received). Achieved req/s = request_throughput (valid requests ÷ duration); goodput = goodput (requests "
    "meeting every --goodput objective ÷ duration); attainment = good_request_fraction (good ÷ all attempted, "
    "failed ones included). Offered = the phase's --request-rate with its arrival pattern. A concurrency phase "
    "is a closed loop: prefill there is derived, " + PREFILL_DERIVATION + "."
)
UNITS = {
    "time_to_first_token": "ms",
    "inter_token_latency": "ms",
    "request_latency": "ms",
    "request_throughput": "requests/sec",
    "goodput": "requests/sec",
    "output_token_throughput": "tokens/sec",
    "total_token_throughput": "tokens/sec",
    "benchmark_duration": "sec",
    "request_count": "requests",
    "error_request_count": "requests",
    "good_request_fraction": "ratio",
    "input_sequence_length": "tokens",
    "output_sequence_length": "tokens",
    "usage_completion_tokens": "tokens",
}


class _Metric(Raw):
    """One AIPerf metric: its unit and summary."""

    unit: Text | None = None
    """Unit of its figures (checked against UNITS)."""
    avg: Figure | None = None
    """Mean (required where the metric is read)."""
    std: Figure | None = None
    """Standard deviation."""
    p50: Figure | None = None
    """Median."""
    p90: Figure | None = None
    """90th percentile."""
    p95: Figure | None = None
    """95th percentile."""
    p99: Figure | None = None
    """99th percentile."""


class _Config(Raw):
    """The fields of `input_config` the catalogue reads beyond its phases."""

    slos: dict[str, Figure] | None = None
    """--goodput objectives, ms."""


_FIELDS: dict[str, Any] = {"input_config": (_Config | None, None), **dict.fromkeys(UNITS, (_Metric | None, None))}
_Export = create_model("_Export", __base__=Raw, **_FIELDS)
"""The fields of an AIPerf export the catalogue reads: each metric it uses, and the objectives."""


def looks_like(data: Any) -> bool:
    """An AIPerf export: its schema and tool versions beside the metrics."""
    return isinstance(data, dict) and "schema_version" in data and "aiperf_version" in data


def _metric(path: Path, data: dict[str, Any], name: str, required: bool = False) -> dict[str, Any] | None:
    """One metric object, its unit checked (the catalogue's figures are in ms, req/s and tok/s)."""
    metric = data.get(name)
    if metric is None:
        if required:
            raise CatalogueError(path, "required field is missing", name)
        return None
    if not isinstance(metric, dict):
        raise CatalogueError(path, f"expected an object {{unit, avg, ...}}, got {metric!r}", name)
    unit = metric.get("unit")
    if unit != UNITS[name]:
        raise CatalogueError(path, f"unit {unit!r}, expected {UNITS[name]!r}", f"{name}.unit")
    require(path, metric, "avg", (int, float), f"{name}.")
    return metric


def _avg(path: Path, data: dict[str, Any], name: str, required: bool = False) -> float | None:
    metric = _metric(path, data, name, required)
    return float(metric["avg"]) if metric is not None else None


def _stats(path: Path, data: dict[str, Any], name: str) -> Stats | None:
    metric = _metric(path, data, name)
    if metric is None:
        return None
    values = {"mean": metric["avg"], **{k: metric.get(k) for k in ("std", "p50", "p90", "p95", "p99")}}
    return Stats(**{k: float(v) for k, v in values.items() if isinstance(v, (int, float))})


def _phase(path: Path, config: dict[str, Any]) -> dict[str, Any]:
    """The profiling phase of `input_config.phases` (warm-up phases are not in the figures)."""
    phases = config.get("phases")
    if not isinstance(phases, list):
        raise CatalogueError(path, "required field is missing", "input_config.phases")
    profiling = [p for p in phases if isinstance(p, dict) and p.get("kind", "profiling") == "profiling"]
    if len(profiling) != 1:
        raise CatalogueError(
            path, f"{len(profiling)} profiling phases: the catalogue reads one per file", "input_config.phases"
        )
    return profiling[0]


def _fixed(dist: Any) -> int | None:
    """A length distribution's one value ({mean} with no spread, or {value}), else None."""
    if _length(dist):
        return int(dist)
    if not isinstance(dist, dict):
        return None
    if _length(dist.get("value")):
        return int(dist["value"])
    spread = dist.get("stddev") or set(dist) - {"mean", "stddev", "type"}
    if _length(dist.get("mean")) and not spread:
        return int(dist["mean"])
    return None


def _length(value: object) -> bool:
    """A plausible token count: a number from 1 to MAX_COUNT (never NaN, infinite or a bool)."""
    return is_number(value) and 1 <= value <= MAX_COUNT


def _workload(config: dict[str, Any]) -> tuple[str | None, int | None, int | None]:
    """(dataset, prompt tokens, output tokens): fixed when the one dataset is synthetic with no spread."""
    datasets = config.get("datasets")
    if not isinstance(datasets, list) or len(datasets) != 1 or not isinstance(datasets[0], dict):
        return None, None, None
    dataset = datasets[0]
    if dataset.get("type") != "synthetic":
        name = dataset.get("path") or dataset.get("name") or dataset.get("type")
        return (str(name) if name else None), None, None
    prompts = dataset.get("prompts") or {}
    isl, osl = _fixed(prompts.get("isl")), _fixed(prompts.get("osl"))
    if isl is None or osl is None:
        return "AIPerf synthetic (lengths vary)", None, None
    return "AIPerf synthetic", isl, osl


def read_export(path: Path, data: dict[str, Any]) -> ImportedLevels:
    """One export: one level; refused when its schema version is not one this reader knows."""
    version = data.get("schema_version")
    if version not in SCHEMA_VERSIONS:
        raise CatalogueError(
            path,
            f"AIPerf export schema version {version!r}: this reader knows {' and '.join(SCHEMA_VERSIONS)}",
            "schema_version",
        )
    if data.get("was_cancelled"):
        raise CatalogueError(path, "the run was cancelled before it finished", "was_cancelled")
    if data.get("is_complete") is False:
        why = data.get("incomplete_reason")
        raise CatalogueError(path, "the run did not complete" + (f": {why}" if why else ""), "is_complete")
    checked(path, _Export, data)
    config = require(path, data, "input_config", (dict,))
    phase = _phase(path, config)
    kind = phase.get("type")
    completed = int(_avg(path, data, "request_count", required=True) or 0)
    if not completed:
        raise CatalogueError(path, "no request completed", "request_count")
    duration = _avg(path, data, "benchmark_duration", required=True)
    ttft = _stats(path, data, "time_to_first_token")
    figures: dict[str, Any] = {
        "generation_tps": _avg(path, data, "output_token_throughput"),
        "total_tps": _avg(path, data, "total_token_throughput"),
        "ttft_ms": ttft,
        "tpot_ms": _stats(path, data, "inter_token_latency"),
        "e2e_ms": _stats(path, data, "request_latency"),
        "duration_s": duration,
        "completed": completed,
        "failed": int(_avg(path, data, "error_request_count") or 0),
        "raw": [path.name],
    }
    dataset, isl, osl = _workload(config)
    prompt_mean = _avg(path, data, "input_sequence_length")
    levels: list[LevelResult] = []
    rates: list[RateLevel] = []
    cap = phase.get("concurrency")
    cap = cap if isinstance(cap, int) and is_number(cap) and cap > 0 else None
    if kind == "concurrency":
        if cap is None:
            raise CatalogueError(path, "a concurrency phase without its concurrency", "input_config.phases")
        prefill = cap * prompt_mean / (ttft.mean / 1000) if prompt_mean and ttft and ttft.mean else None
        levels.append(LevelResult(concurrency=cap, prefill_tps=prefill, **figures))
    elif kind in RATE_PHASES:
        rate = phase.get("rate")
        if phase.get("rate_series") or phase.get("rate_ramp"):
            raise CatalogueError(
                path, "a request rate that changes during the run has no one offered rate", "input_config.phases"
            )
        if not (is_number(rate) and rate > 0):
            raise CatalogueError(path, f"not a positive request rate: {rate!r}", "input_config.phases.rate")
        offered = float(rate)
        smoothness = phase.get("smoothness")
        burstiness = {"poisson": 1.0, "gamma": smoothness if isinstance(smoothness, (int, float)) else 1.0}.get(kind)
        goodput = _avg(path, data, "goodput")
        fraction = _avg(path, data, "good_request_fraction")
        throughput = _avg(path, data, "request_throughput", required=True)
        if fraction is None and goodput is not None and throughput:
            fraction = goodput / throughput
        rates.append(
            RateLevel(
                offered_rps=offered,
                arrivals=kind,
                burstiness=float(burstiness) if burstiness is not None else None,
                achieved_rps=throughput,
                goodput_rps=goodput,
                attainment=min(1.0, max(0.0, fraction)) if fraction is not None else None,
                max_concurrency=cap,
                **figures,
            )
        )
    else:
        raise CatalogueError(
            path,
            f"a {kind!r} phase has no level in the catalogue (it reads concurrency, {', '.join(RATE_PHASES)})",
            "input_config.phases.type",
        )
    part = ImportedLevels(
        tool=TOOL,
        tool_version=str(data.get("aiperf_version") or "") or None,
        model=_model(config),
        date=(
            file_date(path, data["start_time"][:10], "start_time") if isinstance(data.get("start_time"), str) else None
        ),
        input_tokens=isl if isl is not None and osl is not None else prompt_mean,
        output_tokens=osl if isl is not None and osl is not None else _avg(path, data, "output_sequence_length"),
        prompts=phase.get("requests") if isinstance(phase.get("requests"), int) else None,
        levels=levels,
        rates=rates,
        files=[path],
        definitions=DEFINITIONS,
        exact_lengths=isl is not None and osl is not None,
        dataset=dataset,
        slo_limits=None,
    )
    _objectives(path, config, part)
    _usage_note(path, data, part)
    return part


def _model(config: dict[str, Any]) -> str:
    items = (config.get("models") or {}).get("items") if isinstance(config.get("models"), dict) else None
    if isinstance(items, list) and items and isinstance(items[0], dict):
        return str(items[0].get("name") or "")
    return ""


def _objectives(path: Path, config: dict[str, Any], part: ImportedLevels) -> None:
    """AIPerf's --goodput objectives as vLLM's keys, when every one has a vLLM equivalent."""
    slos = config.get("slos")
    if not slos:
        return
    if not isinstance(slos, dict):
        raise CatalogueError(path, f"expected an object {{metric: limit}}, got {slos!r}", "input_config.slos")
    unknown = [k for k in slos if k not in SLO_KEYS]
    if unknown:
        part.notes.append(
            f"AIPerf's goodput objective on {', '.join(unknown)} has no vLLM --goodput equivalent: the goodput "
            "figures stand, but the run is judged against no objective."
        )
        return
    part.slo_limits = {SLO_KEYS[k]: float(v) for k, v in slos.items()}


def _usage_note(path: Path, data: dict[str, Any], part: ImportedLevels) -> None:
    """AIPerf counts output tokens by tokenizing the text; say so when the server's own count differs."""
    counted = _avg(path, data, "output_sequence_length")
    usage = _avg(path, data, "usage_completion_tokens")
    if counted and usage and abs(counted - usage) > 0.05 * usage:
        part.notes.append(
            f"AIPerf counted {counted:.1f} output tokens per request by tokenizing the text it received; the server "
            f"reported {usage:.1f} (usage). Its tok/s and TPOT follow its own count."
        )
