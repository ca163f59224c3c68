"""The capacity in sessions: the most concurrent agent sessions whose turns meet the SLO.

Each level is judged by the open-loop search's own rules (catalogue.stats.capacity_verdict.judge_pooled): no failed
turn, and every limit decided by the early-stopping rule at 99 % on the judged turns (the warm-up tenth left out,
counted at their independent share), a level still undecided after a second try judged on its percentile and saying so.
Sessions are whole numbers, so the search brackets them and bisects: the next level is the middle of the highest
that met and the lowest that missed, until they are adjacent or the probes run out.
"""

from __future__ import annotations

from collections.abc import Callable

from catalogue.models.benchmark import RateLevel
from catalogue.models.slo import Slo
from catalogue.stats.agents import AgentLevel, SessionCapacity
from catalogue.stats.capacity_verdict import CONFIDENCE, Verdict, judge_pooled

TRIES = 2
"""Times one session count is measured before an undecided verdict is settled on its percentile."""


def as_rate_level(level: AgentLevel) -> RateLevel:
    """The level in the shape the open-loop verdict reads (no offered rate: a closed loop never saturates by it)."""
    return RateLevel(
        completed=level.turns,
        failed=level.failed,
        ttft_ms=level.ttft_ms,
        tpot_ms=level.tpot_ms,
        exceed=level.exceed,
        judged=level.judged,
        independent=level.independent,
    )


def verdict(levels: list[AgentLevel], sessions: int, slo: Slo) -> Verdict:
    """One session count, its tries pooled; settled on its percentile once it has had TRIES."""
    tries = [as_rate_level(lv) for lv in levels if lv.sessions == sessions]
    return judge_pooled(tries, slo, settle=len(tries) >= TRIES)


def verdicts(levels: list[AgentLevel], slo: Slo) -> dict[int, Verdict]:
    """Every measured session count's verdict, ascending."""
    return {n: verdict(levels, n, slo) for n in sorted({lv.sessions for lv in levels})}


def bracket(found: dict[int, Verdict]) -> tuple[int | None, int | None]:
    """(highest count that met below every miss, lowest count that missed); undecided counts are neither."""
    missed = [n for n, v in found.items() if not v.meets and not v.undecided]
    upper = min(missed) if missed else None
    met = [n for n, v in found.items() if v.meets and (upper is None or n < upper)]
    return (max(met) if met else None), upper


def next_sessions(levels: list[AgentLevel], slo: Slo, max_sessions: int) -> int | None:
    """The next session count to measure: an undecided one again, else the bracket's middle, else double the highest
    met up to max_sessions; None when the bracket is closed."""
    found = verdicts(levels, slo)
    for n, v in found.items():
        if v.undecided:
            return n
    low, high = bracket(found)
    if low is None:
        lower = (high or 1) // 2
        return lower if lower >= 1 and lower not in found else None
    if high is None:
        step = min(max_sessions, low * 2)
        return step if step > low and step not in found else None
    middle = (low + high) // 2
    return middle if low < middle < high else None


def search(
    levels: list[AgentLevel], slo: Slo, max_sessions: int, probes: int, measure: Callable[[int, int], AgentLevel]
) -> tuple[int, str | None]:
    """Add `measure(sessions, probe)`'s levels to `levels` until the bracket closes or `probes` run out; (probes
    run, why it stopped early). The runner measures with AIPerf, the simulator's check in virtual time."""
    for probe in range(1, probes + 1):
        nxt = next_sessions(levels, slo, max_sessions)
        if nxt is None:
            return probe - 1, None
        levels.append(measure(nxt, probe))
    return probes, f"its {probes} probe{'' if probes == 1 else 's'} ran out"


def capacity(levels: list[AgentLevel], slo: Slo, probes: int, stopped: str | None) -> SessionCapacity:
    """The result: the bracket, and the interval of decided (not settled) verdicts only."""
    found = verdicts(levels, slo)
    low, high = bracket(found)
    decided_met = [n for n, v in found.items() if v.meets and not v.settled and (high is None or n < high)]
    decided_missed = [n for n, v in found.items() if not v.meets and not v.undecided and not v.settled]
    converged = (low is not None and high is not None and high - low == 1) or (low is None and high == 1)
    return SessionCapacity(
        sessions=low,
        upper_sessions=high,
        decided=(max(decided_met) if decided_met else None, min(decided_missed) if decided_missed else None),
        confidence=CONFIDENCE,
        probes=probes,
        converged=converged,
        stopped=None
        if converged
        else stopped or ("no level missed: the ceiling, not a miss, ended it" if high is None else None),
    )


def label(level: AgentLevel, slo: Slo | None) -> AgentLevel:
    """The level with its own verdict in words."""
    if slo is None:
        return level
    return level.model_copy(update={"verdict": judge_pooled([as_rate_level(level)], slo).why})
