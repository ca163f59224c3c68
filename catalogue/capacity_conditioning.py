"""Whether a capacity is set by the load or by the server's noise.

A limit that the server's percentile nearly reaches at half the capacity binds where latency barely rises with the
load: a small run-to-run change in the latency then moves the rate at which the limit is crossed a long way. Measured
on the tiny CPU recipe on a slow VM (p95 TPOT 14-17 ms from 5 to 22 req/s against a 20 ms limit), three searches of
one bench run found 21.7, 14.5 and 10.9 req/s; on a faster one, where it was 6-7 ms at 2 req/s, within ±11-21 %.
The page and the run's notes say so beside such a capacity, rather than let it read as precise.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from catalogue.benchmark import Figures, LevelResult, RateLevel
from catalogue.capacity_verdict import ms, percentile
from catalogue.slo import LIMIT_LABELS, STATS_FIELD, Slo

NEAR = 0.7
"""A percentile at half the capacity (or less) that is already this share of its limit leaves the limit to noise."""

HALF = 2.0
"""'Light load': a rate at most 1/HALF of the capacity."""


@dataclass(frozen=True)
class FlatLimit:
    """A limit the percentile nearly reached at light load."""

    label: str
    """'p95 TPOT'."""
    load: str
    """The light load, in words: '10.46 req/s' (an open-loop rate), 'concurrency 2 (9.5 req/s)' (a closed loop)."""
    light_rps: float
    """Its request rate: the highest at half the capacity or less."""
    light_ms: float
    """The percentile there (the median of that rate's probes), ms."""
    limit_ms: float
    capacity_rps: float

    def text(self) -> str:
        """The caution in a sentence or two, for the page and the run's notes."""
        share = self.light_ms / self.limit_ms
        return (
            f"At {self.load}, {self.light_rps / self.capacity_rps * 100:.0f} % of the capacity, "
            f"{self.label} was already {ms(self.light_ms)} ms, {share * 100:.0f} % of its {ms(self.limit_ms)} ms "
            "limit: the limit binds where latency barely rises with the load, so the rate that crosses it moves with "
            "the server's run-to-run noise. Read this capacity as rough, and repeat the search before comparing it."
        )


def flat_limit(
    rates: Sequence[RateLevel], capacity_rps: float | None, slo: Slo, levels: Sequence[LevelResult] = ()
) -> FlatLimit | None:
    """The limit whose percentile, at the light load nearest half the capacity, was already NEAR its limit (the
    worst such limit); None when every limit had room there, or no load was that light. The light load is the
    highest open-loop rate at half the capacity or less (its probes' median); without one, the busiest closed-loop
    level that light (a closed loop queues less than random arrivals do, so it can only understate the caution)."""
    if not capacity_rps:
        return None
    light = [lv.offered_rps for lv in rates if lv.offered_rps and lv.offered_rps * HALF <= capacity_rps * 1.0001]
    if light:
        rate = max(light)
        at: Sequence[Figures] = [lv for lv in rates if lv.offered_rps and math.isclose(lv.offered_rps, rate)]
        load = f"{rate:g} req/s"
    else:
        closed = [
            (lv.request_rate, lv)
            for lv in levels
            if lv.prompt_tokens is None and lv.request_rate and lv.request_rate * HALF <= capacity_rps * 1.0001
        ]
        if not closed:
            return None
        rate, busiest = max(closed, key=lambda found: found[0])
        at, load = [busiest], f"concurrency {busiest.concurrency} ({rate:.3g} req/s)"
    worst: FlatLimit | None = None
    for key, limit in slo.limits.items():
        values = [v for lv in at if (v := percentile(getattr(lv, STATS_FIELD[key]), slo.percentile)) is not None]
        if not values:
            continue
        value = statistics.median(values)
        if value >= NEAR * limit and (worst is None or value / limit > worst.light_ms / worst.limit_ms):
            worst = FlatLimit(f"p{slo.percentile} {LIMIT_LABELS[key]}", load, rate, value, limit, capacity_rps)
    return worst
