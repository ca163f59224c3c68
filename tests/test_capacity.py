"""catalogue.capacity: the verdict of one level and the search, driven by a latency model whose capacity is known."""

from __future__ import annotations

import math

import pytest

from catalogue.benchmark import LevelResult, RateLevel, Stats
from catalogue.capacity import Point, Verdict, bracket, judge, next_step, result, start
from catalogue.slo import Slo

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
