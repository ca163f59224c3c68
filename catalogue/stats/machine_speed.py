"""Was the machine as fast when two runs were measured? Each host's passport records a CPU calibration before and
after the sweep (runner/scripts/passport_probe.py: every CPU hashing at once, median wall time of 15 rounds). Two runs
whose readings stay more than MACHINE_RATIO apart on some host, even their closest ones, ran on a machine in another
state (other work, another tenant of a virtual machine's host, other clocks): their figures say as much about that as
about the server, and the regression check does not compare them.

Measured on this two-CPU virtual machine: idle 9.8-10.0 ms (host Python and the vLLM CPU image alike); one CPU kept
busy by another process 14.4-16.0 ms; both 23.9 ms. Within one 45 s refresh the readings were 11.9 before and 5.2
after: the machine's speed moves within minutes, so a single reading decides nothing, and the closest pair does.

So the client also takes the calibration just before and just after every level (runner/scripts/driver.py,
`calibration_ms` of the level), with the server up: an earlier run's level is compared as measured with a level when
their before-readings are within MACHINE_RATIO and neither level's reading after it is LEVEL_SHIFT times the one before
it (the machine slowed during it); when no earlier level is, every one is, with their states' difference granted to the
figure (`state_factor`, `granted`). With the tiny CPU server up and idle the reading is about 10 ms where it is 5.2
without it (its engine keeps one of the two CPUs busy), so a level's reading is the machine as the server leaves
it.

A simulated server (simulator/) is not judged by machine state at all (`reads_state`): its steps are sleeps of its
model's durations, not work the CPU does, so its figures do not follow the CPU's speed the calibration reads. On a
loaded two-core machine the readings of no-change simulated refreshes moved level to level by more than
MACHINE_RATIO and the gate called them "another machine state": a 10 % slower decode step then went unjudged at
c = 1, 8 and 64. What the host can do to a simulator, start its steps late, the simulator measures itself (its
log's `lateness` line; benchmarks/truth.py prints it beside each refresh)."""

from __future__ import annotations

from catalogue.models.benchmark import BenchmarkRun, MeasuredProvenance

MACHINE_RATIO = 1.25
"""Runs whose closest calibrations are further apart than this (either way) ran in different machine states."""


def reads_state(run: BenchmarkRun) -> bool:
    """Whether the machine's CPU calibrations decide what `run` is compared with: every measured run, never a
    simulated one (its latencies are its model's, whatever the CPU's speed)."""
    return not run.from_simulator


def calibrations(run: BenchmarkRun) -> list[tuple[float, float]] | None:
    """Each host's (lowest, highest) calibration of before and after the sweep, in host order; None when a host has
    none before the sweep (an imported run, a run measured before calibrations were recorded)."""
    p = run.provenance
    if not isinstance(p, MeasuredProvenance) or not p.hosts:
        return None
    found = []
    for host in p.hosts:
        passports = (host.passport.before, host.passport.after) if host.passport else (None, None)
        readings = [x.calibration_ms if x is not None else None for x in passports]
        if readings[0] is None:
            return None
        values = [float(r) for r in readings if r is not None]
        found.append((min(values), max(values)))
    return found


def apart(run: BenchmarkRun, earlier: BenchmarkRun) -> float | None:
    """How far apart the two runs' closest calibrations are on the host where that is furthest, as a ratio ≥ 1
    (1.0: their readings overlap); None when either has none or their hosts differ in number."""
    return _apart(calibrations(run), calibrations(earlier))


def _apart(new: list[tuple[float, float]] | None, old: list[tuple[float, float]] | None) -> float | None:
    if new is None or old is None or len(new) != len(old):
        return None
    return max(max(1.0, a_lo / b_hi, b_lo / a_hi) for (a_lo, a_hi), (b_lo, b_hi) in zip(new, old))


def no_passport(run: BenchmarkRun, earlier: BenchmarkRun) -> str | None:
    """Why `earlier` is no baseline of `run` at all: `run` has CPU calibrations and it has none, so the machine's state
    when it ran is not known. Such a file once counted as 'the same state' and, preferred over every run whose state
    differed, set the baseline alone (a run file 10x worse, with no passport, muted every figure)."""
    if calibrations(run) is not None and calibrations(earlier) is None:
        return f"{earlier.stamp}: no CPU calibration in its passport: the machine's state then is not known"
    return None


def other_state(run: BenchmarkRun, earlier: BenchmarkRun) -> str | None:
    """Why `earlier` was measured with the machine in another state, or None (alike, or not known). An earlier run
    whose own readings before and after lie MACHINE_RATIO apart on some host changed state during its sweep: without
    readings around its levels to tell when, it is no baseline for any state (and a run file claiming 1e-6 before
    and 1e6 after would otherwise match every one)."""
    new, old = calibrations(run), calibrations(earlier)
    for lo, hi in [] if _levels_read(earlier) else old or []:
        if hi > MACHINE_RATIO * lo:
            return f"{earlier.stamp}: the machine changed speed during that run (CPU calibrations {lo:g} and {hi:g} ms)"
    ratio = _apart(new, old)
    if ratio is None or ratio <= MACHINE_RATIO:
        return None
    assert new is not None and old is not None
    pairs = "; ".join(f"{_span(a)} vs {_span(b)} ms" for a, b in zip(new, old))
    return f"{earlier.stamp}: the machine's CPU calibrations were {ratio:.2f}x apart ({pairs})"


def _span(pair: tuple[float, float]) -> str:
    lo, hi = pair
    return f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"


def _levels_read(run: BenchmarkRun) -> bool:
    """Whether every level of the run has the client's calibration before it."""
    levels = [*run.levels, *run.long_context]
    return bool(levels) and all(level_reading(level) is not None for level in levels)


def level_reading(level: object) -> float | None:
    """The client's calibration just before the level; None when it took none. The reading after it is not compared
    with other levels: it catches the server still finishing the level's work (measured on the tiny CPU server:
    13.1-15.7 ms after levels whose before-readings were 10.2-10.4); only one far above it says other work started
    (`level_shift`)."""
    found = getattr(level, "calibration_ms", None)
    return float(found[0]) if found else None


LEVEL_SHIFT = 1.75
"""A level whose calibration after it reads more than this many times the one before it ran while other work took
the CPUs: measured on the tiny CPU server with the machine otherwise quiet, after ÷ before reached 1.62 (80 levels of
20 refreshes in docker); with tests run beside it, 2.0-4.3. On a slower VM (before-readings 23-28 ms) the server's
own finishing work alone read 1.56-1.93x."""


def level_shift(level: object) -> float:
    """The level's reading after it ÷ the one before when beyond LEVEL_SHIFT (the machine slowed during it), else
    1.0."""
    found = getattr(level, "calibration_ms", None)
    if not found or len(found) < 2 or not found[0]:
        return 1.0
    ratio = float(found[1]) / float(found[0])
    return ratio if ratio > LEVEL_SHIFT else 1.0


MAX_GRANT = 4.0
"""Levels whose states lie further apart than this are no baseline for each other, granted or not: beyond it a figure
says more about the machine than the server (both CPUs taken read 2.4x here), and a run file claiming 1e-6 ms before a
level and 1e6 after would otherwise excuse any change."""


def _state_span(level: object) -> tuple[float, float] | None:
    """Where the machine's speed during a level lies, in calibration ms: its before-reading, or from it to its reading
    after it when the machine slowed during the level (an after-reading within LEVEL_SHIFT is the server's own
    finishing work, not the machine); None when it took none."""
    before = level_reading(level)
    return None if before is None else (before, before * level_shift(level))


def same_state_known(level: object, earlier: object) -> bool:
    """Both levels took the client's calibration and their states are alike (factor 1.0): the same state by
    reading, not by the absence of one."""
    return level_reading(level) is not None and level_reading(earlier) is not None and state_factor(level, earlier) == 1


def state_factor(level: object, earlier: object) -> float:
    """How far apart the machine states of two levels may be, as a ratio ≥ 1: the furthest apart two points of their
    spans (`_state_span`) lie. 1.0: the same state (before-readings within MACHINE_RATIO and neither slowed during
    itself, or either took none: its run's readings decided, `other_state`), compared as measured. Two levels that
    both slowed 1.8x from alike before-readings lie about 1.8x apart, not 1.8 x 1.8."""
    new, old = _state_span(level), _state_span(earlier)
    if new is None or old is None:
        return 1.0
    (new_lo, new_hi), (old_lo, old_hi) = new, old
    apart = max(new_hi / old_lo, old_hi / new_lo)  # neither slowed: the before-readings' ratio
    return 1.0 if new_lo == new_hi and old_lo == old_hi and apart <= MACHINE_RATIO else apart


def granted(values: list[float], factors: list[float], b: float) -> list[float]:
    """Each earlier value moved toward `b` by its level's state factor, at most to `b`: what a machine that far
    apart could explain, granted in whichever direction the figure moved (the reading cannot say which way the
    server's figures follow it, and one reading alone is noisy). The band rules then see only a change beyond it."""
    out = []
    for value, factor in zip(values, factors):
        out.append(min(b, value * factor) if b > value else max(b, value / factor))
    return out


def factors_text(factors: list[float]) -> str:
    """'1.63x', or the range '1.28-3.88x' when the earlier levels lie at different distances."""
    low, high = min(factors), max(factors)
    return f"{high:.2f}x" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}x"


def _reason(level: object) -> str:
    found = getattr(level, "calibration_ms", None)
    if level_shift(level) > 1 and found:
        return (
            f"the machine slowed during this level (CPU calibration {float(found[0]):g} ms before it, "
            f"{float(found[1]):g} ms after)"
        )
    return "every earlier run measured this level with the machine in another state (CPU calibration)"


def across_states(level: object, factors: list[float]) -> str:
    """Why a figure compared only across machine states, and inside what their difference can explain, is not
    judged."""
    return f"{_reason(level)}: a change within the machine's {factors_text(factors)} is not judged"


def far_state(level: object) -> str:
    """Why no earlier level is a baseline for this one: every one lies more than MAX_GRANT from its state."""
    return f"{_reason(level)}, more than {MAX_GRANT:g}x from every earlier run's state: not judged"
