"""benchmarks.truth_virtual: the runner's capacity search against the simulator's truth in virtual time (sim-tiny,
profile ci, true capacity 25.28 req/s). The statistics alone, with no machine in between: what the end-to-end truth
bench cannot do better than."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from benchmarks.truth_virtual import bench_raw, grid_wall, one_search, regression_virtual
from catalogue.models.loading import load_entry
from simulator.profile import load_profile
from simulator.truth import Scheduler
from tests.site_support import REPO

TRUTH = 25.28  # simulator.truth.capacity for sim-tiny (benchmarks/truth.py prints it; 13 s to compute)


@pytest.fixture(scope="module")
def entry(tmp_path_factory):
    root = tmp_path_factory.mktemp("truth") / "examples"
    shutil.copytree(REPO / "examples" / "sim-tiny", root / "sim-tiny", ignore=shutil.ignore_patterns("runs"))
    shutil.copytree(REPO / "examples" / "tiny-cpu" / "model", root / "tiny-cpu" / "model")
    return load_entry(root / "sim-tiny")


def test_a_probe_is_written_as_the_client_writes_it():
    """An open-loop probe: Poisson sends from 0, one sample per request, the summary's fields beside them."""
    raw = bench_raw(load_profile("ci"), Scheduler(8, 2048), 200, (32, 16), seed=3, rate=20.0)
    assert raw["completed"] == 200 and raw["start_times"][0] == 0.0
    assert 200 / raw["start_times"][-1] == pytest.approx(20.0, rel=0.2)
    assert all(len(itl) == 15 for itl in raw["itls"]) and raw["p95_ttft_ms"] >= raw["p50_ttft_ms"]


def test_twenty_searches_against_the_truth(entry):
    """Measured: 16 of 20 within 10 % of the truth and 18 of 20 decided intervals holding it (17 before a rate's
    probes counted at most at the share their scatter allows, 11 before a probe with no request over the limit
    stopped counting as independent requests); the grid of eight rates at the search's confidence costs more than
    the search."""
    profile = load_profile("ci")
    found = [one_search(entry, profile, seed) for seed in range(1, 21)]
    within = [f for f, _ in found if f.rps is not None and abs(f.rps / TRUTH - 1) <= 0.10]
    decided = [f.decided_rps or (None, None) for f, _ in found]
    holds = [d for d in decided if (d[0] or 0) <= TRUTH <= (d[1] or float("inf")) and (d[0] or d[1])]
    assert len(within) >= 16 and len(holds) >= 18, ([f.rps for f, _ in found], decided)
    grid_s, _ = grid_wall(entry, profile, [round(TRUTH / 1.1**4 * 1.1**i, 3) for i in range(8)], seed=1)
    assert sum(wall for _, wall in found) / len(found) < grid_s


def test_the_alarm_in_virtual_time(entry):
    """The end-to-end bench's regression part (levels 1, 8, 32, 64 at 64 sequences, 16 requests a stream): five
    no-change sweeps raise nothing; every decode step 10 % slower is seen at every level (c64 by its ITL: its
    throughput falls only about 7 %, one prefill step a round not being slowed); slower only above 32 sequences, at
    c64 alone."""
    flags = {**entry.recipe.serving.flags, "max-num-seqs": 64}
    recipe = entry.recipe.model_copy(
        update={
            "sweep": entry.recipe.sweep.model_copy(update={"concurrency": [1, 8, 32, 64], "prompts_per_stream": 16}),
            "serving": entry.recipe.serving.model_copy(update={"flags": flags}),
        }
    )
    nochange, everywhere, above = regression_virtual(replace(entry, recipe=recipe), load_profile("ci"), 5)
    assert nochange == [[]] * 5
    assert {item.split()[0] for item in everywhere} == {"c1", "c8", "c32", "c64"} and "c64 ITL mean" in everywhere
    assert {item.split()[0] for item in above} == {"c64"}
