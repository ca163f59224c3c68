"""Was the machine as fast when two runs were measured? Each host's passport records a CPU calibration before the
sweep (runner/passport_probe.py: every CPU hashing at once, median wall time). Two runs whose calibrations differ by
more than MACHINE_RATIO on any host ran on a machine in another state (other work, another tenant of the host, other
clocks), and their figures say as much about that as about the server: the regression check does not compare them.

Measured on this two-CPU machine: idle 9.6-9.8 ms; one CPU kept busy by another process 14.4 ms (1.5x); both
23.9 ms (2.4x)."""

from __future__ import annotations

from catalogue.benchmark import BenchmarkRun, MeasuredProvenance

MACHINE_RATIO = 1.25
"""Calibrations further apart than this (either way) are different machine states."""


def calibrations(run: BenchmarkRun) -> list[float] | None:
    """Each host's calibration before the sweep, in host order; None when any host lacks one (an imported run, a
    run read before calibrations were recorded)."""
    p = run.provenance
    if not isinstance(p, MeasuredProvenance) or not p.hosts:
        return None
    found = [h.passport.before.calibration_ms if h.passport and h.passport.before else None for h in p.hosts]
    return None if any(c is None for c in found) else [float(c) for c in found if c is not None]


def slower(run: BenchmarkRun, earlier: BenchmarkRun) -> float | None:
    """How many times longer `run`'s machine took than `earlier`'s, on the host where they differ most; None when
    either has no calibration or their hosts differ in number."""
    new, old = calibrations(run), calibrations(earlier)
    if new is None or old is None or len(new) != len(old):
        return None
    ratios = [a / b for a, b in zip(new, old)]
    return max(ratios, key=lambda r: max(r, 1 / r))


def other_state(run: BenchmarkRun, earlier: BenchmarkRun) -> str | None:
    """Why `earlier` was measured on the machine in another state, or None (alike, or not known)."""
    ratio = slower(run, earlier)
    if ratio is None or 1 / MACHINE_RATIO <= ratio <= MACHINE_RATIO:
        return None
    new, old = calibrations(run), calibrations(earlier)
    assert new is not None and old is not None
    pairs = ", ".join(f"{a:g} vs {b:g} ms" for a, b in zip(new, old))
    return f"{earlier.stamp}: the machine's CPU calibration took {ratio:.2f}x as long ({pairs})"
