"""Agent sessions on the simulated engine in virtual time: the truth a capacity in sessions is checked against.

The replay is AIPerf's (runner/measuring/agents.py): `sessions` slots, each taking the trace's next session when its
previous one ends; a session's first turn is sent at once, every later turn `delay` ms after the turn before it ended
(the slot is held through the think time). A turn's prompt is the session's whole history (every earlier input block and
answer) followed by the turn's new blocks. A block's tokens are fixed by its hash id, so equal ids are equal text and
the engine's prefix cache (simulator/engine.py) finds shared prefixes as vLLM's does; an answer's tokens are its own.

The same engine and profile as the server's, with no HTTP, client or clock in between: `replay` gives each turn's
times (what AIPerf records of one pass through the trace), `true_capacity` the most sessions whose turns' steady-state
percentiles stay within the limits, from long replays with one seed at every session count.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from itertools import count

from catalogue.models.agent_trace import AgentTrace, think_ms
from catalogue.stats import agent_levels
from catalogue.stats.agents import AgentLevel
from simulator.engine import Engine, Request, block_hashes
from simulator.profile import Profile
from simulator.truth import Scheduler

ANSWER_BASE = 1 << 40
"""Answer tokens are numbered from here, apart from every block's tokens."""


@dataclass
class Turn:
    """One turn as the engine served it (seconds of virtual time)."""

    session: int
    index: int
    request: Request


@dataclass
class Replay:
    """A replay's turns, in send order, and the prefix cache's counters (tokens)."""

    turns: list[Turn] = field(default_factory=list)
    queries: int = 0
    hits: int = 0


def block_tokens(block_id: int, size: int) -> list[int]:
    """The tokens of one hash block: the same id, the same tokens."""
    return [block_id * size + i for i in range(size)]


def session_plans(trace: AgentTrace, sessions: int, seed: int) -> list[list[tuple[list[int], float]]]:
    """Each session's turns as (new tokens, think ms before it): the trace's layout, `sessions` of them."""
    rng = random.Random(seed)
    shared = list(range(trace.shared_blocks))
    next_id = len(shared)
    out = []
    for _ in range(sessions):
        plan = []
        for t in range(trace.turns):
            size = trace.first_turn_blocks - len(shared) if t == 0 else trace.growth_blocks
            ids = (shared if t == 0 else []) + list(range(next_id, next_id + size))
            next_id += size
            tokens = [tok for b in ids for tok in block_tokens(b, trace.block_tokens)]
            plan.append((tokens, think_ms(trace, rng) if t else 0.0))
        out.append(plan)
    return out


def replay(
    profile: Profile,
    scheduler: Scheduler,
    trace: AgentTrace,
    sessions: int,
    *,
    prefix_caching: bool = True,
    seed: int = 0,
) -> Replay:
    """Every session of `trace` at `sessions` concurrent sessions; each turn's times, the cache's counters."""
    engine = Engine(
        profile,
        max_num_seqs=scheduler.max_num_seqs,
        max_num_batched_tokens=scheduler.max_num_batched_tokens,
        seed=seed,
        prefix_caching=prefix_caching,
    )
    plans = session_plans(trace, trace.sessions, seed + 11)
    history: dict[int, list[int]] = {}
    position: dict[int, int] = {}
    owner: dict[int, Turn] = {}
    ids = count()
    answers = count(ANSWER_BASE)
    pending: list[tuple[float, int, int]] = []  # (send time, order, session)
    order = count()
    started = min(sessions, len(plans))
    for s in range(started):
        heapq.heappush(pending, (0.0, next(order), s))
    out = Replay()
    now = 0.0
    remaining = sum(len(p) for p in plans)
    while remaining:
        while pending and pending[0][0] <= now:
            at, _, s = heapq.heappop(pending)
            index = position.get(s, 0)
            prompt = history.get(s, []) + plans[s][index][0]
            request = Request(next(ids), len(prompt), trace.output_tokens, at, block_hashes(prompt, profile.block_size))
            history[s] = prompt
            turn = Turn(s, index, request)
            owner[request.rid] = turn
            out.turns.append(turn)
            engine.add(request)
        if not engine.busy:
            now = pending[0][0]
            continue
        step = engine.plan()
        now += step.duration_s
        for request in engine.finish(step, now):
            if not request.finished:
                continue
            remaining -= 1
            turn = owner.pop(request.rid)
            s = turn.session
            history[s] = history[s] + [next(answers) for _ in range(request.generated)]
            position[s] = turn.index + 1
            if position[s] < len(plans[s]):
                heapq.heappush(pending, (now + plans[s][position[s]][1] / 1000, next(order), s))
            elif started < len(plans):
                heapq.heappush(pending, (now, next(order), started))
                started += 1
    if engine.cache is not None:
        out.queries, out.hits = engine.cache.queries, engine.cache.hits
    return out


def ttft_ms(turn: Turn) -> float:
    """Time to the first token, ms."""
    return ((turn.request.first_token or 0.0) - turn.request.arrival) * 1000


def tpot_ms(turn: Turn) -> float | None:
    """Time per output token after the first, ms; None for a one-token answer."""
    r = turn.request
    if r.generated < 2 or r.first_token is None or r.last_token is None:
        return None
    return (r.last_token - r.first_token) / (r.generated - 1) * 1000


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile, the smallest value with at least p % of them at or below it (as
    catalogue.stats.agent_levels)."""
    ordered = sorted(values)
    at = max(0, min(len(ordered) - 1, -(-len(ordered) * p // 100) - 1))
    return ordered[int(at)]


def meets(found: Replay, limits: dict[str, float], p: float, skip: float) -> bool:
    """Every limited latency's p-th percentile over the turns after the first `skip` share within its limit."""
    kept = found.turns[int(len(found.turns) * skip) :]
    values = {"ttft": [ttft_ms(t) for t in kept], "tpot": [v for t in kept if (v := tpot_ms(t)) is not None]}
    return all(percentile(values[key], p) <= limit for key, limit in limits.items())


def true_capacity(
    profile: Profile,
    scheduler: Scheduler,
    trace: AgentTrace,
    *,
    limits: dict[str, float],
    percentile_p: float,
    max_sessions: int,
    prefix_caching: bool = True,
    sessions_per_slot: int = 40,
    seed: int = 1,
) -> int:
    """The most concurrent sessions below the first count that misses, up to `max_sessions` (0: even one misses):
    each count replays `sessions_per_slot` sessions a slot (its first fifth of turns skipped), one seed for all."""
    for n in range(1, max_sessions + 1):
        long = trace.model_copy(update={"sessions": n * sessions_per_slot})
        found = replay(profile, scheduler, long, n, prefix_caching=prefix_caching, seed=seed)
        if not meets(found, limits, percentile_p, 0.2):
            return n - 1
    return max_sessions


def measured_turns(found: Replay) -> list[agent_levels.Turn]:
    """The replay's turns as the runner reads AIPerf's export of them (catalogue.stats.agent_levels)."""
    return [
        agent_levels.Turn(
            session=f"s{t.session}",
            index=t.index,
            start_s=t.request.arrival,
            end_s=t.request.last_token or t.request.arrival,
            ttft_ms=ttft_ms(t),
            latency_ms=((t.request.last_token or 0.0) - t.request.arrival) * 1000,
            output_tokens=t.request.generated,
            prompt_tokens=t.request.prompt,
            ok=t.request.finished,
        )
        for t in found.turns
    ]


def counters_page(queries: int, hits: int) -> str:
    """A /metrics page with vLLM's two prefix-cache counters (what the runner reads around a level)."""
    return f"vllm:prefix_cache_queries_total {queries}\nvllm:prefix_cache_hits_total {hits}\n"


def level(found: Replay, sessions: int, limits: dict[str, float], probe: int | None = None) -> AgentLevel:
    """One replay as the runner's level: the same figures, verdict inputs and hit rate
    (catalogue.stats.agent_levels)."""
    before, after = counters_page(0, 0), counters_page(found.queries, found.hits)
    return agent_levels.level(sessions, measured_turns(found), before, after, limits, probe)
