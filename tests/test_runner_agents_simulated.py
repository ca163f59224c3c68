"""The agent step with the real AIPerf against the simulated server (simulator/, no vLLM): every session replayed once
and whole, and the prefix-cache hit rate read from the simulator's /metrics, rising with reuse and never above what
the trace could give; with prefix caching off, no hit and later turns that pay their whole prefill. Two simulator
boots (caching on, then off), two short replays each (the counters with caching off on the real engine:
tests/test_runner_agents.py)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from catalogue.models.loading import parse_run
from catalogue.stats.agents import AgentRun
from runner.measuring import agents
from tests.test_runner_agents_step import refresh

pytestmark = pytest.mark.simulator

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "tiny-cpu-agents" / "model"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def replayed(tmp_path: Path, caching: bool = True) -> list[AgentRun]:
    """The step's run files, one per reuse ratio, against a simulator started for them (prefix caching on unless
    `caching` is false)."""
    port = free_port()
    argv = [sys.executable, "-m", "simulator", str(MODEL), "--profile", "ci", "--host", "127.0.0.1",
            "--port", str(port), "--served-model-name", "tiny", "--seed", "1"]  # fmt: skip
    if not caching:
        argv.append("--no-enable-prefix-caching")
    server = subprocess.Popen(argv, cwd=REPO)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        r = refresh(tmp_path, port, sessions=(2,))
        agents.step_agents(r)  # type: ignore[arg-type]
    finally:
        server.terminate()
        server.wait(timeout=10)
    runs = sorted((r.plan.folder / "runs").glob("*-agents-*.json"))
    assert len(runs) == 2, r.progress.notes
    return [run.agents for run in map(parse_run, runs) if run.agents is not None]


@pytest.fixture(scope="module")
def cached(tmp_path_factory) -> list[AgentRun]:
    """The replays with prefix caching on (one boot for the module)."""
    if agents.aiperf_command() is None:
        pytest.skip("AIPerf not installed (CATALOGUE_AIPERF); nox -s tests installs it")
    return replayed(tmp_path_factory.mktemp("on"))


def test_every_session_once_and_the_hit_rate_from_the_simulators_counters(cached):
    parts = cached
    for part in parts:
        (level,) = part.levels
        assert level.turns == 12 and level.failed == 0  # refresh(): 6 sessions of 2 turns
        assert level.ttft_first_ms.n == 6 and level.ttft_later_ms.n == 6
    rates = [part.levels[0].hit_rate for part in parts]
    assert 0 < rates[0] < rates[1], rates
    for part, rate in zip(parts, rates, strict=True):
        assert part.intended_hit_rate is not None and rate <= part.intended_hit_rate, (rate, part.intended_hit_rate)


def test_without_prefix_caching_no_hit_and_later_turns_pay_their_whole_prefill(cached, tmp_path):
    """The simulator's model: a cached prefix block costs no prefill, an uncached token costs the profile's
    prefill_ms_per_token. At 90 % reuse a later turn's prompt is mostly the session's earlier turns, so without
    caching its time to first token is longer. (On the tiny CPU engine this difference is within the machine's
    noise: a CI run there measured 58.6 ms without caching against 65.7 ms with it.)"""
    uncached = replayed(tmp_path, caching=False)
    for part in uncached:
        (level,) = part.levels
        assert level.turns == 12 and level.failed == 0  # the recipe is the same; only the server caches nothing
        assert not level.prefix_hits, level.prefix_hits
    with_cache, without = cached[1].levels[0], uncached[1].levels[0]  # reuse 0.9
    assert without.ttft_later_ms.p50 > with_cache.ttft_later_ms.p50, (without.ttft_later_ms, with_cache.ttft_later_ms)
