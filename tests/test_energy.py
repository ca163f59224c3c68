"""Energy from a power series: the trapezoid rule and the 3 s gap rule, on series whose integral is known."""

from __future__ import annotations

import pytest

from catalogue.stats.energy import MAX_GAP_S, Energy, integrate, longest_gap, per_token


def sampled(fn, start: float, end: float, step: float = 1.0) -> list[tuple[float, float]]:
    """fn sampled every `step` seconds from start to end."""
    n = round((end - start) / step)
    return [(start + i * step, fn(start + i * step)) for i in range(n + 1)]


def test_constant_and_ramp_are_exact():
    assert integrate(sampled(lambda t: 100.0, 0, 10), 0, 10).joules == pytest.approx(1000.0)
    # A linear ramp 50 -> 150 W over 10 s: the trapezoid rule is exact, 1000 J.
    ramp = sampled(lambda t: 50 + 10 * t, 0, 10)
    assert integrate(ramp, 0, 10).joules == pytest.approx(1000.0)
    # A window between samples: the edges are interpolated, [2.5, 7.5] of the ramp = 5 s at a mean of 100 W.
    assert integrate(ramp, 2.5, 7.5).joules == pytest.approx(500.0)


def test_a_sampler_that_missed_a_beat_still_counts_but_a_gap_over_3_s_does_not():
    series = [p for p in sampled(lambda t: 200.0, 0, 20) if p[0] not in (5.0, 6.0)]  # a 3 s hole: still measured
    assert longest_gap(series, 0, 20) == 3.0 and integrate(series, 0, 20).joules == pytest.approx(4000.0)
    holed = [p for p in series if p[0] != 7.0]  # 4 s between samples
    energy = integrate(holed, 0, 20)
    assert energy == Energy(None, f"a gap of 4.0 s without a power sample (more than {MAX_GAP_S:g} s)", 18)
    assert per_token(energy, 1000) == (None, None)


def test_edges_without_samples_beyond_the_window_count_as_gaps():
    late = sampled(lambda t: 100.0, 4, 10)  # the sampler started 4 s into the window
    assert not integrate(late, 0, 10).measured
    assert integrate(late, 1.5, 10).measured  # 2.5 s before the first sample: within the rule
    assert integrate([], 0, 10).why_not == "no power sample in the window"
    assert integrate(late, 5, 5).why_not == "the window is empty"


def test_joules_per_token_and_tokens_per_joule_only_when_measured():
    energy = integrate(sampled(lambda t: 120.0, 0, 10), 0, 10)
    assert per_token(energy, 600) == (pytest.approx(2.0), pytest.approx(0.5))
    assert per_token(energy, 0) == (None, None) and per_token(energy, None) == (None, None)
