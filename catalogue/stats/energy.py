"""Energy of a benchmark window from sampled power: the trapezoid rule over the samples inside the window.

A window is "not measured" when the samples leave a gap longer than MAX_GAP_S anywhere in it (between two samples,
or between a window edge and the nearest sample), the rule InferenceX applies; then no energy, J per token or
tokens per joule is given at all.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

MAX_GAP_S = 3.0
"""The longest stretch without a power sample that still counts as measured, seconds."""


@dataclass(frozen=True)
class Energy:
    """A window's energy, or why there is none."""

    joules: float | None
    """Energy over the window, J; None when not measured."""
    why_not: str | None = None
    """Why the window is not measured, in words."""
    samples: int = 0
    """Power samples inside the window."""

    @property
    def measured(self) -> bool:
        return self.joules is not None


def integrate(series: list[tuple[float, float]], start: float, end: float) -> Energy:
    """Energy over [start, end] from (time s, power W) samples: trapezoids between samples; at each edge the power
    is interpolated from the samples around it (or held from the nearest sample when none lies beyond it)."""
    if end <= start:
        return Energy(None, "the window is empty")
    points = sorted(series)
    inside = [(t, w) for t, w in points if start <= t <= end]
    if not inside:
        return Energy(None, "no power sample in the window")
    gap = longest_gap(points, start, end)
    if gap > MAX_GAP_S:
        return Energy(None, f"a gap of {gap:.1f} s without a power sample (more than {MAX_GAP_S:g} s)", len(inside))
    curve = [(start, _at(points, start)), *inside, (end, _at(points, end))]
    joules = sum((t1 - t0) * (w0 + w1) / 2 for (t0, w0), (t1, w1) in itertools.pairwise(curve))
    return Energy(joules, None, len(inside))


def longest_gap(points: list[tuple[float, float]], start: float, end: float) -> float:
    """The longest stretch of [start, end] that no two neighbouring samples bracket closely, seconds: the samples
    just outside the window count, else the window's edges do."""
    times = [t for t, _ in points]
    before = [t for t in times if t < start][-1:] or [start]
    after = [t for t in times if t > end][:1] or [end]
    marks = before + [t for t in times if start <= t <= end] + after
    return max(b - a for a, b in itertools.pairwise(marks))


def _at(points: list[tuple[float, float]], t: float) -> float:
    """Power at time t: linear between the samples around it, the nearest sample's beyond the ends."""
    for (t0, w0), (t1, w1) in itertools.pairwise(points):
        if t0 <= t <= t1:
            return w0 if t1 == t0 else w0 + (w1 - w0) * (t - t0) / (t1 - t0)
    return points[0][1] if t < points[0][0] else points[-1][1]


def per_token(energy: Energy, output_tokens: int | None) -> tuple[float | None, float | None]:
    """(J per output token, output tokens per J); (None, None) unless power was measured and tokens were made."""
    if not energy.measured or not output_tokens or not energy.joules:
        return None, None
    return energy.joules / output_tokens, output_tokens / energy.joules
