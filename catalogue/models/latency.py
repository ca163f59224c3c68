"""A latency distribution as a run file keeps it (shared by every kind of level)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from catalogue.models.plausible import Count, Ms, Share
from catalogue.models.strict import Strict


class Stats(Strict):
    """Distribution of one latency, in milliseconds."""

    mean: Ms | None = Field(None, description="Mean.")
    std: Ms | None = Field(None, description="Standard deviation.")
    p50: Ms | None = Field(None, description="Median.")
    p90: Ms | None = Field(None, description="90th percentile.")
    p95: Ms | None = Field(None, description="95th percentile.")
    p99: Ms | None = Field(None, description="99th percentile.")
    n: Count | None = Field(None, description="Samples the figures are of, when per-request data was kept.")
    independent: Share | None = Field(
        None,
        description="Share of the n samples that are independent: 1 ÷ the autocorrelation time of the per-request "
        "series in send order (requests that wait in the same batch or backlog are alike); what a mean's standard "
        "error counts. Null: not measured (each sample counted as independent).",
    )
    ci: dict[Literal["p50", "p90", "p95", "p99"], tuple[Ms, Ms]] | None = Field(
        None,
        description="95 % distribution-free interval of each percentile (order statistics of the per-request "
        "samples); a percentile absent here had too few samples to be bounded; null: no per-request data.",
    )
