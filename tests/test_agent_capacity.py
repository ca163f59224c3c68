"""The capacity in sessions: levels judged by the open-loop search's early-stopping rule, bracketed and bisected."""

from __future__ import annotations

import pytest

from catalogue.models.latency import Stats
from catalogue.models.slo import Slo
from catalogue.stats.agent_capacity import bracket, capacity, next_sessions, search, verdicts
from catalogue.stats.agents import AgentLevel
from catalogue.stats.request_samples import decide

SLO = Slo(percentile=90, ttft=300)


def level(sessions: int, over: int, judged: int = 200, probe: int | None = None, failed: int = 0) -> AgentLevel:
    """A level whose judged turns had `over` TTFTs above the limit (p90 recorded on the matching side)."""
    p90 = 400.0 if over > judged * 0.1 else 200.0
    return AgentLevel(
        sessions=sessions, probe=probe, turns=judged + 20, failed=failed, ttft_ms=Stats(p90=p90),
        exceed={"ttft": over}, judged=judged, independent={"ttft": 1.0},
    )  # fmt: skip


def test_a_level_is_decided_exactly_as_the_binomial_rule_says():
    for over in (5, 20, 40):
        found = verdicts([level(4, over)], SLO)[4]
        rule = decide(200, over, 90, 0.99)
        assert found.meets == (rule == "meets") and found.undecided == (rule == "undecided")


def test_a_failed_turn_misses():
    assert not verdicts([level(2, 0, failed=1)], SLO)[2].meets


def test_bisects_between_the_highest_met_and_the_lowest_missed():
    levels = [level(2, 2), level(10, 60)]
    assert bracket(verdicts(levels, SLO)) == (2, 10)
    assert next_sessions(levels, SLO, 16) == 6
    levels.append(level(6, 3, probe=1))
    assert next_sessions(levels, SLO, 16) == 8
    levels += [level(8, 50, probe=2), level(7, 4, probe=3)]
    assert next_sessions(levels, SLO, 16) is None
    found = capacity(levels, SLO, probes=3, stopped=None)
    assert (found.sessions, found.upper_sessions, found.converged) == (7, 8, True)
    assert found.decided == (7, 8)


def test_grows_by_doubling_up_to_the_ceiling_while_every_level_meets():
    assert next_sessions([level(2, 0), level(4, 1)], SLO, 6) == 6
    assert next_sessions([level(2, 0), level(4, 1), level(6, 1)], SLO, 6) is None


def test_an_undecided_level_is_measured_again_then_settled_on_its_percentile():
    undecided = level(4, 20)
    assert verdicts([level(2, 0), undecided], SLO)[4].undecided
    assert next_sessions([level(2, 0), undecided], SLO, 16) == 4
    again = [level(2, 0), undecided, level(4, 20, probe=1)]
    settled = verdicts(again, SLO)[4]
    assert settled.settled and not settled.undecided
    found = capacity(again, SLO, probes=1, stopped="its probes ran out")
    assert found.decided == (2, None)  # a settled verdict is in neither end of the decided interval


def test_the_reason_for_stopping_counts_its_probes_in_words():
    def measure(sessions: int, probe: int) -> AgentLevel:
        return level(sessions, 20, probe=probe)  # undecided every time: the search never closes

    for probes, words in ((1, "its 1 probe ran out"), (2, "its 2 probes ran out")):
        assert search([level(2, 20)], SLO, 16, probes, measure) == (probes, words)


def test_nothing_met_halves_down_to_one_session():
    assert next_sessions([level(4, 100)], SLO, 16) == 2
    assert next_sessions([level(2, 100), level(4, 100)], SLO, 16) == 1
    found = capacity([level(1, 100), level(2, 100)], SLO, probes=1, stopped=None)
    assert found.sessions is None and found.upper_sessions == 1 and found.converged


@pytest.mark.parametrize("knee", [1, 3, 7, 11, 16])
def test_the_search_finds_a_known_capacity_from_two_planned_levels(knee):
    """A stand-in server whose turns all meet up to `knee` sessions and a third miss above it: the search (planned
    levels 2 and 4, then its own probes) ends on exactly that bracket (the simulator's levels:
    tests/test_simulator_sessions.py)."""

    def measured(sessions: int, probe: int | None) -> AgentLevel:
        return level(sessions, 0 if sessions <= knee else 60, probe=probe)

    levels = [measured(2, None), measured(4, None)]
    probes, stopped = search(levels, SLO, 16, 8, measured)
    found = capacity(levels, SLO, probes, stopped)
    assert found.sessions == knee
    if knee < 16:
        assert found.converged and found.upper_sessions == knee + 1
    else:  # the ceiling (max_sessions) met: a lower bound, and it says so
        assert not found.converged and found.upper_sessions is None and "ceiling" in found.stopped
