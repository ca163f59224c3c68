"""catalogue.stats.capacity: the verdict of one level and the search, driven by a latency model whose capacity is
known."""

from __future__ import annotations

import math

import pytest

from catalogue.models.benchmark import LevelResult, RateLevel, Stats
from catalogue.models.slo import Slo
from catalogue.stats.capacity import (
    Point,
    Step,
    Verdict,
    bracket,
    decided_interval,
    judge,
    knee,
    next_step,
    result,
    retry,
    start,
)

SLO = Slo(percentile=95, ttft=2000, tpot=100)


def level(rate: float, ttft: float, tpot: float = 50, *, achieved: float | None = None, failed: int = 0) -> RateLevel:
    return RateLevel(
        offered_rps=rate,
        achieved_rps=rate if achieved is None else achieved,
        completed=100,
        failed=failed,
        ttft_ms=Stats(p95=ttft, mean=ttft / 2),
        tpot_ms=Stats(p95=tpot),
        e2e_ms=Stats(mean=3000),
    )


def queue_model(capacity: float):
    """p95 TTFT grows as 1 / (1 - load) and reaches 2 s exactly at `capacity`; past 1.3x it saturates."""

    def measure(rate: float) -> RateLevel:
        saturation = capacity * 1.3
        if rate >= saturation:
            return level(rate, 60_000, achieved=saturation * 0.95)
        base = 2000 * (1 - capacity / saturation)
        return level(rate, base / (1 - rate / saturation))

    return measure


def run_search(measure, first: float, ceiling: float | None, tolerance: float = 0.1, limit: int = 30):
    points: list[Point] = []
    for _ in range(limit):
        step = next_step(points, first, ceiling, tolerance)
        if step.rate is None:
            return points, step
        assert all(not math.isclose(step.rate, p.rate) for p in points), f"probed {step.rate} twice"
        points.append(Point(step.rate, judge(measure(step.rate), SLO)))
    raise AssertionError(f"no end after {limit} probes: {[(p.rate, p.verdict.meets) for p in points]}")


def test_judge_names_what_missed():
    assert judge(level(2, 1500), SLO) == Verdict(True, "meets", 0.75)
    missed = judge(level(2, 2500), SLO)
    assert not missed.meets and missed.why == "p95 TTFT 2,500 ms > 2,000 ms"
    assert judge(level(2, 100, tpot=150), SLO).why == "p95 TPOT 150 ms > 100 ms"
    assert judge(level(2, 100, failed=3), SLO).why == "3 of 103 requests failed"
    saturated = judge(level(4, 100, achieved=3.0), SLO)
    assert saturated.saturated and saturated.why == "saturated: achieved 3 of 4 req/s offered"
    nothing = RateLevel(offered_rps=4, completed=0, failed=20)
    assert judge(nothing, SLO).outright


def test_judge_without_the_percentile_is_no_pass():
    no_p95 = RateLevel(
        offered_rps=1, achieved_rps=1, completed=10, failed=0, ttft_ms=Stats(p99=10), tpot_ms=Stats(p95=1)
    )
    verdict = judge(no_p95, SLO)
    assert not verdict.meets and verdict.why == "p95 TTFT not recorded"


@pytest.mark.parametrize("true_capacity", [0.3, 3.1, 7.0, 40.0])
@pytest.mark.parametrize("first", [0.5, 3.0, 12.0])
def test_search_pins_capacity_within_the_tolerance(true_capacity, first):
    points, step = run_search(queue_model(true_capacity), first, ceiling=None)
    assert step.stopped is None, step.stopped
    lo, hi = bracket(points)
    assert lo is not None and hi is not None
    assert lo.rate <= true_capacity < hi.rate
    assert hi.rate / lo.rate <= 1.1 * 1.001
    found = result(points, {}, 0.1, None, 12.0)
    assert found.converged and found.rps == lo.rate and found.upper_rps == hi.rate


def test_a_good_first_guess_needs_few_probes():
    points, _ = run_search(queue_model(3.1), first=3.0, ceiling=4.0)
    assert len(points) <= 4, [(p.rate, p.verdict.meets) for p in points]


def test_planned_rates_count_but_are_not_probes():
    measure = queue_model(3.1)
    planned = [Point(r, judge(measure(r), SLO), probe=False) for r in (1.0, 2.0, 8.0)]
    points = list(planned)
    while (step := next_step(points, 1.0, None, 0.1)).rate is not None:
        assert 2.0 < step.rate < 8.0
        points.append(Point(step.rate, judge(measure(step.rate), SLO)))
    assert result(points, {}, 0.1, None, None).probes == len(points) - 3


def test_even_the_lowest_rate_missing_is_said_plainly():
    def hopeless(rate: float) -> RateLevel:
        return level(rate, 5000 + rate)  # the limit sits below the latency of an idle server

    points, step = run_search(hopeless, first=4.0, ceiling=None)
    assert step.stopped is not None and step.stopped.startswith("even the lowest rate probed")
    assert "misses the SLO" in step.stopped
    assert 2 <= len(points) <= 4
    found = result(points, {}, 0.1, step.stopped, 5.0)
    assert found.rps is None and not found.converged and found.stopped == step.stopped


def test_steady_decline_goes_down_to_the_floor():
    def slowly_better(rate: float) -> RateLevel:
        return level(rate, 2100 + 400_000 * rate)  # better at every lower rate, never within the limit

    points, step = run_search(slowly_better, first=8.0, ceiling=None)
    assert step.stopped is not None and "nothing down to" in step.stopped
    assert min(p.rate for p in points) >= 8.0 / 100 / 4


def test_an_outright_failure_stops_the_search():
    points = [Point(2.0, judge(level(2, 100), SLO)), Point(4.0, Verdict(False, "ConnectionError", outright=True))]
    step = next_step(points, 2.0, None, 0.1)
    assert step.rate is None and step.stopped == "4 req/s failed outright (ConnectionError)"


def test_saturation_brackets_from_above():
    points = [Point(8.0, judge(level(8, 100, achieved=5.0), SLO))]
    step = next_step(points, 8.0, None, 0.1)
    assert step.rate == 3.75  # below what the saturated server kept up with (5 req/s)


def test_start_takes_the_closed_loop_levels():
    def closed(c: int, per_s: float, ttft: float) -> LevelResult:
        return LevelResult(
            concurrency=c, completed=100, duration_s=100 / per_s, ttft_ms=Stats(p95=ttft), tpot_ms=Stats(p95=40)
        )

    first, ceiling = start([closed(1, 1.0, 300), closed(4, 3.0, 1500), closed(16, 5.0, 9000)], SLO)
    assert (first, ceiling) == (pytest.approx(2.4), 5.0)  # 0.8 x the best rate within the SLO
    first, ceiling = start([closed(16, 5.0, 9000)], SLO)
    assert (first, ceiling) == (1.25, 5.0)


def test_little_law_in_the_result():
    points = [Point(3.0, judge(level(3, 1000), SLO)), Point(3.2, judge(level(3.2, 2500), SLO))]
    found = result(points, {3.0: level(3, 1000)}, 0.1, None, None)
    assert found.converged and found.concurrent_requests == 9.0  # 3 req/s x 3 s mean end-to-end


MET = Verdict(True, "meets", 0.5)
MISSED = Verdict(False, "p95 TTFT 2,500 ms > 2,000 ms", 1.25)
OPEN = Verdict(False, "undecided: p95 TTFT (more requests needed)", 0.98, undecided=True)


def test_retry_measures_an_undecided_rate_first_then_a_miss_below_a_pass():
    """Lowest undecided rate with tries left (MAX_TRIES = 3), else the lowest miss under a rate that met with tries
    left (MISS_TRIES = 2), else nothing."""
    points = [Point(4.0, OPEN), Point(2.0, OPEN, tries=3), Point(3.0, MISSED), Point(5.0, MET)]
    assert retry(points) == 4.0  # 2.0 has had its three tries
    assert retry([Point(4.0, OPEN, tries=2), Point(6.0, OPEN)]) == 4.0
    assert retry([Point(3.0, MISSED), Point(2.5, MISSED), Point(5.0, MET)]) == 2.5
    assert retry([Point(3.0, MISSED, tries=2), Point(5.0, MET)]) is None  # believed after two tries
    assert retry([Point(6.0, MISSED), Point(5.0, MET)]) is None  # a miss above the pass is the bracket's
    assert next_step([Point(4.0, OPEN), Point(8.0, MISSED)], 4.0, None, 0.1) == Step(4.0)


def test_below_rates_no_probe_could_decide_the_search_steps_down_then_stops_at_its_floor():
    """Only undecided rates (each tried 3 times): probe SATURATED_STEP (0.75) x the lowest of them, unless that is
    under 1 % of the first guess. Undecided rates inside a closed bracket: probe their geometric mean with the pass
    while that is wider than the tolerance, else stop and name them."""
    stuck = [Point(4.0, OPEN, tries=3), Point(6.0, OPEN, tries=3)]
    assert next_step(stuck, 4.0, None, 0.1) == Step(3.0)
    floor = next_step([Point(0.02, OPEN, tries=3)], 4.0, None, 0.1)  # 0.015 < 0.04
    assert floor.rate is None and floor.stopped == (
        "no rate down to 0.02 req/s could be decided to meet or miss at 99%"
    )
    bracketed = [Point(2.0, MET), Point(4.0, OPEN, tries=3), Point(8.0, MISSED)]
    assert next_step(bracketed, 4.0, None, 0.1) == Step(2.828)  # sqrt(2 x 4), four significant figures
    close = [Point(2.0, MET), Point(2.1, OPEN, tries=3), Point(8.0, MISSED)]
    stop = next_step(close, 4.0, None, 0.1)
    assert stop.rate is None and stop.stopped == (
        "the capacity lies between 2 and 8 req/s: at 2.1 req/s the SLO could not be decided at 99% confidence in 3 "
        "probes (latency varies more than a probe's window averages)"
    )


def test_the_decided_interval_leaves_settled_and_undecided_rates_out():
    settled = Verdict(True, "meets", 0.9, settled=True)
    points = [Point(2.0, MET), Point(3.0, settled), Point(3.5, OPEN), Point(5.0, MISSED), Point(4.0, MISSED)]
    assert decided_interval(points) == (2.0, 4.0)
    assert decided_interval([Point(2.0, MET), Point(6.0, MET)]) == (6.0, None)
    assert decided_interval([Point(6.0, MISSED)]) == (None, 6.0)
    assert decided_interval([Point(3.0, MET), Point(2.0, MISSED)]) == (None, 2.0)  # a pass above the miss is no floor


def test_the_knee_is_where_limit_over_latency_reaches_one():
    """On (rate, 1 / margin): 2 req/s at margin 0.5 (2.0), 4 at 0.8 (1.25): slope -0.375 per req/s, so 1.0 is reached
    at 2 + (1 - 2) / -0.375 = 4.667 req/s. No fall, the same rate, a missing margin or saturation: no knee."""
    assert knee(Point(2.0, Verdict(True, "meets", 0.5)), Point(4.0, Verdict(True, "meets", 0.8))) == pytest.approx(
        2 + 1 / 0.375
    )
    flat = Point(4.0, Verdict(True, "meets", 0.5))
    assert knee(Point(2.0, Verdict(True, "meets", 0.5)), flat) is None
    assert knee(Point(4.0, Verdict(True, "meets", 0.4)), flat) is None
    assert knee(Point(2.0, Verdict(True, "meets", None)), flat) is None
    sat = Point(2.0, Verdict(False, "saturated: achieved 1 of 2 req/s offered", 0.5, saturated=True, achieved=1.0))
    assert knee(sat, Point(4.0, Verdict(True, "meets", 0.8))) is None


def test_the_result_carries_each_figure_of_the_search():
    """Bracket (2, 2.2) at 10 %: converged, so no stop reason. Requests in flight: what the server kept up with at
    2 req/s (1.953, its steady reading before the tool's 1.9) × the 3 s mean E2E = 5.859, to two decimals 5.86. The
    search's seconds to one decimal; its probes counted from the points (the planned rate is not a probe) unless
    given; the decided interval only for sampled probes."""
    met = RateLevel(offered_rps=2.0, achieved_rps=1.9, kept_up_rps=1.953, sent_rps=2.0, e2e_ms=Stats(mean=3000))
    points = [Point(1.0, MET, probe=False), Point(2.0, MET), Point(2.2, MISSED)]
    found = result(points, {2.0: met}, 0.1, "a reason", 12.345, confidence=0.99, sampled=True)
    assert (found.rps, found.upper_rps, found.converged, found.stopped) == (2.0, 2.2, True, None)
    assert (found.concurrent_requests, found.search_s, found.probes) == (5.86, 12.3, 2)
    assert (found.confidence, found.decided_rps, found.tolerance) == (0.99, (2.0, 2.2), 0.1)
    plain = result(points, {2.0: met.model_copy(update={"kept_up_rps": None})}, 0.1, "a reason", None, probes=7)
    assert plain.concurrent_requests == 5.7 and plain.search_s is None and plain.probes == 7
    assert plain.decided_rps is None and plain.confidence is None
    unmeasured = result(points, {2.0: met.model_copy(update={"kept_up_rps": None, "achieved_rps": None})}, 0.1, None, 1)
    assert unmeasured.concurrent_requests == 6.0  # the offered rate, when nothing says what was kept up with
    wide = result([Point(2.0, MET), Point(4.0, MISSED)], {}, 0.1, "the budget ran out", None)
    assert not wide.converged and wide.stopped == "the budget ran out" and wide.concurrent_requests is None


def test_start_reads_only_closed_loop_levels_and_a_margin_of_exactly_one_is_within():
    def closed(per_s: float, ttft: float, prompt_tokens: int | None = None) -> LevelResult:
        return LevelResult(
            concurrency=4,
            completed=100,
            duration_s=100 / per_s,
            ttft_ms=Stats(p95=ttft),
            tpot_ms=Stats(p95=40),
            prompt_tokens=prompt_tokens,
        )

    assert start([closed(5.0, 2000)], SLO) == (4.0, 5.0)  # p95 TTFT at its limit: within, 0.8 x 5
    assert start([closed(5.0, 2000), closed(50.0, 100, prompt_tokens=20_000)], SLO) == (4.0, 5.0)  # long context
    assert start([], SLO) == (1.0, None)
