"""Whether a capacity is set by the load or by the server's noise.

A server as one queue has latency L0 / (1 − load), so a limit of L0 ÷ s is reached at load 1 − s, and a run-to-run
change of ε in L0 moves that load by s / (1 − s) × ε: where the unloaded server already uses a large share s of the
limit, the capacity moves about as much as the server's own latency does from one boot to the next. Measured on the
tiny CPU recipe (p95 TPOT ≤ 20 ms): on a VM where one request at a time had a TPOT of 9-11 ms (s ≈ 0.5), three
searches of one bench run found 8.5, 7.6 and 3.6 req/s; on one where it was 4.5 ms (s ≈ 0.23), within ±11-21 %.

Two readings say so, and the page, api/v1 and the run's notes then put a caution beside the capacity rather than let
it read as precise: the median at concurrency 1 (the lightest load a server can be given) at UNLOADED of a limit or
more, or the percentile at the busiest open-loop rate at half the capacity or less at NEAR of it or more.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from catalogue.models.benchmark import BenchmarkRun, Figures, LevelResult, RateLevel
from catalogue.models.slo import LIMIT_LABELS, STATS_FIELD, Slo
from catalogue.stats.capacity_verdict import ms, percentile

UNLOADED = 0.4
"""One request at a time whose median is this share of a limit: s / (1 − s) = 0.67, a 10 % slower boot moves the
capacity by about 7 %, and the limit's percentile lies higher still."""

NEAR = 0.7
"""A percentile at half the capacity (or less) that is already this share of its limit."""

HALF = 2.0
"""'Light load': a rate at most 1/HALF of the capacity."""


@dataclass(frozen=True)
class FlatLimit:
    """A limit the server nearly reached at light load."""

    label: str
    """'p95 TPOT', or 'median TPOT' at concurrency 1."""
    load: str
    """The light load, in words: 'concurrency 1 (one request at a time)', '10.46 req/s, 48 % of the capacity'."""
    light_ms: float
    """The latency there, ms."""
    limit_ms: float

    @property
    def share(self) -> float:
        return self.light_ms / self.limit_ms

    def text(self) -> str:
        """The caution in a sentence or two, for the page and the run's notes."""
        return (
            f"At {self.load}, {self.label} was already {ms(self.light_ms)} ms, {self.share * 100:.0f} % of its "
            f"{ms(self.limit_ms)} ms limit: the limit binds where latency barely rises with the load, so the rate "
            "that crosses it moves with the server's run-to-run noise. Read this capacity as rough, and repeat the "
            "search before comparing it."
        )


def flat_limit(
    rates: Sequence[RateLevel], capacity_rps: float | None, slo: Slo, levels: Sequence[LevelResult] = ()
) -> FlatLimit | None:
    """The worst limit that an unloaded or lightly loaded server already nearly reached (see the module); None when
    every limit had room, or there is no capacity or no light load to tell."""
    if not capacity_rps:
        return None
    found = [*_unloaded(levels, slo), *_light_rate(rates, capacity_rps, slo)]
    return max(found, key=lambda flat: flat.share, default=None)


def noise_bound(run: BenchmarkRun) -> str | None:
    """A run's caution in words (the page's headline and api/v1), or None."""
    if run.capacity is None or run.slo is None:
        return None
    found = flat_limit(run.rates, run.capacity.rps, run.slo, run.levels)
    return found.text() if found is not None else None


def _unloaded(levels: Sequence[LevelResult], slo: Slo) -> list[FlatLimit]:
    """Each limit whose median at concurrency 1 was UNLOADED of it or more."""
    single = next((lv for lv in levels if lv.concurrency == 1 and lv.prompt_tokens is None), None)
    if single is None:
        return []
    out = []
    for key, limit in slo.limits.items():
        median = percentile(getattr(single, STATS_FIELD[key]), 50)
        if median is not None and median >= UNLOADED * limit:
            out.append(FlatLimit(f"median {LIMIT_LABELS[key]}", "concurrency 1 (one request at a time)", median, limit))
    return out


def _light_rate(rates: Sequence[RateLevel], capacity_rps: float, slo: Slo) -> list[FlatLimit]:
    """Each limit whose percentile at the busiest open-loop rate at half the capacity or less (its probes' median)
    was NEAR it or more."""
    light = [lv.offered_rps for lv in rates if lv.offered_rps and lv.offered_rps * HALF <= capacity_rps * 1.0001]
    if not light:
        return []
    rate = max(light)
    at: Sequence[Figures] = [lv for lv in rates if lv.offered_rps and math.isclose(lv.offered_rps, rate)]
    load = f"{rate:g} req/s, {rate / capacity_rps * 100:.0f} % of the capacity"
    out = []
    for key, limit in slo.limits.items():
        values = [v for lv in at if (v := percentile(getattr(lv, STATS_FIELD[key]), slo.percentile)) is not None]
        if values and (value := statistics.median(values)) >= NEAR * limit:
            out.append(FlatLimit(f"p{slo.percentile} {LIMIT_LABELS[key]}", load, value, limit))
    return out
