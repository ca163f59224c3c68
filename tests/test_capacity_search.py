"""runner.measuring.capacity_search's loop on its own: the probes it hands the client, its time budget, a resumed search
and an outright failure. The client is replaced by a queue model here; tests/test_capacity_runner.py runs the real
one."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from catalogue.models.benchmark import LevelResult, RateLevel, Stats
from catalogue.models.loading import load_entry
from runner.measuring.capacity_search import by_rate, search
from runner.planning.jobs import Job, rate_job, shift_seeds
from runner.planning.plan import make_plan
from runner.state import Progress
from tests.test_capacity import queue_model

REPO = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class ModelClient:
    """Stands in for the waiting benchmark client: each probe 'lasts' its window on the clock."""

    def __init__(self, progress: Progress, clock: Clock, capacity: float, fail_at: float | None = None) -> None:
        self.progress, self.clock, self.measure, self.fail_at = progress, clock, queue_model(capacity), fail_at
        self.failures: dict[str, str] = {}
        self.sent: list[Job] = []
        self.ended = False

    def one(self, job: Job) -> None:
        assert job.rate is not None and job.probe is not None
        self.sent.append(job)
        self.progress.probe_jobs[job.name] = job
        requests = int(job.argv[job.argv.index("--num-prompts") + 1])
        window = requests / job.rate
        self.clock.now += window + 0.1
        if self.fail_at is not None and job.rate >= self.fail_at:
            self.failures[job.name] = "ConnectionError: refused"
            return
        level = self.measure(job.rate).model_copy(update={"probe": job.probe, "duration_s": window})
        self.progress.rates[job.name] = level

    def end(self) -> None:
        self.ended = True


def setup(tmp_path: Path, **open_loop):
    root = tmp_path / "examples"
    for name in ("tiny-cpu", "tiny-cpu-capacity"):
        shutil.copytree(REPO / "examples" / name, root / name, ignore=shutil.ignore_patterns("runs"))
    folder = root / "tiny-cpu-capacity"
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["sweep"]["slo"] = {"percentile": 95, "ttft": 2000, "tpot": 100}
    data["sweep"]["open_loop"] = {"rates": [], "min_window_s": 30, "min_requests": 10, **open_loop}
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    entry = load_entry(folder)
    plan = make_plan(entry, local=True, capacity=True, stamp="20261123T000000Z")
    progress = Progress()
    closed = LevelResult(
        concurrency=8, completed=80, duration_s=20, ttft_ms=Stats(p95=900), tpot_ms=Stats(p95=50), e2e_ms=Stats(mean=1)
    )
    progress.levels = {"c8": closed}  # 4 req/s within the SLO: the first guess is 3.2 req/s
    return entry, plan, progress


def test_probes_go_through_the_template_until_the_bracket_closes(tmp_path):
    entry, plan, progress = setup(tmp_path)
    clock = Clock()
    client = ModelClient(progress, clock, capacity=3.1)
    found = search(plan, entry.recipe, client, progress, clock)  # type: ignore[arg-type]
    assert client.ended and found.converged and found.rps is not None and found.upper_rps is not None
    assert found.rps <= 3.1 < found.upper_rps and found.probes == len(client.sent) <= 4
    assert [job.name for job in client.sent] == [f"probe{i}" for i in range(1, len(client.sent) + 1)]
    first = client.sent[0]
    assert first.rate == 3.2 and first.argv[first.argv.index("--request-rate") + 1] == "3.2"
    assert first.argv[first.argv.index("--result-filename") + 1] == "probe1.json"
    assert first.argv[first.argv.index("--num-prompts") + 1] == "96"  # 3.2 req/s x 30 s
    template = plan.probe_template
    assert template is not None and template.parse_only
    # all else the same, but the probe's own seed (no probe replays a level's prompts)
    assert [w for w in first.argv if w not in template.argv] == ["96", "3.2", "probe1.json", "10001"]
    assert any(note.startswith("capacity search: ") for note in progress.notes)


def test_the_time_budget_stops_the_search_and_says_so(tmp_path):
    """The first probe lasts its 30 s window; the model's requests take 3 s, so each next one lasts 30 of them."""
    entry, plan, progress = setup(tmp_path, search_budget_s=200)
    clock = Clock()
    client = ModelClient(progress, clock, capacity=3.1)
    found = search(plan, entry.recipe, client, progress, clock)  # type: ignore[arg-type]
    assert len(client.sent) == 2 and not found.converged
    second = client.sent[1]
    assert second.rate is not None
    assert int(second.argv[second.argv.index("--num-prompts") + 1]) == math.ceil(second.rate * 90)
    assert found.stopped is not None and found.stopped.startswith("the search's time budget (200 s) would run out")
    assert clock.now <= 200


def test_a_saturated_probe_does_not_size_the_next(tmp_path):
    """Where the server did not keep up, its queue grows for as long as the probe sends, so the probe's mean latency
    measures its own length: here a saturated probe's requests take 60 s, and the next probe is sized from the one
    before it (3 s)."""
    entry, plan, progress = setup(tmp_path)
    measure = queue_model(3.1)
    met = measure(2.5).model_copy(update={"probe": 1})
    saturated = measure(5.0).model_copy(update={"probe": 2, "e2e_ms": Stats(mean=60_000)})
    progress.rates = {"probe1": met, "probe2": saturated}
    clock = Clock()
    client = ModelClient(progress, clock, capacity=3.1)
    search(plan, entry.recipe, client, progress, clock)  # type: ignore[arg-type]
    first = client.sent[0]
    assert first.rate is not None and 2.5 < first.rate < 5.0
    assert int(first.argv[first.argv.index("--num-prompts") + 1]) == math.ceil(first.rate * 90)  # 30 x 3 s


def test_a_resumed_probe_with_an_absurd_latency_stops_on_the_budget(tmp_path):
    """A run file is untrusted: a resumed probe claiming 1e308 ms requests (finite, so the file loads) is no longer
    an OverflowError mid-search; the next probe is sized at the most a probe sends, and the budget stops the search."""
    entry, plan, progress = setup(tmp_path, search_budget_s=300)
    with pytest.raises(ValidationError):
        Stats(
            mean=1e308
        )  # a run file can no longer hold it (catalogue.models.plausible); the search guards itself still
    absurd = queue_model(3.1)(2.5).model_copy(update={"probe": 1, "e2e_ms": Stats.model_construct(mean=1e308)})
    progress.rates = {"probe1": absurd}
    clock = Clock()
    client = ModelClient(progress, clock, capacity=3.1)
    found = search(plan, entry.recipe, client, progress, clock)  # type: ignore[arg-type]
    assert client.sent == [] and found.rps == 2.5
    assert found.stopped is not None and found.stopped.startswith("the search's time budget (300 s) would run out")


def test_a_resumed_search_goes_on_counting(tmp_path):
    entry, plan, progress = setup(tmp_path)
    measure = queue_model(3.1)
    progress.rates = {"probe1": measure(3.2).model_copy(update={"probe": 1})}  # kept by the run that stopped
    clock = Clock()
    client = ModelClient(progress, clock, capacity=3.1)
    found = search(plan, entry.recipe, client, progress, clock)  # type: ignore[arg-type]
    assert client.sent[0].name == "probe2" and client.sent[0].rate != 3.2
    assert found.converged and found.probes == 1 + len(client.sent)


def test_a_probe_the_client_cannot_run_ends_the_search(tmp_path):
    entry, plan, progress = setup(tmp_path)
    clock = Clock()
    client = ModelClient(progress, clock, capacity=30, fail_at=5)
    found = search(plan, entry.recipe, client, progress, clock)  # type: ignore[arg-type]
    assert found.stopped is not None and "failed outright (ConnectionError: refused)" in found.stopped
    # The rates by hand. The closed loop's c8 ran 80 requests in 20 s within the SLO: 4 req/s, so the first probe
    # is 0.8 x 4 = 3.2 req/s. The model (capacity 30) meets there with TPOT 50 ms, half its 100 ms limit (margin
    # 0.5; p95 TTFT 503 ms of 2,000 is further inside), so the next rate would be 3.2 / 0.5 = 6.4, held to 1.1 x
    # the closed loop's busiest rate while below it: 4.4. 4.4 meets with the same margin (the two margins show no
    # knee); above the closed loop's rate the step is 4.4 / 0.5 = 8.8, within the cap of twice the rate met. The
    # client refuses every rate from 5 req/s on: 8.8 fails outright.
    closed_rps = 80 / 20
    first = 0.8 * closed_rps
    second = min(first / 0.5, 1.1 * closed_rps)
    third = min(second / 0.5, 2 * second)
    assert (first, second, third) == (3.2, pytest.approx(4.4), 8.8)
    assert [job.rate for job in client.sent] == [first, pytest.approx(second), pytest.approx(third)]
    assert found.rps == pytest.approx(second) and found.upper_rps == pytest.approx(third)  # what met still stands
    assert not found.converged


def test_a_capacity_whose_limit_the_light_rates_nearly_reached_gets_a_note(tmp_path, capsys):
    """The model's TPOT is 50 ms at every rate: against a 60 ms limit (83 % of it at any load), the capacity that
    TTFT sets carries the caution in the run's notes and on the terminal; against 100 ms (50 %), none. The light
    load is a planned rate of 1 req/s measured before the search, or a probe at half the capacity or less."""
    entry, plan, progress = setup(tmp_path)
    entry.recipe.sweep.slo.__dict__.update(tpot=60.0)
    progress.rates["r1"] = queue_model(3.1)(1.0)
    clock = Clock()
    found = search(plan, entry.recipe, ModelClient(progress, clock, capacity=3.1), progress, clock)  # type: ignore[arg-type]
    assert found.rps is not None and found.rps >= 2
    (note,) = [n for n in progress.notes if n.startswith("capacity flat: ")]
    assert note.startswith("capacity flat: At ") and "capacity, p95 TPOT was already 50 ms, 83 % of its 60 ms" in note
    assert "p95 TPOT was already 50 ms" in capsys.readouterr().err
    entry, plan, progress = setup(tmp_path / "room")
    progress.rates["r1"] = queue_model(3.1)(1.0)
    search(plan, entry.recipe, ModelClient(progress, clock, capacity=3.1), progress, clock)  # type: ignore[arg-type]
    assert not [n for n in progress.notes if n.startswith("capacity flat")]


def test_a_probe_is_sent_at_its_exact_rate_so_it_pools_with_the_rate_it_measures_again(tmp_path):
    """A resumed run file's rate of seven significant digits (or the search's own interpolated 1/3) is sent as it
    is: vLLM's client records the rate it read, and the re-measured probe pools with the earlier one."""
    _entry, plan, _progress = setup(tmp_path)
    assert plan.probe_template is not None
    for rate in (3.14159265, 1 / 3, 4.0, 2.5):
        job = rate_job(plan.probe_template, "probe2", rate, 10, probe=2)
        sent = job.argv[job.argv.index("--request-rate") + 1]
        earlier, again = RateLevel(offered_rps=rate, probe=1), RateLevel(offered_rps=float(sent), probe=2)
        assert list(by_rate([earlier, again]).values()) == [[earlier, again]], sent
    whole = rate_job(plan.probe_template, "p", 4.0, 10).argv
    assert whole[whole.index("--request-rate") + 1] == "4"  # a whole rate reads as before


def test_a_seed_base_moves_every_client_seed_of_the_refresh(tmp_path):
    """`refresh --seed-base N`: the levels' seeds (1, 2, ... in plan order) and each probe's (10,000 + its number)
    move by N, so repeated refreshes can send their own arrivals; 0 leaves them as every refresh sends them."""
    _, plan, _ = setup(tmp_path)
    seeds = [job.argv[job.argv.index("--seed") + 1] for job in plan.jobs]
    moved = [job.argv[job.argv.index("--seed") + 1] for job in shift_seeds(plan.jobs, 500)]
    assert [int(m) - int(s) for s, m in zip(seeds, moved, strict=True)] == [500] * len(seeds)
    assert shift_seeds(plan.jobs, 0) == plan.jobs
    template = plan.probe_template
    assert template is not None
    probe = rate_job(template, "probe3", 2.5, 40, probe=3, seed_base=500)
    assert probe.argv[probe.argv.index("--seed") + 1] == "10503"
    assert rate_job(template, "probe3", 2.5, 40, probe=3).argv[probe.argv.index("--seed") + 1] == "10003"
