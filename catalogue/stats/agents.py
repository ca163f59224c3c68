"""The agent workload (`sweep.agents`): multi-turn sessions with shared prefixes replayed from a mooncake-format trace,
and what a run file keeps of it (levels counted in concurrent sessions, the prefix-cache hit rate, the capacity in
sessions). How a level's figures are read: catalogue.stats.agent_levels; how the capacity is judged: agent_capacity."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from catalogue.models.agent_trace import AgentTrace
from catalogue.models.latency import Stats
from catalogue.models.plausible import MAX_TOKENS, Concurrency, Count, Repeats, Seconds, Share, Tps
from catalogue.models.strict import Strict

TokenCounter = Annotated[float, Field(ge=0, le=MAX_TOKENS)]
"""A growth of vLLM's prefix-cache counters over one level, tokens."""


class AgentsSetting(Strict):
    """Replay agent sessions with AIPerf after the other steps, in the same boot: one run file per reuse ratio."""

    trace: AgentTrace = Field(
        description="The synthetic trace's parameters (catalogue.models.agent_trace), reuse aside."
    )
    reuse: list[float] = Field(
        min_length=1, description="Shares of each first turn's blocks common to every session, one run file each."
    )
    sessions: list[Concurrency] = Field(min_length=1, description="Concurrent sessions of each level, ascending.")
    max_sessions: Concurrency | None = Field(
        None, description="Highest session count the capacity search may try (needs sweep.slo); null: no search."
    )
    search_probes: Repeats = Field(6, description="Levels the capacity search may add beyond the planned ones.")

    @model_validator(mode="after")
    def _ordered(self) -> AgentsSetting:
        if self.sessions != sorted(set(self.sessions)):
            raise ValueError("sessions must be ascending without repeats")
        if self.reuse != sorted(set(self.reuse)) or not all(0 <= r <= 1 for r in self.reuse):
            raise ValueError("reuse must be ascending shares from 0 to 1 without repeats")
        if self.max_sessions is not None and self.max_sessions < self.sessions[-1]:
            raise ValueError("max_sessions must be at least the highest planned level")
        if self.trace.sessions < 2 * max(self.sessions[-1], self.max_sessions or 0):
            raise ValueError(
                "trace.sessions must be at least twice the highest level or max_sessions (each slot runs two sessions)"
            )
        return self

    def traces(self) -> list[AgentTrace]:
        """The trace of each reuse ratio, in order."""
        return [self.trace.with_reuse(r) for r in self.reuse]


class AgentLevel(Strict):
    """One level of agent sessions: how many ran at once, their turns' latencies, tokens/s, the prefix cache."""

    sessions: Concurrency = Field(description="Concurrent sessions (AIPerf --concurrency over multi-turn sessions).")
    probe: Repeats | None = Field(None, description="The capacity search's probe number; null: a planned level.")
    turns: Count = Field(description="Turns that completed.")
    failed: Count = Field(0, description="Turns that failed.")
    duration_s: Seconds | None = Field(None, description="First send to last answer, seconds.")
    ttft_first_ms: Stats | None = Field(None, description="TTFT of each session's first turn.")
    ttft_later_ms: Stats | None = Field(None, description="TTFT of every later turn (its history may be cached).")
    ttft_ms: Stats | None = Field(None, description="TTFT of every turn (what the SLO judges).")
    tpot_ms: Stats | None = Field(None, description="Time per output token after the first, per turn.")
    output_tps: Tps | None = Field(None, description="Output tokens per second of the window.")
    total_tps: Tps | None = Field(None, description="Prompt + output tokens per second of the window.")
    prefix_queries: TokenCounter | None = Field(
        None, description="vLLM's prefix_cache_queries counter over the level (prompt tokens looked up)."
    )
    prefix_hits: TokenCounter | None = Field(
        None, description="vLLM's prefix_cache_hits counter over the level (prompt tokens found cached)."
    )
    exceed: dict[str, Count] | None = Field(
        None, description="Judged turns above each SLO limit (goodput key); null: no SLO."
    )
    judged: Count | None = Field(None, description="Turns the early-stopping rule judged (warm-up tenth out).")
    independent: dict[str, Share] | None = Field(
        None, description="Independent samples per turn of each limit's latency (1 ÷ autocorrelation time)."
    )
    verdict: str | None = Field(None, description="Against the SLO: 'meets', or why not; null: no SLO.")
    raw: list[str] = Field(default_factory=list, description="AIPerf's files of this level, relative to runs/.")

    @property
    def hit_rate(self) -> float | None:
        """Share of looked-up prompt tokens the prefix cache served during the level."""
        if self.prefix_queries:
            return (self.prefix_hits or 0.0) / self.prefix_queries
        return 0.0 if self.prefix_queries == 0 else None


class SessionCapacity(Strict):
    """The most concurrent sessions whose turns met the SLO (p-th percentile TTFT and TPOT), none failing."""

    sessions: Concurrency | None = Field(None, description="Highest level that met it; null: even the lowest missed.")
    upper_sessions: Concurrency | None = Field(None, description="Lowest level that missed it; null: none missed.")
    decided: tuple[Concurrency | None, Concurrency | None] | None = Field(
        None, description="Interval by decided verdicts only (99 % early stopping): highest met, lowest missed."
    )
    confidence: float = Field(gt=0, lt=1, description="Confidence each level was decided at.")
    probes: Count = Field(description="Levels the search added beyond the planned ones.")
    converged: bool = Field(description="Whether the bracket closed to adjacent session counts.")
    stopped: str | None = Field(None, description="Why the search ended before it closed, in words.")


class AgentRun(Strict):
    """The agent part of a run file: one trace (one reuse ratio) at each level of concurrent sessions."""

    trace: AgentTrace | None = Field(None, description="The trace's parameters; null: an owner's trace file.")
    trace_file: str = Field(description="The replayed trace, relative to runs/.")
    intended_hit_rate: float | None = Field(
        None, ge=0, le=1, description="Share of prompt tokens an unbounded prefix cache could serve (from the trace)."
    )
    prefix_caching: bool | None = Field(None, description="Whether the server cached prefixes; null: not known.")
    levels: list[AgentLevel] = Field(default_factory=list, description="Planned levels, then the search's probes.")
    capacity: SessionCapacity | None = Field(None, description="The capacity in sessions; null: no SLO or no search.")
