"""catalogue.capacity_conditioning: a limit nearly reached at half the capacity, on the measured cases."""

from __future__ import annotations

from catalogue.benchmark import LevelResult, RateLevel, Stats
from catalogue.capacity_conditioning import flat_limit
from catalogue.slo import Slo

SLO = Slo(percentile=95, ttft=100, tpot=20)


def rate(offered: float, ttft_p95: float, tpot_p95: float) -> RateLevel:
    return RateLevel(offered_rps=offered, completed=100, ttft_ms=Stats(p95=ttft_p95), tpot_ms=Stats(p95=tpot_p95))


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


def test_a_capacity_whose_limit_was_nearly_reached_at_half_of_it_is_flagged():
    """Capacity 21.65: the highest rate at half of it or less is 10.46, whose three probes had p95 TPOT 23.8, 15.6
    and 17.0 ms (median 17.0: 85 % of 20 ms ≥ 70 %); p95 TTFT there, 63.5 ms, is 64 % of 100 ms."""
    flat = flat_limit(SLOW_VM, 21.65, SLO)
    assert flat is not None and (flat.label, flat.load, flat.light_ms) == ("p95 TPOT", "10.46 req/s", 17.0)
    assert flat.text().startswith("At 10.46 req/s, 48 % of the capacity, p95 TPOT was already 17 ms, 85 % of its 20 ms")


def test_a_limit_with_room_at_half_the_capacity_is_not():
    """examples/tiny-cpu-capacity, run 20261126T113135Z (capacity 47.6): at 12 req/s p95 TPOT 5.48 ms, 27 %."""
    fast = [rate(2.0, 20.1, 6.94), rate(6.0, 21.0, 7.75), rate(12.0, 22.3, 5.48), rate(47.6, 60.0, 18.2)]
    assert flat_limit(fast, 47.6, SLO) is None
    assert flat_limit(SLOW_VM, None, SLO) is None  # no capacity
    assert flat_limit(SLOW_VM[5:], 21.65, SLO) is None  # no rate at half of it or less


def test_the_worst_limit_is_named():
    """TTFT at 90 % of its limit and TPOT at 75 %: TTFT is named."""
    flat = flat_limit([rate(5.0, 90.0, 15.0), rate(10.0, 99.0, 19.0)], 10.0, SLO)
    assert flat is not None and flat.label == "p95 TTFT" and flat.light_ms == 90.0


def test_without_a_light_open_loop_rate_the_busiest_light_closed_loop_level_speaks():
    """No probe at half of 21.65 req/s or less: the closed loop's c=2 did 10 req/s (100 in 10 s) with p95 TPOT 16 ms
    (80 %); c=4 did 16 req/s, more than half the capacity, and is left out."""
    probes = SLOW_VM[5:]
    c2 = LevelResult(concurrency=2, completed=100, duration_s=10, ttft_ms=Stats(p95=40.0), tpot_ms=Stats(p95=16.0))
    c4 = LevelResult(concurrency=4, completed=160, duration_s=10, ttft_ms=Stats(p95=45.0), tpot_ms=Stats(p95=10.0))
    flat = flat_limit(probes, 21.65, SLO, [c2, c4])
    assert flat is not None and flat.load == "concurrency 2 (10 req/s)" and flat.light_ms == 16.0
    assert flat.text().startswith("At concurrency 2 (10 req/s), 46 % of the capacity, p95 TPOT was already 16 ms")
    assert flat_limit(probes, 21.65, SLO, [c4]) is None
