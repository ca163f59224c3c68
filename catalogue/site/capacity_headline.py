"""The capacity headline of a run: the sentence above the rate table, and a capacity in a table cell."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from catalogue.models.benchmark import BenchmarkRun, Capacity, RateLevel
from catalogue.models.slo import Slo
from catalogue.site.templating import fmt_rate
from catalogue.stats.capacity import judge
from catalogue.stats.capacity_conditioning import noise_bound

__all__ = ["Headline", "bracket_text", "capacity_figure", "headline", "rate_floor", "rate_text", "verdict"]

rate_text = fmt_rate
"""A request rate as measured or probed, up to four significant figures (the pages' `rps` filter)."""


def rate_floor(value: float) -> str:
    """A capacity for a sentence: two significant figures (whole numbers from 10 up), rounded down, so the words
    never claim more than the search measured ('2.875' -> '2.8', '12.7' -> '12', '0.257' -> '0.25')."""
    if value >= 10:
        return f"{math.floor(value):,}"
    if value < 1e-6:  # no server is measured at a request a week; a run file is untrusted: say it, not overflow
        return f"{value:.1e}"
    scale = 10 ** (1 - math.floor(math.log10(value)))
    return f"{math.floor(value * scale + 1e-9) / scale:g}"


def in_flight_text(value: float) -> str:
    """Requests in flight, about: whole from 3 up, else one decimal."""
    return f"{value:,.0f}" if value >= 3 else f"{value:.1f}".rstrip("0").rstrip(".")


def verdict(level: RateLevel, slo: Slo | None) -> str | None:
    """'meets', or why the level missed: what the run recorded, else judged against its SLO; None without one."""
    if level.verdict:
        return level.verdict
    return judge(level, slo).why if slo is not None else None


@dataclass(frozen=True)
class Headline:
    """The capacity in words: what the page states above the rate table."""

    state: str
    """'pinned' (converged), 'bounded' (the search stopped before the bracket closed) or 'none' (even the
    lowest rate missed)."""
    capacity: Capacity
    slo: str
    """'p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms'."""
    rps: str | None
    """The capacity for the sentence, rounded down ('2.8')."""
    exact: str | None
    """The rate that met, as probed ('2.875')."""
    upper: str | None
    """The lowest rate above it that missed, as probed."""
    upper_why: str | None
    """Why that rate missed."""
    in_flight: str | None
    measured_on: dt.date | None
    vllm: str | None
    tolerance: str
    """'10 %'."""
    minutes: str | None
    """Wall time of the search: '1.6 min' or '45 s'."""
    judged: str
    """How each rate's verdict was reached, in a sentence."""
    decided: str | None = None
    """Where the decided verdicts alone put the capacity, when a bound of the bracket was settled on its percentile:
    'between 1.28 and 1.554 req/s', 'above 1.28 req/s', 'below 1.49 req/s'."""
    noise_bound: str | None = None
    """A caution when a limit was already mostly used at concurrency 1 or at half the capacity
    (catalogue.stats.capacity_conditioning)."""


def headline(run: BenchmarkRun) -> Headline | None:
    """The capacity headline of a run with a capacity search; None without one."""
    cap, slo = run.capacity, run.slo
    if cap is None or slo is None:
        return None
    upper_level = next(
        (lv for lv in run.rates if cap.upper_rps and lv.offered_rps and math.isclose(lv.offered_rps, cap.upper_rps)),
        None,
    )
    state = "none" if cap.rps is None else ("pinned" if cap.converged else "bounded")
    seconds = cap.search_s
    minutes = None
    if seconds is not None:
        minutes = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
    return Headline(
        state=state,
        capacity=cap,
        slo=slo.describe(),
        rps=rate_floor(cap.rps) if cap.rps is not None else None,
        exact=rate_text(cap.rps) if cap.rps is not None else None,
        upper=rate_text(cap.upper_rps) if cap.upper_rps is not None else None,
        upper_why=why if upper_level is not None and (why := verdict(upper_level, slo)) != "meets" else None,
        in_flight=in_flight_text(cap.concurrent_requests) if cap.concurrent_requests else None,
        measured_on=run.measured_on,
        vllm=run.provenance.vllm_version,
        tolerance=f"{cap.tolerance * 100:g} %",
        minutes=minutes,
        judged=judged_text(cap),
        decided=decided_text(cap),
        noise_bound=noise_bound(run),
    )


def decided_text(cap: Capacity) -> str | None:
    """The interval of decided verdicts in words, when it differs from the bracket; None when they agree."""
    if cap.decided_rps is None or tuple(cap.decided_rps) == (cap.rps, cap.upper_rps):
        return None
    lo, hi = cap.decided_rps
    if lo is not None and hi is not None:
        return f"between {rate_text(lo)} and {rate_text(hi)} req/s"
    if lo is not None:
        return f"above {rate_text(lo)} req/s"
    return f"below {rate_text(hi)} req/s" if hi is not None else "anywhere: no rate was decided"


def judged_text(cap: Capacity) -> str:
    """How the search decided each rate: on per-request samples at a confidence, or on recorded percentiles."""
    if cap.confidence is None:
        return (
            "Not every verdict holds at a stated confidence: some rates were judged on their recorded percentiles "
            "(no per-request samples, or still undecided after three probes, as the run's notes say)."
        )
    return (
        f"Each verdict holds at {cap.confidence * 100:g} % confidence: the requests above each limit are counted "
        "(after a warm-up tenth, requests that queued alike counted as one sample) and a rate that cannot yet be "
        "told is measured again."
    )


def capacity_figure(cap: Capacity) -> str:
    """A capacity in a table cell, req/s: '2.875' when pinned, '≥ 2.875' when the search stopped before its bracket
    closed, '< 0.25' when even the lowest rate missed (or 'none met' without one)."""
    if cap.rps is None:
        return f"< {rate_text(cap.upper_rps)}" if cap.upper_rps is not None else "none met"
    return rate_text(cap.rps) if cap.converged else f"≥ {rate_text(cap.rps)}"


def bracket_text(cap: Capacity) -> str:
    """What the search measured on either side: 'met 2.875, missed 3.162' (req/s)."""
    met = f"met {rate_text(cap.rps)}" if cap.rps is not None else "none met"
    missed = f"missed {rate_text(cap.upper_rps)}" if cap.upper_rps is not None else "no rate above it missed"
    return f"{met}, {missed}"
