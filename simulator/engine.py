"""The simulated engine: vLLM-style continuous batching as plain state, with no clock of its own.

`Engine.plan()` forms the next step from the running and waiting requests and returns its duration; `Engine.finish()`
applies it (one token to each decoding sequence, plus its accepted draft tokens with speculative decoding, a first
token to each prompt that completed). The server drives it in real time, simulator/truth.py in virtual time: the
same scheduler, two clocks."""

from __future__ import annotations

import json
import random
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from simulator.profile import Profile


@dataclass(eq=False)
class Request:
    """One request inside the engine."""

    rid: int
    prompt: int
    """Prompt tokens."""
    max_tokens: int
    arrival: float
    blocks: list[int] = field(default_factory=list)
    """Chained hashes of the prompt's full blocks (the prefix cache's keys)."""
    cached: int = 0
    """Prompt tokens found in the prefix cache at admission: they cost no prefill."""
    done_prompt: int = 0
    """Prompt tokens computed (or found cached) so far."""
    generated: int = 0
    first_token: float | None = None
    last_token: float | None = None
    token_times: list[float] = field(default_factory=list)
    new_tokens: int = 0
    """Tokens the last step gave it (more than one when speculative decoding accepted drafts)."""

    @property
    def decoding(self) -> bool:
        return self.done_prompt >= self.prompt

    @property
    def finished(self) -> bool:
        return self.generated >= self.max_tokens


def block_hashes(tokens: list[int], block_size: int) -> list[int]:
    """Each full block's hash, chained on the one before (as vLLM keys its prefix cache): equal prefixes, equal keys."""
    out: list[int] = []
    parent = 0
    for start in range(0, len(tokens) - block_size + 1, block_size):
        parent = hash((parent, tuple(tokens[start : start + block_size])))
        out.append(parent)
    return out


class PrefixCache:
    """Prompt blocks kept after their prefill, least recently used first out; counts queries and hits in tokens."""

    def __init__(self, capacity: int, block_size: int) -> None:
        self.capacity = capacity
        self.block_size = block_size
        self.blocks: OrderedDict[int, None] = OrderedDict()
        self.queries = 0
        self.hits = 0

    def lookup(self, request: Request) -> int:
        """Prompt tokens of `request` already cached: its leading blocks found, never the whole prompt (vLLM
        recomputes at least the last token to produce the first output)."""
        usable = (request.prompt - 1) // self.block_size
        hit = 0
        for key in request.blocks[:usable]:
            if key not in self.blocks:
                break
            self.blocks.move_to_end(key)
            hit += 1
        self.queries += request.prompt
        self.hits += hit * self.block_size
        return hit * self.block_size

    def insert(self, request: Request) -> None:
        for key in request.blocks:
            self.blocks[key] = None
            self.blocks.move_to_end(key)
        while len(self.blocks) > self.capacity:
            self.blocks.popitem(last=False)


@dataclass
class Step:
    """One planned engine step."""

    duration_s: float
    prefill: dict[int, int]
    """rid -> prompt tokens computed in this step."""
    decode: list[Request]
    seqs: int


def draft_length(config: object) -> int:
    """Draft tokens a step from `--speculative-config` (JSON text, or the mapping a recipe holds): its
    `num_speculative_tokens`; 0 without one. The method is not modelled: the profile's acceptance stands for it."""
    if config is None:
        return 0
    data = json.loads(config) if isinstance(config, str) else config
    value = data.get("num_speculative_tokens") if isinstance(data, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 64:
        raise ValueError("--speculative-config needs num_speculative_tokens, a whole number from 1 to 64")
    return value


@dataclass
class SpecCounters:
    """vLLM's speculative-decoding counters: drafts (one per decoding sequence a step), draft tokens, accepted
    tokens, and accepted tokens by position in the draft."""

    drafts: int = 0
    draft_tokens: int = 0
    accepted: int = 0
    per_position: list[int] = field(default_factory=list)


class Engine:
    """The scheduler's state: waiting (FIFO) and running requests, the prefix cache, the noise source."""

    def __init__(
        self,
        profile: Profile,
        *,
        max_num_seqs: int,
        max_num_batched_tokens: int,
        seed: int,
        prefix_caching: bool,
        spec_tokens: int = 0,
    ) -> None:
        self.profile = profile
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.spec_tokens = spec_tokens
        self.spec = SpecCounters(per_position=[0] * spec_tokens)
        self.rng = random.Random(seed)
        self.cache = PrefixCache(profile.cache_blocks, profile.block_size) if prefix_caching else None
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []

    def add(self, request: Request) -> None:
        self.waiting.append(request)

    def abort(self, request: Request) -> None:
        """Drop a request whose client went away (vLLM aborts it too)."""
        if request in self.waiting:
            self.waiting.remove(request)
        self.running = [r for r in self.running if r is not request]

    @property
    def busy(self) -> bool:
        return bool(self.waiting or self.running)

    def plan(self) -> Step:
        """The next step: running requests first (a decode token each, or their next prompt chunk), then waiting
        ones admitted in order while a sequence slot and token budget remain; its noisy duration in seconds."""
        budget = self.max_num_batched_tokens
        prefill: dict[int, int] = {}
        decode: list[Request] = []
        for request in self.running:
            if budget <= 0:
                break
            if request.decoding:
                decode.append(request)
                budget -= 1
            else:
                chunk = min(request.prompt - request.done_prompt, budget)
                prefill[request.rid] = chunk
                budget -= chunk
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs:
            request = self.waiting.popleft()
            if self.cache is not None:
                request.cached = self.cache.lookup(request)
                request.done_prompt = request.cached
            chunk = min(request.prompt - request.done_prompt, budget)
            prefill[request.rid] = chunk
            budget -= chunk
            self.running.append(request)
        context = sum(r.prompt + r.generated for r in decode)
        cost = self.profile.step_cost_ms(sum(prefill.values()), len(decode), context, self.spec_tokens * len(decode))
        return Step(cost * self.profile.noise(self.rng.gauss(0, 1)) / 1000, prefill, decode, len(decode))

    def accepted(self) -> int:
        """One draft of `spec_tokens`, counted: how many of its tokens were accepted (each with the profile's chance,
        in order, until the first rejection)."""
        taken = 0
        while taken < self.spec_tokens and self.rng.random() < self.profile.spec_acceptance:
            self.spec.per_position[taken] += 1
            taken += 1
        self.spec.drafts += 1
        self.spec.draft_tokens += self.spec_tokens
        self.spec.accepted += taken
        return taken

    def finish(self, step: Step, now: float) -> list[Request]:
        """Apply `step` ended at `now`: tokens out (a decoding sequence's one plus its accepted drafts), finished
        requests leave. Returns the requests that got a token."""
        out = []
        decoded = {request.rid for request in step.decode}
        for request in self.running:
            got = 1 + self.accepted() if request.rid in decoded and self.spec_tokens else int(request.rid in decoded)
            if request.rid in step.prefill:
                request.done_prompt += step.prefill[request.rid]
                if request.decoding:
                    got = 1
                    if self.cache is not None:
                        self.cache.insert(request)
            if got:
                request.new_tokens = min(got, request.max_tokens - request.generated)
                request.generated += request.new_tokens
                request.token_times += [now] * request.new_tokens
                if request.first_token is None:
                    request.first_token = now
                request.last_token = now
                out.append(request)
        self.running = [r for r in self.running if not r.finished]
        return out
