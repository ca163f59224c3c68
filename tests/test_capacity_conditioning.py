"""catalogue.stats.capacity_conditioning: a limit an unloaded or lightly loaded server nearly reached, on measured
cases."""

from __future__ import annotations

import pytest

from catalogue.models.benchmark import LevelResult, RateLevel, Stats
from catalogue.models.slo import Slo
from catalogue.stats.capacity_conditioning import flat_limit

SLO = Slo(percentile=95, ttft=100, tpot=20)


def rate(offered: float, ttft_p95: float, tpot_p95: float) -> RateLevel:
    return RateLevel(offered_rps=offered, completed=100, ttft_ms=Stats(p95=ttft_p95), tpot_ms=Stats(p95=tpot_p95))


def single(ttft_p50: float, tpot_p50: float, concurrency: int = 1) -> LevelResult:
    return LevelResult(
        concurrency=concurrency, completed=8, duration_s=2, ttft_ms=Stats(p50=ttft_p50), tpot_ms=Stats(p50=tpot_p50)
    )


SLOW_VM = [  # bench of 2026-11-26 15:19, search 1 (p95 TTFT, p95 TPOT of each probe)
    rate(4.921, 50.7, 15.2),
    rate(7.748, 52.6, 14.8),
    rate(10.46, 80.4, 23.8),
    rate(10.46, 56.6, 15.6),
    rate(10.46, 63.5, 17.0),
    rate(15.06, 61.2, 19.0),
    rate(21.65, 55.4, 16.8),
    rate(25.98, 98.8, 27.8),
]


def test_a_limit_nearly_reached_at_half_the_capacity_is_flagged():
    """Capacity 21.65: the busiest rate at half of it or less is 10.46, whose three probes had p95 TPOT 23.8, 15.6
    and 17.0 ms (median 17.0: 85 % of 20 ms ≥ 70 %); p95 TTFT there, 63.5 ms, is 64 % of 100 ms."""
    flat = flat_limit(SLOW_VM, 21.65, SLO)
    assert flat is not None and (flat.label, flat.light_ms) == ("p95 TPOT", 17.0)
    assert flat.text().startswith(
        "At 10.46 req/s, 48 % of the capacity, p95 TPOT was already 17 ms, 85 % of its 20 ms limit"
    )


def test_one_request_at_a_time_using_much_of_a_limit_is_flagged():
    """`nox -s bench -- capacity` of 2026-11-26 16:14, search 3: c=1 median TPOT 10.9 ms (55 % of 20 ms ≥ 40 %),
    capacity 3.567 req/s, no probe at half of it. s / (1 − s) = 1.2: the capacity moves more than the latency does."""
    flat = flat_limit([rate(2.992, 60.0, 18.0), rate(3.567, 70.0, 19.0)], 3.567, SLO, [single(40.0, 10.95)])
    assert flat is not None and flat.label == "median TPOT" and flat.light_ms == pytest.approx(10.95)
    assert flat.text().startswith(
        "At concurrency 1 (one request at a time), median TPOT was already 11 ms, 55 % of its 20 ms limit"
    )


def test_limits_with_room_are_not():
    """examples/tiny-cpu-capacity, run 20261126T113135Z (capacity 47.6): c=1 median TTFT 13.8 ms and TPOT 4.55 ms
    (14 % and 23 %); at 12 req/s, a quarter of the capacity, p95 TPOT 5.48 ms (27 %)."""
    fast = [rate(2.0, 20.1, 6.94), rate(6.0, 21.0, 7.75), rate(12.0, 22.3, 5.48), rate(47.6, 60.0, 18.2)]
    assert flat_limit(fast, 47.6, SLO, [single(13.8, 4.55), single(38.6, 7.35, concurrency=4)]) is None
    assert flat_limit(SLOW_VM, None, SLO) is None  # no capacity
    assert flat_limit(SLOW_VM[5:], 21.65, SLO) is None  # no rate at half of it or less, no closed loop
    assert flat_limit(SLOW_VM[5:], 21.65, SLO, [single(45.0, 7.9, concurrency=2)]) is None  # c=2 is not unloaded


def test_the_worst_limit_is_named():
    """TTFT at 90 % of its limit at half the capacity, TPOT's median at c=1 at 75 %: TTFT is named."""
    flat = flat_limit([rate(5.0, 90.0, 15.0), rate(10.0, 99.0, 19.0)], 10.0, SLO, [single(20.0, 15.0)])
    assert flat is not None and flat.label == "p95 TTFT" and flat.light_ms == 90.0
