"""The server's own clock, per level: vLLM's latency histograms on /metrics read before and after a level, and whether
the client saw the tokens arrive as the engine made them.

vLLM 0.32 (vllm/v1/metrics/loggers.py, stats.py) exports the histograms `vllm:time_to_first_token_seconds` (the API
server's arrival to first output) and `vllm:request_time_per_output_token_seconds` (per finished request: the engine
core's time from its first to its last token ÷ the tokens after the first, the client's TPOT on the engine's clock),
each with `_sum` and `_count`. Their differences over a level give the server's mean TTFT and mean TPOT for the
requests of that level.

A client cannot receive a request's tokens faster, on average, than the engine produced them, unless they were held
somewhere and released together. So when the client's mean TPOT is below `BURST` of the engine's, the tokens reached
the client in bursts: the client, or the API server between it and the engine, stalled during the level, and its
client-side latencies measure that stall rather than the serving. The regression check judges such a level on
the engine's clock alone (catalogue.stats.regression): in a closed loop the stall idled the server too, so its
throughput measured the stall as well. A server that really got slower shows it on its own clock: `max-num-seqs: 1` at
c=4 read 0.76 of the engine's TPOT at the client (its first tokens queued behind the API server), and 105 ms mean TTFT
on the engine's clock against 10.5-14.4 ms in five no-change refreshes.

The /metrics text is the server's, so the recipe's image writes it: an engine TPOT that no request of the level could
have had is not believed. The engine's first-to-last-token span of a request lies inside the client's send-to-last-
token time, so its mean gap cannot exceed the client's mean E2E ÷ (output tokens − 1), the output tokens per request
read from the level's throughput and window; `SLACK` allows for output lengths that vary. Its TTFT (arrival at the API
server) lies inside the client's (send to first token) likewise. Without the client's figures to bound them, the
engine's are not believed."""

from __future__ import annotations

import math
from typing import Protocol

from pydantic import Field

from catalogue.models.plausible import Count, Ms
from catalogue.models.strict import Strict
from catalogue.stats.prometheus import samples

TTFT = "vllm:time_to_first_token_seconds"
TPOT = "vllm:request_time_per_output_token_seconds"
NAMES = (TTFT, TPOT)
BURST = 0.8
"""Client TPOT below this share of the engine's: the tokens arrived in bursts. Measured on the tiny CPU server
(8 requests a level): steady levels agree within 1-3 % (c1 2.223 ms at the client, 2.211 ms on the engine's clock);
a level whose first tokens reached the client 21 ms late read 1.461 against 2.591 (0.56)."""


def wanted(line: str) -> bool:
    """Whether a /metrics line is one of the sums and counts read here (the runner keeps only those)."""
    return any(line.startswith((f"{name}_sum", f"{name}_count")) for name in NAMES)


def parse_sums(text: str) -> dict[str, float]:
    """{'<histogram>_sum' | '<histogram>_count': value summed over engines and labels} of the histograms read here."""
    out: dict[str, float] = {}
    for sample in samples(text):  # untrusted text: NaN, infinite and negative values are skipped there
        if wanted(sample.name):
            out[sample.name] = out.get(sample.name, 0.0) + sample.value
    return out


class EngineTiming(Strict):
    """What the server's own latency histograms moved by during one level."""

    requests: Count = Field(description="First tokens the server recorded during the level.")
    ttft_ms: Ms | None = Field(
        None, description="Server-side mean time to first token (arrival at the API server to first output), ms."
    )
    finished: Count = Field(description="Requests the server finished during the level.")
    tpot_ms: Ms | None = Field(
        None, description="Engine-side mean time per output token after the first, over those requests, ms."
    )


def timing(before: str, after: str) -> EngineTiming | None:
    """The level's server-side timing from the /metrics text before and after it; None when the server exports
    neither histogram, a counter went backwards (a restart in between) or a figure is not finite (overflowed) or
    past its plausible bound."""
    first, last = parse_sums(before), parse_sums(after)
    if not last:
        return None
    delta = {key: last[key] - first.get(key, 0.0) for key in last}
    if any(value < 0 for value in delta.values()):
        return None
    if not all(math.isfinite(value) for value in delta.values()):
        return None  # sums that overflowed: nothing a server really measured
    requests = round(delta.get(f"{TTFT}_count", 0.0))
    finished = round(delta.get(f"{TPOT}_count", 0.0))
    ttft = 1000 * delta[f"{TTFT}_sum"] / requests if requests and f"{TTFT}_sum" in delta else None
    tpot = 1000 * delta[f"{TPOT}_sum"] / finished if finished and f"{TPOT}_sum" in delta else None
    if any(value is not None and not math.isfinite(value) for value in (ttft, tpot)):
        return None
    try:
        return EngineTiming(requests=requests, ttft_ms=ttft, finished=finished, tpot_ms=tpot)
    except ValueError:  # past a plausible bound (catalogue.models.plausible): the image's text, not a measurement
        return None


SLACK = 1.25
"""How far above the client's mean E2E ÷ (output tokens − 1) an engine TPOT may be before it is not believed."""


def plausible(
    engine: EngineTiming, e2e_ms: float | None, tokens_per_request: float | None, client_ttft_ms: float | None = None
) -> bool:
    """Whether the engine's figures fit inside the client's (see the module's text): its mean TPOT inside the client's
    mean request time, its mean TTFT (arrival at the API server to first output) inside the client's (send to first
    token), both with SLACK. Figures the client's cannot bound (no E2E, no output length, no TTFT beside an engine
    TTFT) are not believed: an earlier run file without them once put every level in 'bursts'."""
    if engine.tpot_ms is None:
        return True
    if e2e_ms is None or tokens_per_request is None:
        return False
    gaps = max(1.0, tokens_per_request - 1)
    if engine.tpot_ms > SLACK * e2e_ms / gaps:
        return False
    return engine.ttft_ms is None or (client_ttft_ms is not None and engine.ttft_ms <= SLACK * client_ttft_ms)


def burst_delivery(
    client_tpot_ms: float | None,
    engine: EngineTiming | None,
    e2e_ms: float | None = None,
    tokens_per_request: float | None = None,
    client_ttft_ms: float | None = None,
) -> str | None:
    """Why a level's client-side latencies are not the server's (its tokens arrived in bursts), or None; engine
    figures the client's do not bound (`plausible`) say nothing."""
    if client_tpot_ms is None or engine is None or not engine.tpot_ms:
        return None
    if not plausible(engine, e2e_ms, tokens_per_request, client_ttft_ms):
        return None
    if client_tpot_ms >= BURST * engine.tpot_ms:
        return None
    return (
        f"tokens reached the client in bursts (TPOT {client_tpot_ms:.2f} ms at the client, {engine.tpot_ms:.2f} ms "
        "on the engine's clock): the client or the API server stalled"
    )


class _Timed(Protocol):
    """A level with the client's latency distributions, its window and the engine's timing
    (catalogue.models.benchmark)."""

    @property
    def tpot_ms(self) -> object: ...
    @property
    def e2e_ms(self) -> object: ...
    @property
    def ttft_ms(self) -> object: ...
    @property
    def engine(self) -> EngineTiming | None: ...
    @property
    def generation_tps(self) -> float | None: ...
    @property
    def duration_s(self) -> float | None: ...
    @property
    def completed(self) -> int | None: ...


def level_bursts(level: _Timed) -> str | None:
    """Why a level's client-side latencies measured a stall between engine and client, not the serving, or None."""
    tpot = getattr(level.tpot_ms, "mean", None)
    e2e = getattr(level.e2e_ms, "mean", None)
    tokens = None
    if level.generation_tps and level.duration_s and level.completed:
        try:
            tokens = level.generation_tps * level.duration_s / level.completed
        except OverflowError:  # a count no run has (a file refuses it; an image's raw result may not)
            return None
    return burst_delivery(tpot, level.engine, e2e, tokens, getattr(level.ttft_ms, "mean", None))
