"""llama-benchy's JSON report (`--format json --save-result F`): per (concurrency, prompt, response, depth),
each metric as {mean, std, values} over the runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from catalogue.imports.schema import Count, Figure, Positive, Raw, Text, checked
from catalogue.imports.source import ImportedLevels, file_date, read_json, require
from catalogue.models.benchmark import LevelResult, Stats
from catalogue.models.errors import CatalogueError

TOOL = "llama-benchy"
DATASET = "llama-benchy's generated prompts"
"""The workload's prompt source: the tool cuts prompts of exactly --pp tokens from a text corpus."""
METRICS = ("pp_throughput", "tg_throughput", "peak_throughput", "e2e_ttft")


class _Metric(Raw):
    """One metric of a level over its runs."""

    mean: Figure
    """Mean over the runs."""
    std: Figure
    """Standard deviation over the runs."""
    values: list[Figure] = Field(max_length=100_000)
    """Each run's figure."""


class _Bench(Raw):
    """One level of the report (a context-loading phase too)."""

    concurrency: Positive
    """Requests in flight."""
    prompt_size: Positive
    """Prompt tokens (--pp)."""
    response_size: Positive
    """Output tokens (--tg)."""
    context_size: Count
    """Tokens of context before the prompt (--depth)."""
    pp_throughput: _Metric | None = None
    """Prefill tok/s."""
    tg_throughput: _Metric | None = None
    """Generation tok/s."""
    peak_throughput: _Metric | None = None
    """Best one-second window, tok/s."""
    e2e_ttft: _Metric | None = None
    """End-to-end time to first token, ms."""


class _Report(Raw):
    """The fields of a llama-benchy report the catalogue reads."""

    version: Text
    """llama-benchy's version."""
    latency_mode: Text
    """How it measured the latency it subtracts."""
    latency_ms: Figure
    """That latency."""
    model: Text
    """Model it sent requests for."""
    timestamp: Text | None = None
    """When it ran."""
    benchmarks: list[_Bench] = Field(max_length=100_000)
    """The levels."""


def looks_like(data: Any) -> bool:
    """A llama-benchy report: its metadata beside a `benchmarks` list."""
    return isinstance(data, dict) and isinstance(data.get("benchmarks"), list) and "latency_mode" in data


def definitions(latency_mode: str, latency_ms: float) -> str:
    """How llama-benchy defines what the catalogue shows, in words."""
    return (
        "As llama-benchy defines them: prefill (pp) = prompt tokens ÷ (time to first response − latency) for one "
        "request; with several in flight, the batch's prompt tokens ÷ (its last first token − its first start). "
        "Generation (tg) = tokens after the first ÷ time from the first to the last token, summed over the batch. "
        "Peak = most tokens in any one-second window of a batch. TTFT = end-to-end time to the first token "
        f"(e2e_ttft). Latency ({latency_mode} mode) measured as {latency_ms:.2f} ms. Each figure is the mean over "
        "the runs of a level; ± is their standard deviation."
    )


def _metric(path: Path, bench: dict[str, Any], name: str, where: str) -> dict[str, Any] | None:
    value = bench.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise CatalogueError(path, f"expected an object {{mean, std, values}}, got {value!r}", f"{where}.{name}")
    for key, kinds in (("mean", (int, float)), ("std", (int, float)), ("values", (list,))):
        require(path, value, key, kinds, f"{where}.{name}.")
    return value


def _level(path: Path, bench: dict[str, Any], where: str) -> tuple[LevelResult, int]:
    concurrency = require(path, bench, "concurrency", (int,), f"{where}.")
    m = {name: _metric(path, bench, name, where) for name in METRICS}
    if not any(m.values()):
        raise CatalogueError(path, "no figures (pp, tg, peak or TTFT) for this level", where)
    runs = max((len(v["values"]) for k, v in m.items() if v and k != "e2e_ttft"), default=0)
    ttft = m["e2e_ttft"]

    def mean(name: str) -> float | None:
        metric = m[name]
        return float(metric["mean"]) if metric else None

    def std(name: str) -> float | None:
        metric = m[name]
        return float(metric["std"]) if metric else None

    level = LevelResult(
        concurrency=concurrency,
        prefill_tps=mean("pp_throughput"),
        prefill_std=std("pp_throughput"),
        generation_tps=mean("tg_throughput"),
        generation_std=std("tg_throughput"),
        peak_tps=mean("peak_throughput"),
        peak_std=std("peak_throughput"),
        ttft_ms=Stats(mean=float(ttft["mean"]), std=float(ttft["std"])) if ttft else None,
        raw=[path.name],
    )
    return level, runs


def read_report(path: Path) -> list[ImportedLevels]:
    """One report: a set of levels per (prompt, response, depth); context-loading phases are left out."""
    data = read_json(path)
    if not looks_like(data):
        raise CatalogueError(path, "not a llama-benchy JSON report", "benchmarks")
    checked(path, _Report, data)
    version = require(path, data, "version", (str,))
    mode = require(path, data, "latency_mode", (str,))
    latency = require(path, data, "latency_ms", (int, float))
    model = require(path, data, "model", (str,))
    timestamp = data.get("timestamp")
    groups: dict[tuple[int, int, int], list[tuple[LevelResult, int]]] = {}
    skipped = 0
    for i, bench in enumerate(data["benchmarks"]):
        where = f"benchmarks[{i}]"
        if not isinstance(bench, dict):
            raise CatalogueError(path, "expected an object", where)
        if bench.get("is_context_prefill_phase"):
            skipped += 1
            continue
        key = tuple(require(path, bench, k, (int,), f"{where}.") for k in ("prompt_size", "response_size"))
        depth = require(path, bench, "context_size", (int,), f"{where}.")
        group = groups.setdefault((key[0], key[1], depth), [])
        level, runs = _level(path, bench, where)
        if any(lv.concurrency == level.concurrency for lv, _ in group):
            raise CatalogueError(path, f"concurrency {level.concurrency} repeats for one workload", where)
        group.append((level, runs))
    if not groups:
        raise CatalogueError(path, "no benchmark results", "benchmarks")
    out = []
    for (pp, tg, depth), found in groups.items():
        part = ImportedLevels(
            tool=TOOL,
            tool_version=version,
            model=model,
            date=file_date(path, timestamp[:10], "timestamp") if isinstance(timestamp, str) else None,
            input_tokens=pp,
            output_tokens=tg,
            prompts=None,
            levels=sorted((lv for lv, _ in found), key=lambda lv: lv.concurrency),
            files=[path],
            definitions=definitions(mode, float(latency)),
            exact_lengths=True,
            dataset=DATASET,
            context_depth=depth,
            repetitions=max(runs for _, runs in found) or None,
        )
        if skipped:
            part.notes.append(
                f"{skipped} context-loading phase(s) of the report left out: they time loading the depth, not "
                "the prompt."
            )
        out.append(part)
    return out
