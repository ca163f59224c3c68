"""The shape of a GuideLLM report (version 2) as far as catalogue.imports.guidellm reads it: typed, bounded fields;
GuideLLM's other fields pass unchecked."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from catalogue.imports.schema import Count, Figure, Positive, Raw, Text


class _Summary(Raw):
    """A distribution's `successful` summary."""

    mean: Figure
    """Mean over the successful requests."""
    count: Count
    """Successful requests it summarises."""
    std_dev: Figure | None = None
    """Standard deviation."""
    median: Figure | None = None
    """Median."""
    percentiles: dict[str, Figure | None] | None = None
    """p50, p90, p95, p99 and others."""


class _Distribution(Raw):
    """One metric's summaries; the catalogue reads the successful requests'."""

    successful: _Summary
    """Over the successful requests."""


class _Totals(Raw):
    """Requests by outcome."""

    successful: Count
    """Requests that finished."""
    errored: Count | None = None
    """Requests that failed."""
    incomplete: Count | None = None
    """Requests still running when the window closed."""


class _Metrics(Raw):
    """The metrics of one benchmark the catalogue reads."""

    request_totals: _Totals
    """Requests by outcome."""
    requests_per_second: _Distribution | None = None
    """Achieved request rate."""
    request_goodput: _Distribution | None = None
    """Requests per second that met every objective."""
    slo_attainment: Figure | None = None
    """Share of requests that met every objective."""
    output_tokens_per_second: _Distribution | None = None
    """Generation throughput."""
    tokens_per_second: _Distribution | None = None
    """Total throughput."""
    time_to_first_token_ms: _Distribution | None = None
    """TTFT, ms."""
    inter_token_latency_ms: _Distribution | None = None
    """Inter-token latency, ms."""
    request_latency: _Distribution | None = None
    """End-to-end latency, s."""
    prompt_token_count: _Distribution | None = None
    """Prompt tokens per request."""
    output_token_count: _Distribution | None = None
    """Output tokens per request."""


class _Strategy(Raw):
    """How the benchmark sent requests."""

    type_: Text
    """synchronous, concurrent, throughput, constant or poisson."""
    streams: Positive | None = None
    """Requests in flight (concurrent)."""
    rate: Figure | None = None
    """Offered requests per second (constant, poisson)."""
    max_concurrency: Count | None = None
    """Cap on requests in flight."""


class _BenchConfig(Raw):
    """One benchmark's configuration."""

    strategy: _Strategy
    """How it sent requests."""
    slo: dict[str, Figure | None] | None = None
    """Goodput objectives, ms."""
    backend: dict[str, Any] | None = None
    """The server it measured (its `model`)."""


class _Bench(Raw):
    """One benchmark of the report."""

    config: _BenchConfig
    """Its configuration."""
    metrics: _Metrics
    """Its figures."""
    duration: Figure
    """Seconds of its measurement window."""
    warnings: list[Any] | None = None
    """GuideLLM's warnings about it."""


class Report(Raw):
    """The fields of a GuideLLM report the catalogue reads."""

    metadata: dict[str, Any] | None = None
    """Report version and GuideLLM version."""
    config: dict[str, Any] | None = None
    """The run's spec (data sources, constraints)."""
    benchmarks: list[_Bench] = Field(max_length=10_000)
    """One entry per level."""
