"""Agent sessions on the simulated engine in virtual time (simulator/sessions.py): its prefix cache against the trace
generator's own count of what could be cached, and the capacity search in sessions (catalogue.stats.agent_capacity, the
loop the runner drives with AIPerf) against the model's true capacity, with prefix caching on and off."""

from __future__ import annotations

import pytest

from catalogue.models.agent_trace import AgentTrace, intended_hit_rate
from catalogue.models.slo import Slo
from catalogue.stats import agent_capacity
from catalogue.stats.agents import AgentLevel, AgentsSetting
from simulator import sessions
from simulator.profile import load_profile
from simulator.truth import Scheduler

PROFILE = load_profile("ci")
SCHEDULER = Scheduler(max_num_seqs=8, max_num_batched_tokens=2048)
SLO = Slo(percentile=90, ttft=100, tpot=40)
SETTING = AgentsSetting(
    trace=AgentTrace(sessions=32, turns=4, block_tokens=64, first_turn_blocks=8, growth_blocks=2, output_tokens=16,
                     think="exponential", think_ms=100, seed=1),
    reuse=[0.5], sessions=[2, 6], max_sessions=16, search_probes=6,
)  # fmt: skip
"""The tiny agents example's shape (tiny-cpu-agents) with room for 16 sessions."""
TRACE = SETTING.traces()[0]


def test_the_cache_serves_what_the_trace_generator_says_could_be_cached():
    """Hits ÷ queries at each reuse ratio: below the generator's count by no more than the cache's rounding (whole
    16-token blocks, never a prompt's last token), rising with reuse; nothing without prefix caching."""
    measured = []
    for reuse in (0.0, 0.5, 0.9):
        found = sessions.replay(PROFILE, SCHEDULER, TRACE.with_reuse(reuse), 4, seed=3)
        rate = found.hits / found.queries
        assert intended_hit_rate(TRACE.with_reuse(reuse)) - 0.04 < rate <= intended_hit_rate(TRACE.with_reuse(reuse))
        measured.append(rate)
    assert measured == sorted(measured) and measured[0] < measured[-1] - 0.05
    off = sessions.replay(PROFILE, SCHEDULER, TRACE, 4, prefix_caching=False, seed=3)
    assert off.hits == off.queries == 0


def test_without_prefix_caching_later_turns_wait_longer_for_their_first_token():
    def later_p50(caching: bool) -> float:
        found = sessions.replay(PROFILE, SCHEDULER, TRACE, 4, prefix_caching=caching, seed=3)
        return sessions.percentile([sessions.ttft_ms(t) for t in found.turns if t.index > 0], 50)

    assert later_p50(False) > 1.5 * later_p50(True)


def test_a_level_reads_as_the_runners_level():
    found = sessions.replay(PROFILE, SCHEDULER, TRACE, 2, seed=3)
    level = sessions.level(found, 2, SLO.limits)
    assert level.turns == TRACE.sessions * TRACE.turns and level.failed == 0
    assert level.ttft_first_ms.n == TRACE.sessions and level.ttft_later_ms.n == 3 * TRACE.sessions
    assert level.hit_rate == pytest.approx(found.hits / found.queries)


@pytest.mark.parametrize("caching", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_search_in_sessions_finds_the_true_capacity(caching, seed):
    """The search from the planned levels, each level one pass through the trace with its own noise: the true capacity
    (long replays, steady state) lies inside the decided interval, and the bracket's lower end within two sessions
    below it (one pass starts with every slot's first turn at once: its p90 runs a little above the steady state's)."""
    truth = sessions.true_capacity(PROFILE, SCHEDULER, TRACE, limits=SLO.limits, percentile_p=SLO.percentile,
                                   max_sessions=16, prefix_caching=caching)  # fmt: skip
    assert 1 < truth < 16  # a knee inside the search's range

    def measure(n: int, probe: int | None) -> AgentLevel:
        found = sessions.replay(PROFILE, SCHEDULER, TRACE, n, prefix_caching=caching, seed=seed * 1000 + n * 10
                                + (probe or 0))  # fmt: skip
        return agent_capacity.label(sessions.level(found, n, SLO.limits, probe), SLO)

    levels = [measure(n, None) for n in SETTING.sessions]
    assert SETTING.max_sessions is not None
    probes, stopped = agent_capacity.search(levels, SLO, SETTING.max_sessions, SETTING.search_probes, measure)
    found = agent_capacity.capacity(levels, SLO, probes, stopped)
    assert found.converged and found.sessions is not None
    low, high = found.decided or (None, None)
    assert (low or 0) <= truth < (high or 17), (found, truth)
    assert truth - 2 <= found.sessions <= truth, (found, truth)


def test_prefix_caching_is_worth_sessions_in_the_model():
    """With caching, the same profile and objective hold at least twice the sessions (later turns' prefill is mostly
    cached): what a reuse sweep on a real server should show too."""
    on, off = (sessions.true_capacity(PROFILE, SCHEDULER, TRACE, limits=SLO.limits, percentile_p=SLO.percentile,
                                      max_sessions=16, prefix_caching=c) for c in (True, False))  # fmt: skip
    assert off >= 1 and on >= 2 * off, (on, off)
