"""One level of agent sessions from AIPerf's per-request export (`profile_export.jsonl`) and vLLM's /metrics around it.

AIPerf 0.13 writes one JSON object a line: `metadata` (conversation_id, turn_index, request_start_ns,
request_end_ns, was_cancelled) and `metrics` (each `{value, unit}`: time_to_first_token and request_latency in ms,
usage_completion_tokens and usage_prompt_tokens as the server counted them); a failed request carries `error`. The
file is untrusted: a line that does not parse, or a value that is not a finite number, is left out.

The per-turn samples are put in the layout of `vllm bench serve --save-detailed` (seconds, in send order) so that the
steady-state, early-stopping and interval rules of catalogue.stats.request_samples apply to turns exactly as to
requests. The prefix-cache hit rate is vLLM's own: the growth of `vllm:prefix_cache_hits` over
`vllm:prefix_cache_queries` (both counted in prompt tokens, whole blocks only) between a reading before the level and
one after it.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalogue.models.bounded import MAX_IMPORT_BYTES, json_line, read_bounded
from catalogue.models.latency import Stats
from catalogue.stats import request_samples as rs
from catalogue.stats.agents import AgentLevel
from catalogue.stats.prometheus import samples

PREFIX_COUNTERS = {"queries": "vllm:prefix_cache_queries", "hits": "vllm:prefix_cache_hits"}
"""vLLM's prefix-cache counters (prompt tokens looked up, found); the page shows them with the `_total` suffix."""


@dataclass(frozen=True)
class Turn:
    """One replayed turn as AIPerf recorded it."""

    session: str
    index: int
    start_s: float
    end_s: float
    ttft_ms: float | None
    latency_ms: float | None
    output_tokens: int | None
    prompt_tokens: int | None
    ok: bool


def read_turns(path: Path) -> list[Turn]:
    """Every turn of AIPerf's per-request export that parses, in send order. The file may be an import's (untrusted):
    a regular file within the import limit, each line refused past the nesting limit before it is parsed."""
    out = []
    text = read_bounded(path, MAX_IMPORT_BYTES, regular=True)
    for number, line in enumerate(text.splitlines(), 1):
        try:
            record = json_line(line, path, number)
        except ValueError:
            continue
        turn = _turn(record) if isinstance(record, dict) else None
        if turn is not None:
            out.append(turn)
    return sorted(out, key=lambda t: t.start_s)


def _turn(record: dict[str, Any]) -> Turn | None:
    meta, metrics = record.get("metadata"), record.get("metrics")
    if not isinstance(meta, dict) or not isinstance(metrics, dict):
        return None
    start, end, index = _num(meta.get("request_start_ns")), _num(meta.get("request_end_ns")), meta.get("turn_index")
    if start is None or end is None or not isinstance(index, int) or isinstance(index, bool):
        return None
    ok = not record.get("error") and meta.get("was_cancelled") is not True

    def value(name: str) -> float | None:
        found = metrics.get(name)
        return _num(found.get("value")) if isinstance(found, dict) else None

    outputs = value("usage_completion_tokens") or value("output_sequence_length")
    prompts = value("usage_prompt_tokens")
    return Turn(
        session=str(meta.get("conversation_id", "")),
        index=index,
        start_s=start / 1e9,
        end_s=end / 1e9,
        ttft_ms=value("time_to_first_token"),
        latency_ms=value("request_latency"),
        output_tokens=int(outputs) if outputs is not None else None,
        prompt_tokens=int(prompts) if prompts is not None else None,
        ok=ok,
    )


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def as_bench_raw(turns: list[Turn]) -> dict[str, list[Any]]:
    """The turns in `vllm bench serve --save-detailed` layout (seconds): what request_samples reads."""
    usable = [t for t in turns if t.ttft_ms is not None and t.latency_ms is not None and t.output_tokens is not None]
    return {
        "start_times": [t.start_s for t in usable],
        "latencies": [(t.latency_ms or 0) / 1000 for t in usable],
        "ttfts": [(t.ttft_ms or 0) / 1000 for t in usable],
        "output_lens": [t.output_tokens for t in usable],
        "errors": ["" if t.ok else "failed" for t in usable],
    }


def stats(values: list[float]) -> Stats | None:
    """Mean, spread, percentiles, n and each percentile's 95 % order-statistic interval; None without samples."""
    if not values:
        return None
    ordered = sorted(values)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, math.ceil(p * len(ordered)) - 1))]

    return Stats(
        mean=statistics.fmean(ordered),
        std=statistics.pstdev(ordered),
        p50=statistics.median(ordered),
        p90=pct(0.90),
        p95=pct(0.95),
        p99=pct(0.99),
        n=len(ordered),
        ci=rs.intervals(ordered) or None,
    )


def prefix_counters(metrics_text: str) -> dict[str, float]:
    """{'queries': tokens looked up, 'hits': tokens found}, summed over engines; a counter not on the page is absent."""
    out: dict[str, float] = {}
    for sample in samples(metrics_text):
        for key, name in PREFIX_COUNTERS.items():
            if sample.name in (name, f"{name}_total"):
                out[key] = out.get(key, 0.0) + sample.value
    return out


def level(
    sessions: int,
    turns: list[Turn],
    before: str,
    after: str,
    limits: dict[str, float],
    probe: int | None = None,
    percentile: float = 95,
) -> AgentLevel:
    """A level's figures from its turns and the /metrics pages read just before and just after it."""
    ok = [t for t in turns if t.ok and t.ttft_ms is not None]
    raw = as_bench_raw(turns)
    latencies = rs.request_latencies(raw) or {"tpot": []}
    start = min((t.start_s for t in turns), default=0.0)
    end = max((t.end_s for t in turns), default=0.0)
    window = end - start if end > start else None
    out_tokens = sum(t.output_tokens or 0 for t in ok)
    in_tokens = sum(t.prompt_tokens or 0 for t in ok)
    b, a = prefix_counters(before), prefix_counters(after)
    delta = {k: a[k] - b[k] for k in PREFIX_COUNTERS if k in a and k in b and a[k] >= b[k]}
    return AgentLevel(
        sessions=sessions,
        probe=probe,
        turns=len(ok),
        failed=len(turns) - len(ok),
        duration_s=window,
        ttft_first_ms=stats([t.ttft_ms for t in ok if t.index == 0 and t.ttft_ms is not None]),
        ttft_later_ms=stats([t.ttft_ms for t in ok if t.index > 0 and t.ttft_ms is not None]),
        ttft_ms=stats([t.ttft_ms for t in ok if t.ttft_ms is not None]),
        tpot_ms=stats(latencies["tpot"]),
        output_tps=out_tokens / window if window else None,
        total_tps=(out_tokens + in_tokens) / window if window else None,
        prefix_queries=delta.get("queries"),
        prefix_hits=delta.get("hits"),
        exceed=rs.exceedances(raw, limits),
        judged=rs.judged_count(raw) if limits else None,
        independent=rs.independent_share(raw, limits, percentile),
    )
