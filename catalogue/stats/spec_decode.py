"""Speculative decoding, per level: vLLM's own counters on /metrics, read before and after a level, and what their
difference says (acceptance rate, mean accepted length). Pure: the runner fetches the text.

vLLM 0.32 (vllm/v1/spec_decode/metrics.py, SpecDecodingProm) exports, per engine, the Prometheus counters
`vllm:spec_decode_num_drafts`, `vllm:spec_decode_num_draft_tokens`, `vllm:spec_decode_num_accepted_tokens` and
`vllm:spec_decode_num_accepted_tokens_per_pos` (label `position`), each with the `_total` suffix prometheus_client
adds. Its docstring defines acceptance rate = accepted / draft tokens and mean acceptance length = 1 + accepted /
drafts (the bonus token counted): the same definitions here."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import Field, NonNegativeFloat

from catalogue.models.plausible import DraftLength, Share, Tokens
from catalogue.models.strict import Strict
from catalogue.stats.prometheus import samples

PREFIX = "vllm:spec_decode_num_"


@dataclass(frozen=True)
class Counters:
    """The speculative-decoding counters at one moment, summed over engines."""

    drafts: float = 0.0
    draft_tokens: float = 0.0
    accepted: float = 0.0
    per_position: dict[int, float] = field(default_factory=dict)


def parse_counters(text: str) -> Counters | None:
    """The counters in a /metrics page (Prometheus text format); None when the server exports none (no speculative
    decoding configured)."""
    totals = {"drafts": 0.0, "draft_tokens": 0.0, "accepted_tokens": 0.0}
    per_pos: dict[int, float] = {}
    seen = False
    for sample in samples(text):
        if not sample.name.startswith(PREFIX) or not sample.name.endswith("_total"):
            continue
        kind = sample.name[len(PREFIX) : -len("_total")]
        if kind == "accepted_tokens_per_pos":
            position = sample.labels.get("position", "0")
            if not position.isdigit():
                continue
            per_pos[int(position)] = per_pos.get(int(position), 0.0) + sample.value
            seen = True
        elif kind in totals:
            totals[kind] += sample.value
            seen = True
    if not seen:
        return None
    return Counters(totals["drafts"], totals["draft_tokens"], totals["accepted_tokens"], per_pos)


class SpecDecodeFigures(Strict):
    """What vLLM's speculative-decoding counters moved by during one level."""

    drafts: Tokens = Field(description="Drafts proposed during the level (vllm:spec_decode_num_drafts).")
    draft_tokens: Tokens = Field(description="Draft tokens proposed (vllm:spec_decode_num_draft_tokens).")
    accepted_tokens: Tokens = Field(description="Draft tokens accepted (vllm:spec_decode_num_accepted_tokens).")
    acceptance_rate: NonNegativeFloat | None = Field(
        None, le=1, description="Accepted / draft tokens; null when no draft was made."
    )
    mean_accepted_length: DraftLength | None = Field(
        None, description="1 + accepted tokens / drafts (tokens per target step, the bonus token counted)."
    )
    per_position: list[Share] = Field(
        default_factory=list, description="Acceptance rate of each draft position (accepted at it / drafts)."
    )


def figures(before: Counters, after: Counters) -> SpecDecodeFigures:
    """The level's figures from the counters before and after it (a server restart in between is an error)."""
    drafts = after.drafts - before.drafts
    tokens = after.draft_tokens - before.draft_tokens
    accepted = after.accepted - before.accepted
    if min(drafts, tokens, accepted) < 0:
        raise ValueError("speculative-decoding counters went down: the server restarted during the level")
    positions = sorted(after.per_position)
    return SpecDecodeFigures(
        drafts=round(drafts),
        draft_tokens=round(tokens),
        accepted_tokens=round(accepted),
        acceptance_rate=round(accepted / tokens, 4) if tokens else None,
        mean_accepted_length=round(1 + accepted / drafts, 3) if drafts else None,
        per_position=[
            round((after.per_position[p] - before.per_position.get(p, 0.0)) / drafts, 4) if drafts else 0.0
            for p in positions
        ],
    )
