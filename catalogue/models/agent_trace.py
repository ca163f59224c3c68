"""A synthetic agent trace in the mooncake format, made from stated parameters (`python -m
catalogue.models.agent_trace`).

Each line of the JSONL file is one turn: `session_id`, `input_length` (tokens), `output_length`, `hash_ids` (one id
per block of `block_tokens` tokens: equal ids are equal text, so a shared prefix is real) and, for every turn after
a session's first, `delay` (ms of think time before it is sent). It is the format AIPerf's `mooncake_trace` loader
reads as multi-turn sessions: each turn's blocks are the new input of that turn (tool results, the next user
message), and the replayer resends the session's whole history before them, so the context grows turn by turn.

The first turn of every session has `first_turn_blocks` blocks; the first `shared_blocks` of them (the system prompt
and tool definitions) are the same ids in every session; every other block is new. `reuse` = shared ÷ first-turn
blocks is the knob a reuse sweep turns. The parameters and the file's sha256 make the workload key
(catalogue.models.workload.Workload.trace, .trace_sha256): two traces that differ in anything are never compared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from catalogue.models.plausible import Ms, PromptTokens, Repeats, SmallInt
from catalogue.models.strict import Strict


class AgentTrace(Strict):
    """The parameters of a synthetic agent trace: what the generator makes, and the workload key's words."""

    sessions: Repeats = Field(description="Sessions in the trace (the replayer runs through them in order).")
    turns: Repeats = Field(description="Turns per session.")
    block_tokens: Repeats = Field(64, description="Tokens per hash block (AgentX hashes 64-token blocks).")
    first_turn_blocks: Repeats = Field(description="Input blocks of each session's first turn.")
    reuse: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of the first turn's blocks common to every session (system prompt and tools).",
    )
    growth_blocks: Repeats = Field(description="New input blocks of each later turn (tool results, user text).")
    output_tokens: PromptTokens = Field(description="Tokens generated per turn.")
    think: Literal["none", "fixed", "exponential"] = Field(
        "exponential", description="Think time before each later turn: none, a fixed time, or exponential."
    )
    think_ms: Ms = Field(0, description="The fixed think time, or the exponential's mean, ms.")
    seed: SmallInt = Field(0, description="Seed of the think-time draws.")

    @model_validator(mode="after")
    def _think(self) -> AgentTrace:
        if (self.think == "none") != (self.think_ms == 0):
            raise ValueError("think_ms must be 0 exactly when think is 'none'")
        return self

    @property
    def shared_blocks(self) -> int:
        """Blocks of the first turn common to every session."""
        return round(self.reuse * self.first_turn_blocks)

    def describe(self) -> str:
        """The parameters in words: what a page and the workload key show."""
        think = "no think time" if self.think == "none" else f"think {self.think} {self.think_ms:g} ms"
        return (
            f"{self.sessions} sessions × {self.turns} turns · first turn {self.first_turn_blocks} blocks of "
            f"{self.block_tokens} tokens, {self.reuse:.0%} shared · +{self.growth_blocks} blocks a turn · "
            f"{self.output_tokens} tokens out · {think} · seed {self.seed}"
        )

    def with_reuse(self, reuse: float) -> AgentTrace:
        """The same trace with another share of shared blocks (one step of a reuse sweep)."""
        return self.model_copy(update={"reuse": reuse})

    def context_tokens(self) -> int:
        """Tokens of a session's last prompt before the chat template: every input block and every earlier answer."""
        blocks = self.first_turn_blocks + (self.turns - 1) * self.growth_blocks
        return blocks * self.block_tokens + (self.turns - 1) * self.output_tokens


def turns(trace: AgentTrace) -> list[dict[str, object]]:
    """Every turn of the trace in session order: the mooncake records."""
    rng = random.Random(trace.seed)
    shared = list(range(trace.shared_blocks))
    next_id = len(shared)
    out: list[dict[str, object]] = []
    for s in range(trace.sessions):
        for t in range(trace.turns):
            count = trace.first_turn_blocks - len(shared) if t == 0 else trace.growth_blocks
            ids = (shared if t == 0 else []) + list(range(next_id, next_id + count))
            next_id += count
            record: dict[str, object] = {
                "session_id": f"s{s}",
                "input_length": len(ids) * trace.block_tokens,
                "output_length": trace.output_tokens,
                "hash_ids": ids,
            }
            if t > 0:
                record["delay"] = round(think_ms(trace, rng), 3)
            out.append(record)
    return out


def think_ms(trace: AgentTrace, rng: random.Random) -> float:
    """One think time, ms."""
    if trace.think == "exponential":
        return rng.expovariate(1 / trace.think_ms)
    return trace.think_ms


def text(trace: AgentTrace) -> str:
    """The trace file's text: one JSON object a line, keys in a fixed order (the same parameters, the same bytes)."""
    return "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in turns(trace))


def sha256(data: bytes) -> str:
    """The hex digest the workload key carries."""
    return hashlib.sha256(data).hexdigest()


def write(trace: AgentTrace, path: Path) -> str:
    """Write the trace (a temporary file, then renamed); its sha256."""
    data = text(trace).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return sha256(data)


def intended_hit_rate(trace: AgentTrace) -> float:
    """The share of prompt tokens an unbounded prefix cache could serve, counted on the trace's own tokens: a first
    turn's shared blocks after the first session sent them, and every later turn's whole history (earlier inputs and
    answers). The chat template's few tokens and the cache's whole-block rounding are left out."""
    block, out = trace.block_tokens, trace.output_tokens
    total = cached = 0
    for s in range(trace.sessions):
        history = 0
        for t in range(trace.turns):
            new = (trace.first_turn_blocks if t == 0 else trace.growth_blocks) * block
            total += history + new
            cached += history + (trace.shared_blocks * block if t == 0 and s > 0 else 0)
            history += new + out
    return cached / total if total else 0.0


def blocks_fit(trace: AgentTrace, max_model_len: int) -> bool:
    """Whether a session's last prompt (plus its answer and some template room) fits the served context."""
    return trace.context_tokens() + trace.output_tokens + math.ceil(0.1 * trace.block_tokens) < max_model_len


def main(argv: list[str] | None = None) -> int:
    """`python -m catalogue.models.agent_trace OUT.jsonl --sessions 16 --turns 4 ...`: write a trace, print its
    sha256."""
    parser = argparse.ArgumentParser(prog="python -m catalogue.models.agent_trace", description=main.__doc__)
    parser.add_argument("out", type=Path)
    for name, info in AgentTrace.model_fields.items():
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, help=info.description)
    args = parser.parse_args(argv)
    given = {k: v for k, v in vars(args).items() if k != "out" and v is not None}
    try:
        trace = AgentTrace.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(x) for x in first["loc"]) or "parameters"
        print(f"{args.out}: {field}: {first['msg']}", file=sys.stderr)
        return 2
    print(write(trace, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
