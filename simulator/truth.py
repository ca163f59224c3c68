"""The truth of a profile: the latency model run in virtual time, with no HTTP, no client and no clock.

A closed-loop level sends `prompts` requests with at most `concurrency` in flight (each next one the instant one
ends, as `vllm bench serve --max-concurrency` does); an open-loop level sends them at gamma-distributed gaps of mean
1/rate (its `--burstiness`: 1 is Poisson). Requests that arrive during a step join the next one, as in the server.
The true capacity under an SLO is the highest rate whose steady-state percentile of each limited latency is within
its limit, found by bisection over long runs with common random numbers (one seed at every rate, so the percentile
moves with the rate and not with the draw)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from itertools import count

from simulator.engine import Engine, Request, draft_length
from simulator.profile import Profile


@dataclass(frozen=True)
class Scheduler:
    """The `vllm serve` settings that shape the schedule."""

    max_num_seqs: int
    max_num_batched_tokens: int
    spec_tokens: int = 0
    """Draft tokens a step (`--speculative-config`'s num_speculative_tokens); 0: no speculative decoding."""

    @classmethod
    def of(cls, profile: Profile, flags: dict | None = None) -> Scheduler:
        flags = flags or {}
        return cls(
            int(flags.get("max-num-seqs", profile.max_num_seqs)),
            int(flags.get("max-num-batched-tokens", profile.max_num_batched_tokens)),
            draft_length(flags.get("speculative-config")),
        )


@dataclass(frozen=True)
class Level:
    """The true figures of one level (latencies in ms, throughput in output tokens per second)."""

    ttft: list[float]
    tpot: list[float]
    itl: list[float]
    e2e: list[float]
    output_tps: float
    request_rps: float

    def mean(self, name: str) -> float:
        values = getattr(self, name)
        return sum(values) / len(values) if values else math.nan

    def percentile(self, name: str, p: float) -> float:
        """The p-th percentile, interpolated linearly between order statistics (numpy's default, as vLLM's client)."""
        values = sorted(getattr(self, name))
        if not values:
            return math.nan
        at = (len(values) - 1) * p / 100
        low = math.floor(at)
        high = min(low + 1, len(values) - 1)
        return values[low] + (values[high] - values[low]) * (at - low)


def simulate(
    profile: Profile,
    scheduler: Scheduler,
    *,
    prompts: int,
    input_len: int,
    output_len: int,
    concurrency: int | None = None,
    rate: float | None = None,
    burstiness: float = 1.0,
    seed: int = 0,
    skip: float = 0.0,
) -> Level:
    """One level in virtual time: closed loop at `concurrency`, or open loop at `rate`; `skip` leaves out that
    share of the first requests (the warm-up) from the figures."""
    engine = Engine(
        profile,
        max_num_seqs=scheduler.max_num_seqs,
        max_num_batched_tokens=scheduler.max_num_batched_tokens,
        seed=seed,
        prefix_caching=False,
        spec_tokens=scheduler.spec_tokens,
    )
    arrivals = random.Random(seed + 7)
    if rate is not None:
        theta = 1.0 / (rate * burstiness)
        times, t = [], 0.0
        for _ in range(prompts):
            t += arrivals.gammavariate(burstiness, theta)
            times.append(t)
    else:
        times = [0.0] * min(prompts, concurrency or prompts)
    done = replay(engine, times, prompts, (input_len, output_len), closed=rate is None)
    return _level(done, skip)


def replay(engine: Engine, times: list[float], total: int, lengths: tuple[int, int], closed: bool) -> list[Request]:
    """Serve `total` requests of `lengths` (input, output) on `engine` in virtual time, arriving at `times`; closed:
    each finished request sends the next at once. The finished requests, in the order they finished."""
    ids, pending, sent, now = count(), list(reversed(times)), len(times), 0.0
    done: list[Request] = []
    while len(done) < total:
        while pending and pending[-1] <= now:
            engine.add(Request(next(ids), *lengths, pending.pop()))
        if not engine.busy:
            now = pending[-1]
            continue
        step = engine.plan()
        now += step.duration_s
        for request in engine.finish(step, now):
            if request.finished:
                done.append(request)
                if closed and sent < total:
                    pending.append(now)
                    sent += 1
    return done


def _level(done: list[Request], skip: float) -> Level:
    ordered = sorted(done, key=lambda r: r.arrival)
    kept = ordered[int(len(ordered) * skip) :]
    span = max(r.last_token or 0 for r in done) - min(r.arrival for r in done)
    ms = 1000.0
    return Level(
        ttft=[((r.first_token or 0) - r.arrival) * ms for r in kept],
        tpot=[((r.last_token or 0) - (r.first_token or 0)) / (r.generated - 1) * ms for r in kept if r.generated > 1],
        itl=[(b - a) * ms for r in kept for a, b in zip(r.token_times, r.token_times[1:], strict=False)],
        e2e=[((r.last_token or 0) - r.arrival) * ms for r in kept],
        output_tps=sum(r.generated for r in done) / span,
        request_rps=len(done) / span,
    )


def meets(level: Level, limits: dict[str, float], percentile: float) -> bool:
    """Every limited latency's percentile within its limit ({'ttft' | 'tpot' | 'e2el': ms})."""
    field = {"ttft": "ttft", "tpot": "tpot", "e2el": "e2e"}
    return all(level.percentile(field[key], percentile) <= limit for key, limit in limits.items())


def capacity(
    profile: Profile,
    scheduler: Scheduler,
    *,
    limits: dict[str, float],
    percentile: float,
    input_len: int,
    output_len: int,
    burstiness: float = 1.0,
    window_s: float = 600.0,
    tolerance: float = 0.002,
    seed: int = 1,
) -> float:
    """The highest rate, req/s, that meets the SLO in a steady state: each tried rate runs `window_s` of virtual time
    (its first fifth skipped); bisection until the bracket is `tolerance` wide (relative)."""

    def ok(rate: float) -> bool:
        prompts = max(2000, math.ceil(rate * window_s))
        level = simulate(
            profile, scheduler, prompts=prompts, input_len=input_len, output_len=output_len, rate=rate,
            burstiness=burstiness, seed=seed, skip=0.2,
        )  # fmt: skip
        return meets(level, limits, percentile)

    low, high = 0.0, 1.0
    while ok(high):
        low, high = high, high * 2
    while high - low > tolerance * high:
        middle = (low + high) / 2
        low, high = (middle, high) if ok(middle) else (low, middle)
    return low
