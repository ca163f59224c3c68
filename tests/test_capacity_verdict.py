"""catalogue.stats.capacity_verdict on pooled probes: the early-stopping rule on per-request counts (decided, undecided,
settled), each probe counted at its independent share, saturation read from the steady rates, and the words of each
verdict. The counts' verdicts are the rule's, worked out in tests/test_request_samples.py (decide)."""

from __future__ import annotations

import pytest

from catalogue.models.benchmark import RateLevel, Stats
from catalogue.models.slo import Slo
from catalogue.stats.capacity_verdict import SETTLED, between_share, judge, judge_pooled, kept_up

SLO = Slo(percentile=95, ttft=2000)


def probe(judged: int, over: int, p95: float = 1500.0, independent: float | None = None, **more) -> RateLevel:
    return RateLevel(
        offered_rps=4.0,
        achieved_rps=4.0,
        completed=judged,
        judged=judged,
        exceed={"ttft": over},
        independent={"ttft": independent} if independent is not None else None,
        ttft_ms=Stats(p95=p95),
        **more,
    )


def test_pooled_probes_meet_miss_or_stay_undecided_by_their_counts():
    # 100 requests with none over: decided to meet (90 would do); two probes of 50 pool to the same
    assert judge(probe(100, 0), SLO).why == "meets"
    pooled = judge_pooled([probe(50, 0), probe(50, 0)], SLO)
    assert pooled.meets and pooled.why == "meets" and pooled.margin == 0.75 and not pooled.undecided
    # 12 of 100 over: decided to miss; 5 of 100: undecided (more requests needed)
    missed = judge(probe(100, 12, p95=2600.0), SLO)
    assert not missed.meets and missed.margin == 1.3 and not missed.undecided
    assert missed.why == "p95 TTFT: 12 of 100 requests over 2,000 ms (misses at 99% confidence)"
    open_ = judge(probe(100, 5), SLO)
    assert not open_.meets and open_.undecided
    assert open_.why == "undecided: p95 TTFT: 5 of 100 requests over 2,000 ms (more requests needed)"
    # counted at half their number (queued requests wait alike): 50 independent, 6 over: undecided, and said so
    halved = judge(probe(100, 12, independent=0.5), SLO)
    assert halved.undecided and halved.why == (
        "undecided: p95 TTFT: 12 of 100 requests over 2,000 ms, worth 50 independent (more requests needed)"
    )
    # without a judged count, the completed requests are judged
    plain = judge(probe(100, 0).model_copy(update={"judged": None}), SLO)
    assert plain.meets


def test_probes_that_scatter_more_than_independent_requests_weigh_less():
    # 6, 0, 0 of 140 each: pooled share 1/70, 2 expected per probe; gaps 4, -2, -2 against a binomial variance of
    # 140 x 1/70 x 69/70 = 1.971, 24 / 1.971 over 2 degrees of freedom = 6.09: at most 1/6.09 of each probe counts
    scattered = [probe(140, 6), probe(140, 0), probe(140, 0)]
    assert between_share(scattered, "ttft") == pytest.approx(138 / 840)
    # as 420 independent requests, 6 over would meet at 99 %; as 69, with 1 over, it cannot tell yet
    verdict = judge_pooled(scattered, SLO)
    assert verdict.undecided and verdict.why == (
        "undecided: p95 TTFT: 6 of 420 requests over 2,000 ms, worth 69 independent (more requests needed)"
    )
    # the same 6 spread evenly scatter less than binomial: counted in full, and decided
    even = [probe(140, 2), probe(140, 2), probe(140, 2)]
    assert between_share(even, "ttft") == 1.0 and judge_pooled(even, SLO).meets
    # the smaller share wins: the probes' own (autocorrelation) where it is lower than their scatter's
    assert judge_pooled([probe(140, 2, independent=0.25)] * 3, SLO).undecided
    # one probe, or none over: nothing to scatter
    assert between_share([probe(140, 6)], "ttft") == 1.0 and between_share([probe(90, 0)] * 2, "ttft") == 1.0


def test_a_rate_that_had_its_tries_is_settled_on_its_worst_percentile():
    under = judge_pooled([probe(50, 3, p95=1900.0), probe(50, 2, p95=1800.0)], SLO, settle=True)
    assert under.meets and under.settled and under.why == "meets" and under.margin == 0.95
    over = judge_pooled([probe(50, 3, p95=2100.0), probe(50, 2, p95=1800.0)], SLO, settle=True)
    assert not over.meets and over.settled and over.why == "p95 TTFT 2,100 ms > 2,000 ms" + SETTLED
    decided = judge_pooled([probe(100, 12, p95=2600.0)], SLO, settle=True)  # decided: nothing to settle
    assert not decided.settled and not decided.meets


def test_saturation_failures_and_nothing_completed():
    steady = probe(100, 0, sent_rps=4.0, kept_up_rps=3.0)
    assert kept_up(steady) == (3.0, 4.0, "kept up with {done:.3g} of {sent:.3g} req/s sent")
    verdict = judge(steady, SLO)
    assert verdict.saturated and verdict.achieved == 3.0 and verdict.why == "saturated: kept up with 3 of 4 req/s sent"
    assert judge(probe(100, 0, sent_rps=4.0, kept_up_rps=3.7), SLO).meets  # 92.5 % of the sends: kept up
    tool = probe(100, 0).model_copy(update={"achieved_rps": 3.5})
    assert kept_up(tool) == (3.5, 4.0, "achieved {done:.3g} of {sent:.3g} req/s offered") and judge(tool, SLO).saturated
    assert kept_up(probe(100, 0).model_copy(update={"offered_rps": None})) is None
    failed = judge_pooled([probe(50, 0, failed=2), probe(50, 0, failed=1)], SLO)
    assert not failed.meets and failed.why == "3 of 103 requests failed"
    none = judge(probe(0, 0), SLO)
    assert none.outright and none.why == "no request completed"
