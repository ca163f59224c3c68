"""Probe sizing against hand-computed cases: a first probe able to decide, and a retry sized from what the probes at
its rate saw."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from catalogue.models.benchmark import RateLevel
from catalogue.models.slo import OpenLoop, Slo
from catalogue.stats.probe_size import MOST_REQUESTS, effective_to_decide, more_to_decide, probe_requests
from catalogue.stats.request_samples import decide_effective

SLO = Slo(percentile=95, ttft=100)
OPEN_LOOP = OpenLoop(rates=[], min_window_s=5, min_requests=10)


def probe(judged: int, over: int, independent: float = 1.0) -> RateLevel:
    return RateLevel(
        offered_rps=6, completed=judged, judged=judged, exceed={"ttft": over}, independent={"ttft": independent}
    )


def test_a_first_probe_is_its_window_and_a_retry_can_reach_the_deciding_count():
    """A first probe is its window: 5 s at 6 req/s, 30 requests (a rate far over its limits misses on a handful). A
    retry after 27 judged, none over, sends up to 100: 90 judged are the fewest that show a p95 met at 99 %
    (0.95^90 = 0.0099), the first tenth of a probe being warm-up; 63 more judged are needed, so 70 are sent."""
    assert probe_requests(OPEN_LOOP, SLO, 6.0, 50.0) == 30
    assert probe_requests(OPEN_LOOP, SLO, 1.0, 50.0) == 10  # the recipe's minimum
    assert probe_requests(OPEN_LOOP, SLO, 1.0, 20_000.0) == 600  # 30 end-to-end latencies of 20 s
    assert probe_requests(OPEN_LOOP, SLO, 6.0, 50.0, [probe(27, 0)]) == 70
    assert probe_requests(OPEN_LOOP, SLO, 6.0, 50.0, [probe(90, 0, independent=0.1)]) == 100  # at most 100
    assert probe_requests(OPEN_LOOP, SLO, 1.0, 20_000.0, [probe(90, 0, independent=0.1)]) == 600  # or the window


def test_a_retry_reaches_the_count_that_decides():
    """The measured case: 72 then 9 judged, none over the limit, 81 < 90, a third probe. Now 9 more judged are
    needed, sent as 10 (the warm-up's tenth); the old sizing sent 90 − 81 = 9, 8 of them judged: 89."""
    assert decide_effective(81, 0, 95, 0.99) == "undecided" and decide_effective(90, 0, 95, 0.99) == "meets"
    assert more_to_decide([probe(72, 0), probe(9, 0)], SLO) == 10


def test_a_retry_after_an_exceedance_is_sized_from_its_share():
    """1 of 90 over the limit: P(X ≤ 1 | 90, 0.05) = 0.057, undecided. At that share (1/90) the fewest that decide
    'meets' is the first n with P(X ≤ ⌈n/90⌉ | n, 0.05) ≤ 0.01; one request fewer does not."""
    target = effective_to_decide(90, 1, 95, 360)
    assert decide_effective(target, target / 90, 95, 0.99) == "meets"
    assert all(decide_effective(n, n / 90, 95, 0.99) == "undecided" for n in range(91, target))
    assert more_to_decide([probe(90, 1)], SLO) == math.ceil((target - 90) / 0.9)


def test_autocorrelated_requests_count_for_less():
    """Half independent: 90 judged are worth 45; 45 more effective take 90 more judged, 100 sent."""
    assert more_to_decide([probe(90, 0, independent=0.5)], SLO) == 100


def test_a_share_at_the_percentile_aims_at_the_cap():
    """5 of 100 over a p95 limit is the percentile's own share: no count decides it, so the retry aims at 4 × 90."""
    assert effective_to_decide(100, 5, 95, 360) == 360
    assert more_to_decide([probe(100, 5)], SLO) == math.ceil(260 / 0.9)


def test_a_decided_limit_asks_for_nothing_more():
    assert more_to_decide([probe(90, 0)], SLO) == 0
    assert probe_requests(OPEN_LOOP, SLO, 6.0, 50.0, [probe(90, 0)]) == 30  # the window alone


def test_untrusted_figures_never_ask_for_more_than_the_most_a_probe_sends():
    """A resumed run file's rate, latency or independent share, and a recipe's minimum, are untrusted: each once
    overflowed the count (OverflowError) or asked the client for 6e16 requests; now each is at most MOST_REQUESTS."""
    assert probe_requests(OPEN_LOOP, SLO, 1e308, 50.0) == MOST_REQUESTS
    assert probe_requests(OPEN_LOOP, SLO, 1e15, 50.0) == MOST_REQUESTS
    assert probe_requests(OPEN_LOOP, SLO, 1.0, 1e308) == MOST_REQUESTS
    with pytest.raises(ValidationError, match="less than or equal to 1000000"):
        OpenLoop(rates=[], min_window_s=5, min_requests=10**400)  # a recipe's bound refuses it now
    huge_minimum = OpenLoop.model_construct(
        rates=[], burstiness=1.0, min_window_s=5, min_requests=10**400, tolerance=0.1, search_budget_s=1200.0
    )
    assert probe_requests(huge_minimum, SLO, 1.0, 50.0) == MOST_REQUESTS
    assert more_to_decide([probe(10, 1, independent=1e-307)], SLO) == MOST_REQUESTS
    assert probe_requests(OPEN_LOOP, SLO, 6.0, 50.0, [probe(10, 1, independent=1e-307)]) == 100  # at most `deciding`
