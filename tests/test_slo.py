"""catalogue.models.slo against vLLM itself: the limit names are exactly what `vllm bench serve --goodput` accepts."""

from __future__ import annotations

import argparse

import pytest

from catalogue.models.slo import GOODPUT_KEYS, OpenLoop, Slo
from tests.needs import needs_vllm


@needs_vllm
def test_goodput_keys_are_the_ones_vllm_accepts():
    from vllm.benchmarks.serve import check_goodput_args

    for key in GOODPUT_KEYS:
        assert check_goodput_args(argparse.Namespace(goodput=[f"{key}:10"])) == {key: 10.0}
    for other in ("itl", "ttft_ms", "latency"):
        with pytest.raises(Exception, match="Invalid metric name"):
            check_goodput_args(argparse.Namespace(goodput=[f"{other}:10"]))


@needs_vllm
def test_goodput_args_parse_back_in_vllm():
    from vllm.benchmarks.serve import check_goodput_args

    slo = Slo(percentile=99, ttft=2000, tpot=100, e2el=30000)
    words = slo.goodput_args()
    assert words[0] == "--goodput"
    assert check_goodput_args(argparse.Namespace(goodput=words[1:])) == {"ttft": 2000.0, "tpot": 100.0, "e2el": 30000.0}


def test_slo_describes_itself():
    assert Slo(ttft=2000, tpot=100).describe() == "p95 TTFT ≤ 2 s and p95 TPOT ≤ 100 ms"
    assert Slo(percentile=99, e2el=1500).describe() == "p99 E2E latency ≤ 1.5 s"
    assert Slo(ttft=2000).key != Slo(ttft=2000, percentile=99).key


def test_requests_cover_the_window():
    loop = OpenLoop(rates=[0.5, 4], min_window_s=30, min_requests=20)
    assert loop.requests_at(0.5) == 20
    assert loop.requests_at(4) == 120
    assert loop.requests_at(3.33) == 100
