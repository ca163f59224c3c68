"""The real refresh path on the simulator: `catalogue refresh --capacity` of examples/sim-tiny with vLLM's own
benchmark client, judged against the truth computed apart from the run. One refresh for the module (about two
minutes); the 20-search figures are `nox -s bench -- truth`'s."""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import sys

import pytest

from catalogue.models.loading import load_entry
from simulator.profile import load_profile
from simulator.server import lateness_line
from simulator.truth import Scheduler, capacity, simulate
from tests.site_support import REPO

pytestmark = [pytest.mark.vllm, pytest.mark.simulator]


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    root = tmp_path_factory.mktemp("sim") / "examples"
    shutil.copytree(REPO / "examples" / "sim-tiny", root / "sim-tiny", ignore=shutil.ignore_patterns("runs"))
    shutil.copytree(REPO / "examples" / "tiny-cpu" / "model", root / "tiny-cpu" / "model")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [sys.executable, "-m", "catalogue", "--root", str(root), "refresh", "sim-tiny", "--capacity"]
    seeds = ["--seed-base", str(SEED_STEP * random.randrange(1, 10_000))]
    done = subprocess.run(
        [*argv, "--port", str(port), "--allow", "no container", *seeds],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    entry = load_entry(root / "sim-tiny")
    assert entry.latest is not None
    log = root / "sim-tiny" / "runs" / entry.latest.stamp / "server.log"
    return entry, f"{' '.join(seeds)}; {lateness_line(log)}"


SEED_STEP = 100_000
"""The client's seeds move by a multiple of this each run (`refresh --seed-base`, as the truth bench's searches do).
With the default seeds, probe 3's Poisson arrivals hold a burst that queues a dozen requests, and four end-to-end
searches in six settled 17.85 req/s as a miss on it (16.2 req/s, 0.64 of the truth): one arrival sequence, not a
sample of the search. Over 80 searches in virtual time, each with its own arrivals, 79 landed within 25 % (the lowest
at 0.69, the highest 1.19: the search's own spread, `nox -s bench -- truth`)."""


def test_the_run_is_marked_simulated(refreshed):
    refreshed, _ = refreshed
    run = refreshed.latest
    assert run is not None and run.from_simulator and run.workload is not None and run.workload.simulator == "ci"
    assert refreshed.simulated


def test_closed_loop_levels_agree_with_the_truth(refreshed):
    """The engine's own clock (its /metrics histograms) against the model in virtual time: mean TPOT within 15 %."""
    refreshed, _ = refreshed
    recipe = refreshed.recipe
    profile = load_profile("ci")
    scheduler = Scheduler.of(profile, dict(recipe.serving.flags))
    run = refreshed.latest
    assert run is not None
    for level in run.levels:
        truth = simulate(
            profile, scheduler, prompts=400, input_len=32, output_len=16, concurrency=level.concurrency, seed=2
        )
        assert level.engine is not None and level.engine.tpot_ms is not None
        assert level.engine.tpot_ms == pytest.approx(truth.mean("tpot"), rel=0.15), level.concurrency


def test_one_capacity_search_lands_near_the_true_capacity(refreshed):
    """One search, with arrivals of its own, within 25 % of the truth."""
    refreshed, context = refreshed
    recipe = refreshed.recipe
    assert recipe.sweep.slo is not None
    profile = load_profile("ci")
    truth = capacity(
        profile,
        Scheduler.of(profile, dict(recipe.serving.flags)),
        limits=recipe.sweep.slo.limits,
        percentile=recipe.sweep.slo.percentile,
        input_len=32,
        output_len=16,
        window_s=300,
    )
    run = refreshed.latest
    assert run is not None and run.capacity is not None and run.capacity.rps is not None
    assert run.capacity.rps == pytest.approx(truth, rel=0.25), context
