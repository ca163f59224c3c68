"""The bounds of every number a run file (or a recipe's sweep) may hold, in one place: counts, latencies, rates,
durations, machine readings. A run file is untrusted input, and the statistics read it: a count of 1e9 asked the
early-stopping rule for a billion-term binomial (about 30 GB), a budget of 1e308 s never ran out, a latency of 1e308
overflowed a sum. Each bound is far beyond anything measured (a level of a million requests, a request of a week)
and far below where arithmetic breaks, so a file past one is refused in one line naming the field."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_REQUESTS = 1_000_000
"""Requests of one level (sent, completed, failed, judged, above a limit; samples of a latency): the runner's
probes send at most 100,000 (catalogue.stats.probe_size), a closed-loop level a few thousand."""
MAX_TOKENS = 10**12
"""Tokens of one level: a million requests of a million tokens."""
MAX_CONCURRENCY = 1_000_000
"""Requests in flight, and a level's concurrency."""
MAX_PROMPT_TOKENS = 100_000_000
"""Tokens of one prompt or context (the longest served contexts are 10^7)."""
MAX_MS = 7 * 24 * 3600 * 1000.0
"""A latency or limit, ms: a week."""
MAX_S = 7 * 24 * 3600.0
"""A window, budget or wall time, s: a week."""
MAX_TPS = 1e9
"""Tokens per second of a level (a rack serves about 10^6)."""
MAX_RPS = 1e6
"""Requests per second of a level or a search."""
MAX_CALIBRATION_MS = 100_000.0
"""A CPU calibration, ms (about 10 on an idle two-core VM)."""

Count = Annotated[int, Field(ge=0, le=MAX_REQUESTS)]
Tokens = Annotated[int, Field(ge=0, le=MAX_TOKENS)]
Concurrency = Annotated[int, Field(gt=0, le=MAX_CONCURRENCY)]
PromptTokens = Annotated[int, Field(gt=0, le=MAX_PROMPT_TOKENS)]
Depth = Annotated[int, Field(ge=0, le=MAX_PROMPT_TOKENS)]
Ms = Annotated[float, Field(ge=0, le=MAX_MS)]
PositiveMs = Annotated[float, Field(gt=0, le=MAX_MS)]
Seconds = Annotated[float, Field(ge=0, le=MAX_S)]
PositiveSeconds = Annotated[float, Field(gt=0, le=MAX_S)]
Tps = Annotated[float, Field(ge=0, le=MAX_TPS)]
Rps = Annotated[float, Field(ge=0, le=MAX_RPS)]
PositiveRps = Annotated[float, Field(gt=0, le=MAX_RPS)]
Requests = Annotated[float, Field(ge=0, le=MAX_CONCURRENCY)]
Calibration = Annotated[float, Field(gt=0, le=MAX_CALIBRATION_MS)]
Share = Annotated[float, Field(ge=0, le=1)]
Burstiness = Annotated[float, Field(gt=0, le=1000)]
Repeats = Annotated[int, Field(gt=0, le=10_000)]
"""Repetitions of a level, probe numbers, quality items."""
Mhz = Annotated[float, Field(ge=0, le=100_000)]
Celsius = Annotated[float, Field(ge=-100, le=1000)]
Watts = Annotated[float, Field(ge=0, le=1e7)]
Joules = Annotated[float, Field(ge=0, le=1e13)]
PerJoule = Annotated[float, Field(ge=0, le=1e9)]
Mib = Annotated[float, Field(ge=0, le=1e10)]
Load = Annotated[float, Field(ge=0, le=1e6)]
SmallInt = Annotated[int, Field(ge=0, le=2**32)]
"""Process ids, GPU indices, CPU counts, link speeds (Mb/s) and MTUs."""
DraftLength = Annotated[float, Field(ge=0, le=1000)]
