"""Latency objectives and the open-loop part of a sweep: what "serves N req/s within budget" means."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from catalogue.models.plausible import MAX_REQUESTS, Burstiness, PositiveMs, PositiveRps, PositiveSeconds
from catalogue.models.strict import Strict

GOODPUT_KEYS: tuple[str, ...] = ("ttft", "tpot", "e2el")
"""The names `vllm bench serve --goodput` accepts (its check_goodput_args; tests/test_slo.py asks vLLM itself)."""

PERCENTILES: tuple[int, ...] = (50, 90, 95, 99)
"""Percentiles every open-loop level asks the client for (`--metric-percentiles`)."""

LIMIT_LABELS = {"ttft": "TTFT", "tpot": "TPOT", "e2el": "E2E latency"}
STATS_FIELD = {"ttft": "ttft_ms", "tpot": "tpot_ms", "e2el": "e2e_ms"}
"""Where each goodput key's distribution sits in a level's figures."""


class Slo(Strict):
    """A service-level objective: each named latency percentile under its limit, and no request failed.

    The limit names are vLLM's `--goodput` keys, so the same objective also gives vLLM's own goodput (requests
    per second that met every limit) and the share of requests that met every limit (attainment)."""

    percentile: Literal[50, 90, 95, 99] = Field(95, description="Which percentile of each latency must meet its limit.")
    ttft: PositiveMs | None = Field(None, description="Time to first token limit, ms (vLLM goodput key `ttft`).")
    tpot: PositiveMs | None = Field(
        None, description="Time per output token after the first limit, ms (vLLM goodput key `tpot`)."
    )
    e2el: PositiveMs | None = Field(None, description="End-to-end request latency limit, ms (vLLM goodput key `e2el`).")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key != "percentile" and key not in GOODPUT_KEYS:
                    raise ValueError(
                        f"{key!r} is not a limit vLLM's --goodput knows (it knows {', '.join(GOODPUT_KEYS)}, in ms)"
                    )
        return data

    @model_validator(mode="after")
    def _some_limit(self) -> Slo:
        if not self.limits:
            raise ValueError(f"an slo needs at least one limit ({', '.join(GOODPUT_KEYS)}, in ms)")
        return self

    @property
    def limits(self) -> dict[str, float]:
        """{goodput key: limit in ms}, in vLLM's order."""
        return {key: value for key in GOODPUT_KEYS if (value := getattr(self, key)) is not None}

    def goodput_args(self) -> list[str]:
        """`--goodput ttft:2000 tpot:100`: the same limits for vLLM's own goodput count."""
        return ["--goodput", *(f"{key}:{value:g}" for key, value in self.limits.items())]

    def describe(self) -> str:
        """'p95 TTFT ≤ 2 s and p95 TPOT ≤ 100 ms'."""
        return " and ".join(f"p{self.percentile} {LIMIT_LABELS[k]} ≤ {_ms(v)}" for k, v in self.limits.items())

    @property
    def key(self) -> tuple:
        """Capacities compare only under equal objectives."""
        return (self.percentile, *(getattr(self, k) for k in GOODPUT_KEYS))


class OpenLoop(Strict):
    """Open-loop levels: requests arrive on their own schedule (vLLM's `--request-rate`), not when the last ends."""

    rates: list[PositiveRps] = Field(
        default_factory=list, description="Request rates to measure, req/s, ascending (may be empty: search only)."
    )
    burstiness: Burstiness = Field(
        1.0, description="vLLM's --burstiness: 1 is a Poisson process; below 1 burstier, above 1 more even."
    )
    min_window_s: PositiveSeconds = Field(
        30.0, description="Each rate sends rate × this many seconds of requests (at least min_requests)."
    )
    min_requests: Annotated[int, Field(gt=0, le=MAX_REQUESTS)] = Field(
        20, description="Fewest requests a rate level sends."
    )
    tolerance: float = Field(
        0.10, gt=0, le=0.5, description="The capacity search stops when its bracket is this close (0.10: within 10 %)."
    )
    search_budget_s: PositiveSeconds = Field(
        1200.0, description="Wall time the capacity search may take; it stops and says so when it runs out."
    )

    @model_validator(mode="after")
    def _ascending(self) -> OpenLoop:
        if self.rates != sorted(set(self.rates)):
            raise ValueError("rates must be ascending without repeats")
        return self

    def requests_at(self, rate: float) -> int:
        """How many requests a level at `rate` sends: enough for the window."""
        return max(self.min_requests, math.ceil(rate * self.min_window_s))


def rate_name(rate: float) -> str:
    """Job name of a fixed rate level: 'r2.5'."""
    return f"r{rate:g}"


def probe_name(index: int) -> str:
    """Job name of the capacity search's n-th probe (1-based): 'probe3'."""
    return f"probe{index}"


def _ms(value: float) -> str:
    return f"{value / 1000:g} s" if value >= 1000 else f"{value:g} ms"
