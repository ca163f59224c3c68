"""A benchmark's workload: what the client sent. The key under which runs compare like for like."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from catalogue.models.arena import profile_title
from catalogue.models.plausible import Depth, PromptTokens, Repeats
from catalogue.models.strict import Strict


class Workload(Strict):
    """What the benchmark client sent. Runs are compared (deltas, winners) only when their workloads are equal."""

    tool: str = Field(
        min_length=1, description="Client tool without its version, e.g. 'vllm bench serve', 'llama-benchy'."
    )
    tool_version: str | None = Field(
        None, description="The tool's version, when known (not part of the comparison key)."
    )
    dataset: str | None = Field(
        None, description="Prompt source: 'random' (fixed lengths), a dataset, or the source's words; null: not stated."
    )
    input_len: PromptTokens | None = Field(None, description="Prompt tokens per request; null: not stated.")
    output_len: PromptTokens | None = Field(None, description="Generated tokens per request; null: not stated.")
    context_depth: Depth = Field(
        0, description="Tokens already in the context before each prompt (llama-benchy's depth)."
    )
    prompts_per_level: str | None = Field(
        None, description="Requests per level: a number or the rule, e.g. 'max(8, 4 × concurrency)'."
    )
    repetitions: Repeats | None = Field(
        None, description="Times each level ran (figures are means over them); null: not stated."
    )
    seeds: str | None = Field(
        None,
        description="How the prompts were seeded: 'per level' (a distinct --seed each level and probe, so no level "
        "replays another's prompts into the prefix cache), or null: not stated.",
    )
    profile: str | None = Field(
        None,
        description="The named benchmark profile the client ran, e.g. 'spark-arena-v2' (the Spark Arena "
        "leaderboard's); null: none (a profile's figures compare only with the same profile's).",
    )
    profile_scaling: str | None = Field(
        None,
        description="How the profile was scaled down and why, e.g. \"the tiny model's 512-token context: pp 64 (not "
        '2048)"; null: the whole profile (not part of the comparison key: the lengths and repetitions are).',
    )
    trace: str | None = Field(
        None,
        description="The agent trace's parameters in words (catalogue.models.agent_trace.AgentTrace.describe); "
        "null: not an agent trace.",
    )
    trace_sha256: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="sha256 of the agent trace file replayed; null: none or not known."
    )

    simulator: str | None = Field(
        None,
        pattern=r"^[a-z0-9][a-z0-9_-]*$",
        description="The simulator profile that answered the requests (simulator/, a test instrument): its figures "
        "are the model's, never a measurement, and compare only with runs of the same profile; null: a real server.",
    )

    KEY_FIELDS: ClassVar[tuple[str, ...]] = (
        "tool",
        "dataset",
        "input_len",
        "output_len",
        "context_depth",
        "prompts_per_level",
        "repetitions",
        "seeds",
        "profile",
        "simulator",
        "trace",
        "trace_sha256",
    )

    @property
    def known(self) -> bool:
        """Whether enough is stated to compare: the prompt source and both lengths."""
        return None not in (self.dataset, self.input_len, self.output_len)

    @property
    def key(self) -> tuple:
        """Runs with equal keys measured the same thing the same way."""
        return tuple(str(v).lower() if isinstance(v, str) else v for v in (getattr(self, f) for f in self.KEY_FIELDS))

    def describe(self) -> str:
        """'llama-benchy 0.3.5 · prompt 1024 / output 128 tokens · 50 repetitions per level'."""
        parts = [" ".join(x for x in (self.tool, self.tool_version) if x)]
        if self.simulator:
            parts.append(f"SIMULATED server (profile {self.simulator})")
        if self.profile:
            title = f"{profile_title(self.profile)} profile"
            parts.append(f"{title}, scaled down for {self.profile_scaling}" if self.profile_scaling else title)
        if self.dataset:
            parts.append(self.dataset)
        if self.input_len is None and self.output_len is None:
            parts.append("prompt and output lengths not stated")
        elif self.input_len is None:
            parts.append(f"output {self.output_len:,} tokens (prompt length not stated)")
        elif self.output_len is None:
            parts.append(f"prompt {self.input_len:,} tokens (output length not stated)")
        else:
            parts.append(f"prompt {self.input_len:,} / output {self.output_len:,} tokens")
        if self.context_depth:
            parts.append(f"context depth {self.context_depth:,}")
        if self.prompts_per_level:
            parts.append(f"{self.prompts_per_level} requests per level")
        if self.repetitions and self.repetitions > 1:
            parts.append(f"{self.repetitions} repetitions per level")
        if self.seeds:
            parts.append(f"a new seed {self.seeds}")
        if self.trace:
            parts.append(f"agent trace: {self.trace}")
        if self.trace_sha256:
            parts.append(f"trace sha256 {self.trace_sha256[:12]}")
        return " · ".join(parts)

    def differences(self, other: Workload) -> list[str]:
        """What differs from `other`, in words: ['tool: gpt_oss_benchmark.py vs llama-benchy', ...]."""
        out = []
        for name in self.KEY_FIELDS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if (str(mine).lower() if isinstance(mine, str) else mine) != (
                str(theirs).lower() if isinstance(theirs, str) else theirs
            ):
                label = name.replace("_len", " length").replace("_", " ")
                out.append(f"{label}: {_stated(mine)} vs {_stated(theirs)}")
        return out


def _stated(value: object) -> str:
    return "not stated" if value is None else str(value)
