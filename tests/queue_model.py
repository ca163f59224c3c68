"""A server as a queue, for the capacity search's tests: c request slots, exponential service times, requests
arriving as vLLM's client sends them (Poisson at a rate), first come first served.

It writes what `vllm bench serve --save-detailed` writes for a level (its per-request arrays and its summary), so
the code under test reads it exactly as it reads the client's file. Its SLO capacity is known in closed form
(Erlang C), which is what the search must find: the highest rate at which the p-th percentile of TTFT stays within
the limit, P(wait > limit − prefill) ≤ 1 − p.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class QueueServer:
    """c slots, each request holding one for an exponential time of mean `service_s`; its first token comes
    `prefill_s` after it gets a slot; `output_len` tokens each."""

    slots: int
    service_s: float
    prefill_s: float = 0.3
    output_len: int = 128

    @property
    def capacity_rps(self) -> float:
        """The rate at which the queue grows without bound."""
        return self.slots / self.service_s

    def wait_tail(self, rate: float, t: float) -> float:
        """P(a request waits longer than t s for a slot) at `rate` in the stationary state (Erlang C)."""
        a = rate * self.service_s
        if a >= self.slots:
            return 1.0
        rho = a / self.slots
        head = sum(a**k / math.factorial(k) for k in range(self.slots))
        last = a**self.slots / math.factorial(self.slots) / (1 - rho)
        erlang_c = last / (head + last)
        return erlang_c * math.exp(-(self.slots / self.service_s - rate) * t)

    def slo_capacity(self, ttft_ms: float, percentile: int) -> float:
        """The highest rate whose stationary p-th percentile TTFT is within `ttft_ms` (bisection)."""
        lo, hi = 0.0, self.capacity_rps
        for _ in range(60):
            mid = (lo + hi) / 2
            if self.wait_tail(mid, ttft_ms / 1000 - self.prefill_s) <= 1 - percentile / 100:
                lo = mid
            else:
                hi = mid
        return lo

    def level(self, rate: float, requests: int, seed: int, warm_s: float | None = None) -> dict[str, Any]:
        """One open-loop level as vLLM's client saves it. The queue is warm when the level starts: arrivals at the
        same rate ran for `warm_s` before (default: ten service times), as on a server the search has been
        loading probe after probe."""
        rng = random.Random(seed)
        t = -(warm_s if warm_s is not None else 10 * self.service_s)
        free: list[float] = [t] * self.slots  # when each slot is next free
        while t < 0:  # the load before the level
            t += rng.expovariate(rate)
            slot = heapq.heappop(free)
            heapq.heappush(free, max(slot, t) + rng.expovariate(1 / self.service_s))
        starts, ttfts, latencies = [], [], []
        t = 0.0
        for _ in range(requests):
            slot = heapq.heappop(free)
            begin = max(slot, t)
            done = begin + rng.expovariate(1 / self.service_s)
            heapq.heappush(free, done)
            starts.append(t)
            ttfts.append(begin - t + self.prefill_s)
            latencies.append(max(done - t, begin - t + self.prefill_s))
            t += rng.expovariate(rate)
        return summary(rate, starts, ttfts, latencies, self.output_len)


def summary(rate: float, starts: list[float], ttfts: list[float], latencies: list[float], output_len: int) -> dict:
    """The result JSON vLLM's client writes for these requests (the fields the catalogue reads)."""
    duration = max(s + lat for s, lat in zip(starts, latencies)) - min(starts)
    n = len(starts)
    tpots = [(lat - ttft) / (output_len - 1) * 1000 for ttft, lat in zip(ttfts, latencies)]
    raw: dict[str, Any] = {
        "request_rate": rate,
        "burstiness": 1.0,
        "completed": n,
        "failed": 0,
        "duration": duration,
        "request_throughput": n / duration,
        "output_throughput": n * output_len / duration,
        "total_input_tokens": 32 * n,
        "total_output_tokens": output_len * n,
        "start_times": starts,
        "ttfts": ttfts,
        "latencies": latencies,
        "output_lens": [output_len] * n,
        "errors": [""] * n,
        "max_concurrency": None,
    }
    for name, values in (("ttft", [x * 1000 for x in ttfts]), ("tpot", tpots), ("e2el", [x * 1000 for x in latencies])):
        ordered = sorted(values)
        raw[f"mean_{name}_ms"] = sum(values) / n
        raw[f"median_{name}_ms"] = ordered[n // 2]
        for p in (50, 90, 95, 99):
            raw[f"p{p}_{name}_ms"] = ordered[min(n - 1, math.ceil(p / 100 * n) - 1)]
    return raw
