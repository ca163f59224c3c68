"""The simulator's /metrics page: the names and histogram buckets vLLM 0.32 exports (vllm/v1/metrics/loggers.py), and
its speculative-decoding counters (vllm/v1/spec_decode/metrics.py) when drafting."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from simulator.engine import SpecCounters

TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                40.0, 80.0, 160.0, 640.0, 2560.0)  # fmt: skip
TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                40.0, 80.0)  # fmt: skip
E2E_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
               480.0, 960.0, 1920.0, 7680.0)  # fmt: skip


@dataclass
class Histogram:
    """A Prometheus histogram: cumulative buckets, sum and count."""

    name: str
    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def observe(self, value: float) -> None:
        if not self.counts:
            self.counts = [0] * len(self.bounds)
        i = bisect.bisect_left(self.bounds, value)
        if i < len(self.counts):
            self.counts[i] += 1
        self.total += value
        self.n += 1

    def lines(self, labels: str) -> list[str]:
        out = [f"# TYPE {self.name} histogram"]
        running = 0
        counts = self.counts or [0] * len(self.bounds)
        for bound, count in zip(self.bounds, counts, strict=True):
            running += count
            out.append(f'{self.name}_bucket{{{labels},le="{bound}"}} {running}')
        out.append(f'{self.name}_bucket{{{labels},le="+Inf"}} {self.n}')
        out += [f"{self.name}_sum{{{labels}}} {self.total!r}", f"{self.name}_count{{{labels}}} {self.n}"]
        return out


@dataclass
class Metrics:
    """What the server counts."""

    ttft: Histogram = field(default_factory=lambda: Histogram("vllm:time_to_first_token_seconds", TTFT_BUCKETS))
    tpot: Histogram = field(
        default_factory=lambda: Histogram("vllm:request_time_per_output_token_seconds", TPOT_BUCKETS)
    )
    itl: Histogram = field(default_factory=lambda: Histogram("vllm:inter_token_latency_seconds", TPOT_BUCKETS))
    e2e: Histogram = field(default_factory=lambda: Histogram("vllm:e2e_request_latency_seconds", E2E_BUCKETS))
    prompt_tokens: int = 0
    generation_tokens: int = 0
    success: int = 0
    failed: int = 0

    def page(
        self, model: str, *, running: int, waiting: int, queries: int, hits: int, spec: SpecCounters | None = None
    ) -> str:
        """The /metrics text; with `spec`, vLLM's speculative-decoding counters (it exports them only when drafting)."""
        labels = f'engine="0",model_name="{model}"'
        counters = {
            "vllm:prefix_cache_queries": queries,
            "vllm:prefix_cache_hits": hits,
            "vllm:prompt_tokens": self.prompt_tokens,
            "vllm:generation_tokens": self.generation_tokens,
        }
        lines = [
            "# TYPE vllm:num_requests_running gauge",
            f"vllm:num_requests_running{{{labels}}} {running}",
            "# TYPE vllm:num_requests_waiting gauge",
            f"vllm:num_requests_waiting{{{labels}}} {waiting}",
        ]
        if spec is not None:
            counters["vllm:spec_decode_num_drafts"] = spec.drafts
            counters["vllm:spec_decode_num_draft_tokens"] = spec.draft_tokens
            counters["vllm:spec_decode_num_accepted_tokens"] = spec.accepted
        for name, value in counters.items():
            lines += [f"# TYPE {name} counter", f"{name}_total{{{labels}}} {value}"]
        if spec is not None:
            name = "vllm:spec_decode_num_accepted_tokens_per_pos"
            lines.append(f"# TYPE {name} counter")
            lines += [f'{name}_total{{{labels},position="{i}"}} {n}' for i, n in enumerate(spec.per_position)]
        lines += [
            "# TYPE vllm:request_success counter",
            f'vllm:request_success_total{{{labels},finished_reason="length"}} {self.success}',
        ]
        for histogram in (self.ttft, self.tpot, self.itl, self.e2e):
            lines += histogram.lines(labels)
        return "\n".join(lines) + "\n"
