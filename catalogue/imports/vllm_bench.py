"""Results of vLLM's benchmark client: one `vllm bench serve --save-result` JSON, or a `vllm bench sweep serve`
folder. The runner maps its own raw results with `level_from_raw` too: one mapping for both."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from catalogue.benchmark import LevelResult, RateLevel, Stats
from catalogue.errors import CatalogueError
from catalogue.imports.source import ImportedLevels, read_json, require

TOOL = "vllm bench serve"
PREFILL_DERIVATION = (
    "concurrency × (total_input_tokens ÷ completed) ÷ mean TTFT: prompt tokens per request over the mean "
    "time to first token, times the requests in flight"
)
DEFINITIONS = (
    "Generation: output_throughput (output tokens ÷ benchmark duration). Peak: max_output_tokens_per_s "
    "(best one-second bucket). Total: total_token_throughput. Latencies as the client reports them. "
    "Prefill is derived: " + PREFILL_DERIVATION + "."
)
REQUIRED = ("completed", "duration", "output_throughput", "total_input_tokens", "total_output_tokens")


def looks_like(data: Any) -> bool:
    """A `vllm bench serve` result: the keys the client always writes (the figures are checked later)."""
    return isinstance(data, dict) and {"backend", "model_id", "num_prompts", "max_concurrency"} <= data.keys()


def _stats(raw: dict[str, Any], name: str) -> Stats | None:
    values = {
        "mean": raw.get(f"mean_{name}_ms"),
        "std": raw.get(f"std_{name}_ms"),
        "p50": raw.get(f"p50_{name}_ms", raw.get(f"median_{name}_ms")),
        "p90": raw.get(f"p90_{name}_ms"),
        "p95": raw.get(f"p95_{name}_ms"),
        "p99": raw.get(f"p99_{name}_ms"),
    }
    present = {k: float(v) for k, v in values.items() if v is not None}
    return Stats(**present) if present else None


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
        concurrency=concurrency,
        prompt_tokens=prompt_tokens,
        prefill_tps=prefill,
        generation_tps=raw.get("output_throughput"),
        peak_tps=raw.get("max_output_tokens_per_s"),
        total_tps=raw.get("total_token_throughput"),
        ttft_ms=_stats(raw, "ttft"),
        itl_ms=_stats(raw, "itl"),
        tpot_ms=_stats(raw, "tpot"),
        e2e_ms=_stats(raw, "e2el"),
        duration_s=raw.get("duration"),
        completed=completed,
        failed=int(raw.get("failed", 0)),
        raw=[raw_name],
    )


def rate_level_from_raw(raw: dict[str, Any], raw_name: str, probe: int | None = None) -> RateLevel:
    """One open-loop level (`--request-rate`) from one raw result JSON: offered and achieved rate, vLLM's goodput
    (`--goodput`), and attainment = goodput ÷ request throughput (both are counts over the same window)."""
    completed = int(raw.get("completed", 0))
    offered = raw.get("request_rate")
    offered = float(offered) if isinstance(offered, int | float) and math.isfinite(offered) and offered > 0 else None
    throughput = raw.get("request_throughput")
    goodput = raw.get("request_goodput")
    attainment = None
    if goodput is not None and throughput:
        attainment = min(1.0, float(goodput) / float(throughput))
    burstiness = raw.get("burstiness")
    max_concurrency = raw.get("max_concurrency")
    return RateLevel(
        offered_rps=offered,
        burstiness=float(burstiness) if isinstance(burstiness, int | float) and offered is not None else None,
        achieved_rps=float(throughput) if throughput is not None else None,
        goodput_rps=float(goodput) if goodput is not None else None,
        attainment=attainment,
        max_concurrency=max_concurrency if isinstance(max_concurrency, int) and max_concurrency > 0 else None,
        probe=probe,
        generation_tps=raw.get("output_throughput"),
        peak_tps=raw.get("max_output_tokens_per_s"),
        total_tps=raw.get("total_token_throughput"),
        ttft_ms=_stats(raw, "ttft"),
        itl_ms=_stats(raw, "itl"),
        tpot_ms=_stats(raw, "tpot"),
        e2e_ms=_stats(raw, "e2el"),
        duration_s=raw.get("duration"),
        completed=completed,
        failed=int(raw.get("failed", 0)),
        raw=[raw_name],
    )


def _checked(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    for name in REQUIRED:
        require(path, data, name, (int, float))
    concurrency = data.get("max_concurrency")
    if not isinstance(concurrency, int) or concurrency < 1:
        raise CatalogueError(
            path, "missing or not a positive number: the catalogue compares by concurrency", "max_concurrency"
        )
    if not data["completed"]:
        raise CatalogueError(path, "no request completed", "completed")
    return data


def _levels(path: Path, data: dict[str, Any], raw_name: str) -> ImportedLevels:
    return ImportedLevels(
        tool=TOOL,
        tool_version=None,
        model=str(data.get("model_id") or ""),
        date=_date(data.get("date")),
        input_tokens=data["total_input_tokens"] / data["completed"],
        output_tokens=data["total_output_tokens"] / data["completed"],
        prompts=int(data.get("num_prompts") or data["completed"]),
        levels=[level_from_raw(data, int(data["max_concurrency"]), raw_name)],
        files=[path],
        definitions=DEFINITIONS,
    )


def read_result(path: Path) -> ImportedLevels:
    """One `vllm bench serve --save-result` file: one level."""
    data = _checked(path, read_json(path))
    return _levels(path, data, path.name)


def looks_like_sweep(folder: Path) -> bool:
    """A `vllm bench sweep serve` experiment: folders of `run=N.json` (and their summary.json)."""
    return folder.is_dir() and any(folder.glob("**/run=*.json"))


def read_sweep(folder: Path) -> list[ImportedLevels]:
    """Every parameter combination of a sweep folder, one level each, from its `run=N.json` (the summary.json
    beside it repeats the same figures and is kept as a raw file)."""
    out = []
    for combo in sorted({p.parent for p in folder.glob("**/run=*.json")}):
        runs = sorted(combo.glob("run=*.json"))
        if len(runs) > 1:
            raise CatalogueError(
                combo,
                f"{len(runs)} runs of one combination (--num-runs {len(runs)}): the catalogue keeps one result "
                "per level; import one run=N.json of it, or sweep with --num-runs 1",
            )
        data = _checked(runs[0], read_json(runs[0]))
        part = _levels(runs[0], data, str(runs[0].relative_to(folder)))
        summary = combo / "summary.json"
        if summary.exists():
            part.files.append(summary)
            level = part.levels[0]
            part.levels = [level.model_copy(update={"raw": [*level.raw, str(summary.relative_to(folder))]})]
        part.relative_to = folder
        out.append(part)
    if not out:
        raise CatalogueError(folder, "no run=N.json results in this `vllm bench sweep serve` folder")
    return out


def _date(text: object) -> str | None:
    """'20261123-025228' -> '2026-11-23'."""
    if isinstance(text, str) and len(text) >= 8 and text[:8].isdigit():
        return f"{text[:4]}-{text[4:6]}-{text[6:8]}"
    return None
