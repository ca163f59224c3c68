"""The band rules of the regression check, for one figure: its value against the same figure of the earlier runs of
its window (catalogue.stats.regression), oldest first.

- Against the window's median: out of the recipe's ratio band (`sweep.regression`), beyond three scaled median
  absolute deviations of the window once it has three runs or more, and out of the band of every run of the window
  as well, not only of their median. A window's runs spread as far as its noise does; a figure inside that spread
  widened by the band is noise. With three runs or more, "every run" is every run inside the squared band around
  the median (`agreeing`): one broken or hostile earlier run file, however far out, cannot silence the check.
- Inside the squared band a change counts only when it repeats: the run before it was out the same way.
- Two earlier runs further apart than the cubed band are no baseline (`disagree`): a third run is needed.
- A slow drift whose steps each stay in the noise is caught against the window's oldest run (two bands), when the
  newest earlier run was already that far."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from catalogue.models.recipe import RegressionBand
from catalogue.stats.metrics import Metric

MAD_K = 3.0
"""A change must also exceed this many scaled median absolute deviations of the window (when it has 3+ runs)."""
MAD_SCALE = 1.4826
"""MAD to a standard deviation for normally distributed figures."""
MIN_RUNS = 3
"""Earlier runs needed for their run-to-run spread; with fewer, only a change beyond the squared ratio band (0.64x,
1.44x) is called a regression, and one inside it is 'not confirmed'."""


@dataclass(frozen=True)
class Change:
    """One figure of one level outside its noise band."""

    level: str
    """`c4`, or `ctx256` for a long-context level."""
    metric: Metric
    before: float
    after: float
    regressed: bool
    band: str
    """The band it left: '0.8x' or '± 2σ (12.3)'."""
    confirmed: bool = True
    """False: outside the ratio band, but with fewer than MIN_RUNS earlier runs (no run-to-run spread to judge it
    by) and inside the squared band: worth a second run, not an alarm."""

    @property
    def outcome(self) -> str:
        """'regressed', 'improved' or 'not confirmed'."""
        if not self.confirmed:
            return "not confirmed"
        return "regressed" if self.regressed else "improved"

    def line(self) -> str:
        """'c4 Generation: 210.5 → 140.2 tok/s (0.67x; band 0.8x)'."""
        ratio = self.after / self.before if self.before else float("inf")
        unit = f" {self.metric.unit}" if self.metric.unit else ""
        word = self.outcome if self.confirmed else f"{'slower' if self.regressed else 'faster'}, not confirmed"
        return (
            f"{word}: {self.level} {self.metric.label}: {self.before:,.1f} → {self.after:,.1f}{unit} "
            f"({ratio:.2f}x; band {self.band})"
        )


def outside(name: str, metric: Metric, values: list[float], b: float, band: RegressionBand) -> Change | None:
    return _against_median(name, metric, values, b, band) or _drift(name, metric, values, b, band)


def _drift(name: str, metric: Metric, values: list[float], b: float, band: RegressionBand) -> Change | None:
    """Worse than the window's oldest run by two bands (0.64x, 1.44x), and the newest earlier run already was: a
    drift whose steps each stay in the noise, seen twice in a row (one noisy run is not a drift)."""
    if len(values) < 3 or not values[0]:
        return None
    first, last = values[0], values[-1]
    if metric.higher_is_better and b < first * band.throughput_ratio**2 and last < first * band.throughput_ratio**2:
        return Change(
            name, metric, first, b, True, f"drift: {band.throughput_ratio**2:.2f}x of the oldest of {len(values)} runs"
        )
    if not metric.higher_is_better and b > first * band.latency_ratio**2 and last > first * band.latency_ratio**2:
        return Change(
            name, metric, first, b, True, f"drift: {band.latency_ratio**2:.2f}x of the oldest of {len(values)} runs"
        )
    return None


def _against_median(
    name: str, metric: Metric, values: list[float], b: float, band: RegressionBand, repeat: bool = True
) -> Change | None:
    found = _once(name, metric, values, b, band)
    if repeat and (found is None or not found.confirmed):
        return _repeated(name, metric, values, b, band) or found
    return found


def _once(name: str, metric: Metric, values: list[float], b: float, band: RegressionBand) -> Change | None:
    a = statistics.median(values)
    spread = MAD_SCALE * statistics.median([abs(v - a) for v in values]) if len(values) >= 3 else 0.0
    if abs(b - a) <= MAD_K * spread or not _beyond_each(metric, values, b, band):
        return None
    of = f" of the median of {len(values)} runs" if len(values) > 1 else ""
    noise = f", beyond {MAD_K:g}×MAD ({MAD_K * spread:,.1f})" if spread else ""
    if metric.higher_is_better:
        low, high = band.throughput_ratio, 1 / band.throughput_ratio
        if b < a * low:
            return _few(Change(name, metric, a, b, True, f"{low:g}x{of}{noise}"), b < a * low**2)
        if b > a * high:
            return _few(Change(name, metric, a, b, False, f"{high:.2f}x{of}{noise}"), b > a * high**2)
        return None
    high, low = band.latency_ratio, 1 / band.latency_ratio
    if b > a * high:
        return _few(Change(name, metric, a, b, True, f"{high:g}x{of}{noise}"), b > a * high**2)
    if b < a * low:
        return _few(Change(name, metric, a, b, False, f"{low:.2f}x{of}{noise}"), b < a * low**2)
    return None


def _beyond_each(metric: Metric, values: list[float], b: float, band: RegressionBand) -> bool:
    """Outside the band of every earlier run that agrees with the window (`agreeing`), not only of their median:
    worse (or better) than the worst (best) of them by the ratio. A window's runs spread as far as its noise does; a
    figure within that spread widened by the band is noise, whatever a scale estimated from three to five runs says."""
    kept = [values[i] for i in agreeing(metric, values, band)]
    if metric.higher_is_better:
        return b < min(kept) * band.throughput_ratio or b > max(kept) / band.throughput_ratio
    return b > max(kept) * band.latency_ratio or b < min(kept) / band.latency_ratio


def disagree(metric: Metric, values: list[float], band: RegressionBand) -> str | None:
    """Why two earlier runs cannot be a baseline: they lie further apart than the cubed band (0.51x: beyond what
    no-change refreshes on two shared CPU cores spread, 0.55x at worst), so either may be the odd one (broken, or
    written to move the baseline) and no third run tells which; None otherwise. Between two runs that agree, one
    file can hide no change beyond about 0.8 × 0.51 = 0.41x."""
    if len(values) != 2 or not min(values):
        return None
    ratio = band.throughput_ratio if metric.higher_is_better else 1 / band.latency_ratio
    if min(values) >= max(values) * ratio**3:
        return None
    return f"the 2 earlier runs disagree ({values[0]:,.1f} and {values[1]:,.1f}): a third tells which holds"


def agreeing(metric: Metric, values: list[float], band: RegressionBand) -> list[int]:
    """Which of the window's runs the rules read one by one: with three or more, those inside the squared band
    around the window's median. A run file is untrusted input, and one run far off (broken, or written to silence
    the check) would otherwise set the band for every other; the median and MAD are robust to it already."""
    if len(values) < MIN_RUNS:
        return list(range(len(values)))
    mid = statistics.median(values)
    ratio = band.throughput_ratio if metric.higher_is_better else 1 / band.latency_ratio
    low, high = mid * ratio**2, mid / ratio**2
    kept = [i for i, v in enumerate(values) if low <= v <= high]
    return kept or list(range(len(values)))  # no run near the median (a window split in two): every run


def _few(change: Change, beyond_squared: bool) -> Change:
    """A change inside the squared band is not confirmed on one run ('run again'); see _repeated."""
    if beyond_squared:
        return change
    return Change(change.level, change.metric, change.before, change.after, change.regressed, change.band, False)


def _repeated(name: str, metric: Metric, values: list[float], b: float, band: RegressionBand) -> Change | None:
    """Two runs in a row out of the band the same way, each against the runs before the first of them (three or
    more): a step that stays, confirmed although each run alone lies inside the squared band."""
    if len(values) <= MIN_RUNS:
        return None
    base = values[:-1]
    first = _against_median(name, metric, base, values[-1], band, repeat=False)
    second = _against_median(name, metric, base, b, band, repeat=False)
    if first is None or second is None or first.regressed != second.regressed:
        return None
    return Change(name, metric, second.before, b, second.regressed, f"{second.band}, twice in a row")
