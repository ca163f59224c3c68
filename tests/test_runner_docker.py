"""The runner on real topologies, against a real docker engine: a solo container, a two-node cluster with
one node reached over `docker -H ssh://`, two replicas behind the LiteLLM proxy, and faults across hosts."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import runner.refresh as refresh_module
from catalogue.commands.cli import main
from catalogue.models.loading import load_entry
from catalogue.site.pages import render_recipe
from catalogue.stats.run_differences import flag_items
from tests.docker_support import docker_env, free_port, free_ports, labelled_containers, live_sessions
from tests.needs import as_at_a_terminal

REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.docker, pytest.mark.server]


def example(tmp_path: Path, name: str, **sweep) -> tuple[Path, Path]:
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / name, root / name, ignore=shutil.ignore_patterns("runs"))
    if sweep:
        path = root / name / "recipe.yaml"
        data = yaml.safe_load(path.read_text())
        data["sweep"].update(sweep)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    return root, root / name


def assert_nothing_left(folder: Path, recipe_id: str) -> None:
    """No container with our label on the engine, no live process in any session the runner started."""
    assert labelled_containers(f"catalogue.recipe={recipe_id}") == []
    for sessions in (folder / "runs").glob("*/sessions.txt"):
        assert live_sessions(sessions) == {}, sessions.read_text()


def check_figures(folder: Path, run) -> None:
    """Every level's figures are the raw JSON's own numbers, and the page shows them."""
    for level in [*run.levels, *run.long_context, *run.rates]:
        raw = json.loads((folder / "runs" / level.raw[0]).read_text())
        assert level.generation_tps == raw["output_throughput"] and level.completed == raw["completed"] > 0
        assert level.failed == 0 and level.ttft_ms.p99 == raw["p99_ttft_ms"]
    # The open-loop level ran on this topology too, through the same client, with vLLM's goodput under the SLO.
    assert [(lv.offered_rps, lv.probe) for lv in run.rates if lv.probe is None] == [(4, None)]
    assert run.rates[0].goodput_rps is not None and run.rates[0].verdict is not None
    rate_command = next(c for c in run.provenance.bench_commands if "--request-rate" in c)
    assert rate_command[rate_command.index("--request-rate") + 1] == "4" and "ttft:1000" in rate_command


SECRET = "hf_CatalogueLeakProbe0123456789abcdefXYZ"
RUN_KEY_HEX = "feedc0de" * 4


def all_containers() -> list[str]:
    return subprocess.run(["docker", "ps", "-aq"], capture_output=True, text=True, check=True).stdout.split()


def takes_a_secret_by_name(folder: Path, monkeypatch) -> None:
    """The recipe takes HF_TOKEN from the owner's environment, which holds a secret; the run's API key is known."""
    path = folder / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    data["serving"]["env_from_host"] = ["HF_TOKEN"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    monkeypatch.setenv("HF_TOKEN", SECRET)
    monkeypatch.setattr(refresh_module.secrets, "token_hex", lambda _n=16: RUN_KEY_HEX)


def assert_no_secret_written(root: Path, tmp_path: Path, *texts: str) -> None:
    """Neither the secret nor the run's key in any file the refresh wrote, the printed output, or the built pages."""
    site = tmp_path / "exported"
    assert main(["--root", str(root), "export", str(site)]) == 0
    files = [p for p in [*root.rglob("*"), *site.rglob("*")] if p.is_file()]
    assert len(files) > 10
    for needle in (SECRET, f"sk-{RUN_KEY_HEX}"):
        assert [p for p in files if needle.encode() in p.read_bytes()] == [], needle
        assert all(needle not in text for text in texts), needle


def test_solo_container_with_the_client_inside_the_image(engine, tmp_path, capsys, monkeypatch):
    root, folder = example(tmp_path, "tiny-cpu-docker")
    takes_a_secret_by_name(folder, monkeypatch)
    args = ["--root", str(root), "refresh", "tiny-cpu-docker", "--port", str(free_port())]
    before = all_containers()
    # The recipe declares --cap-add IPC_LOCK: without the owner's consent nothing starts.
    assert main(args) == 1
    refusal = capsys.readouterr().err.strip().splitlines()
    assert refusal[0] == "refused by the run policy, nothing started:" and len(refusal) == 2
    assert refusal[1].startswith(f"{folder / 'recipe.yaml'}:") and refusal[1].endswith(
        "consent: --cap-add IPC_LOCK: adds a kernel capability beyond docker's default set; the owner has not "
        "allowed it (declared: Stands in for the RDMA set-up of two Sparks (NCCL pins memory and needs IPC_LOCK), "
        "to show consent end to end; run with --allow '--cap-add IPC_LOCK')"
    )
    assert all_containers() == before and not (folder / "runs").exists()  # `docker ps -a`: nothing created
    assert main([*args, "--dry-run", "--allow", "cap-add=IPC_LOCK"]) == 0
    dry = capsys.readouterr().out
    assert "a real run would refuse" not in dry and "-e HF_TOKEN local/vllm-cpu:0.32.0 vllm serve" in dry
    assert main([*args, "--allow", "--cap-add IPC_LOCK"]) == 0
    printed = capsys.readouterr()
    entry = load_entry(folder)
    run = entry.latest
    assert run.complete and [lv.concurrency for lv in run.levels] == [1, 2, 4]
    assert [(lv.concurrency, lv.prompt_tokens) for lv in run.long_context] == [(1, 256)]
    prov = run.provenance
    assert prov.image == "local/vllm-cpu:0.32.0" and prov.image_id.startswith("sha256:")
    assert prov.vllm_version == "0.32.0" and prov.client_vllm_version == "0.32.0" and "inside" in prov.client
    assert (
        prov.serve_command[:2] == ["docker", "run"]
        and "--label" in prov.serve_command
        and "-d" not in prov.serve_command
    )
    check_figures(folder, run)
    snapshot = json.loads((folder / "runs" / prov.flag_snapshot).read_text())  # taken inside the image
    assert snapshot["image"] == "local/vllm-cpu:0.32.0" and snapshot["vllm_version"] == "0.32.0"
    assert len(snapshot["options"]) > 300
    # The sampler ran in a throwaway container of the image, given no GPU (a CPU platform, on any host): "no GPU"
    # once, no figure made up.
    assert (folder / "runs" / run.stamp / "gpu-samples-local.jsonl").read_text() == '{"gpu": "no GPU"}\n'
    assert all(lv.machine and lv.machine.not_measured == "host local: no GPU" for lv in run.levels)
    # the probe is mounted beside the driver in the image: each level has the machine's calibration around it
    assert all(lv.calibration_ms and len(lv.calibration_ms) == 2 for lv in [*run.levels, *run.long_context])
    page = render_recipe(entry).markdown()
    assert "local/vllm-cpu:0.32.0" in page and "Measured by the catalogue runner" in page
    assert "Power not measured (host local: no GPU)" in page and "Energy (J)" not in page
    # The secret went to the container by name only; the cap was added with consent; the profile's part is there.
    words = list(zip(prov.serve_command, prov.serve_command[1:]))
    assert ("-e", "HF_TOKEN") in words and ("--cap-add", "IPC_LOCK") in words and ("--shm-size", "1g") in words
    assert any(line.startswith("host local: docker engine ") for line in prov.preflight)
    assert_no_secret_written(root, tmp_path, dry, printed.out, printed.err, page)
    assert_nothing_left(folder, "tiny-cpu-docker")


def test_replicas_behind_the_litellm_router(ssh_host, tmp_path, capsys, monkeypatch):
    root, folder = example(tmp_path, "tiny-cpu-replicas")
    takes_a_secret_by_name(folder, monkeypatch)
    port = free_ports(2)  # the second replica takes the next port
    router = free_ports(1, avoid=(port, port + 1))
    assert (
        main(
            [
                "--root",
                str(root),
                "refresh",
                "tiny-cpu-replicas",
                "--hosts",
                f"local,{ssh_host}",
                "--port",
                str(port),
                "--router-port",
                str(router),
            ]
        )
        == 0
    )
    run = load_entry(folder).latest
    assert run.complete and [lv.concurrency for lv in run.levels] == [1, 2, 4]
    prov = run.provenance
    assert prov.topology == "replicas" and prov.router["router_settings"]["routing_strategy"] == "least-busy"
    assert [m["litellm_params"]["api_base"] for m in prov.router["model_list"]] == [
        f"http://127.0.0.1:{port}/v1",
        f"http://127.0.0.1:{port + 1}/v1",
    ]  # one address: the second replica takes the next port
    assert all(f"--base-url http://127.0.0.1:{router}" in " ".join(cmd) for cmd in prov.bench_commands)
    raw = folder / "runs" / run.stamp
    served = [(raw / f"server-replica-{i}.log").read_text().count("POST /v1/completions") for i in (1, 2)]
    assert sum(served) >= 8 * 3 and min(served) > 0, served  # every request went through the router, to both replicas
    check_figures(folder, run)
    printed = capsys.readouterr()
    assert_no_secret_written(root, tmp_path, printed.out, printed.err)  # the router's master key included
    assert_nothing_left(folder, "tiny-cpu-replicas")


def _wait_for(predicate, timeout_s: float, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"condition not met; refresh output:\n{proc.communicate()[0]}")
        time.sleep(0.2)


def _stopped(container: str, timeout_s: float = 10) -> bool:
    """Whether the container is gone or no longer running, within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = subprocess.run(
            ["docker", "inspect", "-f", "{{.State.Running}}", container], capture_output=True, text=True
        )
        if state.returncode != 0 or state.stdout.strip() == "false":
            return True
        time.sleep(0.2)
    return False


def test_cluster_across_two_hosts_a_worker_killed_mid_sweep_then_resumed_with_capacity(ssh_host, tmp_path):
    """A cluster of two hosts, one over ssh. The worker is killed inside c2: the run stops, c1 kept, nothing left.
    `--resume --capacity` then measures c2 and c4 and the capacity search on a second boot, in the same run file."""
    # Levels long enough for the kill to land inside c2 (some 10 s of it here), short enough not to spend minutes.
    # The search: its path through the client inside the image, not its precision: a 50 % bracket within a 35 s
    # budget, which ends it after its first probes (a 100 s budget ran four probes in 76 s of CI's serial phase; at the
    # example's 10 % bracket seven probes of the two-node server took 3 min). What the test reads holds for any count.
    open_loop = {"rates": [4], "min_window_s": 2, "min_requests": 8, "tolerance": 0.5, "search_budget_s": 35}
    root, folder = example(
        tmp_path, "tiny-cpu-cluster", prompts_per_level=48, prompts_per_stream=12, open_loop=open_loop
    )
    port = free_port()
    argv = ["--root", str(root), "refresh", "tiny-cpu-cluster", "--hosts", f"local,{ssh_host}", "--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "catalogue", *argv],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

    def first_level_done() -> bool:
        events = list((folder / "runs").glob("*/events.jsonl")) if (folder / "runs").exists() else []
        return bool(events) and '"name": "c1"' in events[0].read_text()

    _wait_for(first_level_done, 400, proc)
    killed = subprocess.run(["docker", "kill", "catalogue-tiny-cpu-cluster-1"], capture_output=True, text=True)
    if killed.returncode != 0 and not _stopped("catalogue-tiny-cpu-cluster-1", timeout_s=60):
        # dockerd sometimes answers "PID ... is zombie and can not be killed" or "did not receive an exit event"
        # for a process the kill did end; its recorded state catches up later
        events = next((folder / "runs").glob("*/events.jsonl")).read_text()
        pytest.fail(f"docker kill: {killed.stderr}\nevents:\n{events}\nrefresh:\n{proc.communicate(timeout=180)[0]}")
    out = proc.communicate(timeout=180)[0]
    assert proc.returncode == 1, out
    run = load_entry(folder).runs[-1]
    assert not run.complete and "worker (rank 1, headless) on host 127.0.0.1 exited" in run.incomplete_reason
    assert [lv.concurrency for lv in run.levels] == [1]
    assert_nothing_left(folder, "tiny-cpu-cluster")

    assert main([*argv, "--resume", "--capacity"]) == 0
    runs = load_entry(folder).runs
    assert len(runs) == 1 and runs[0].complete and [lv.concurrency for lv in runs[0].levels] == [1, 2, 4]
    run = runs[0]
    # The capacity search's probes went to the client inside the image (`docker run -i`), one line at a time.
    probes = [lv for lv in run.rates if lv.probe is not None]
    assert probes and run.capacity is not None and run.capacity.probes == len(probes)
    assert all((folder / "runs" / lv.raw[0]).exists() for lv in probes)
    prov = run.provenance
    assert prov.topology == "cluster" and [n.host for n in prov.nodes] == ["local", "127.0.0.1"]
    head, worker = (n.command for n in prov.nodes)
    assert head[:2] == ["docker", "run"] and worker[:3] == ["docker", "-H", ssh_host]
    for rank, command in enumerate((head, worker)):
        assert command[command.index("--node-rank") + 1] == str(rank) and command[command.index("--nnodes") + 1] == "2"
    assert "--headless" in worker and "--headless" not in head
    check_figures(folder, run)
    assert_nothing_left(folder, "tiny-cpu-cluster")


def test_ctrl_c_during_boot_removes_every_container(engine, tmp_path):
    root, folder = example(tmp_path, "tiny-cpu-docker")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "catalogue",
            "--root",
            str(root),
            "refresh",
            "tiny-cpu-docker",
            "--allow",
            "--cap-add IPC_LOCK",
            "--port",
            str(free_port()),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=as_at_a_terminal,
    )
    _wait_for(lambda: len(labelled_containers("catalogue.recipe=tiny-cpu-docker")) >= 2, 120, proc)  # server + client
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, out
    assert "interrupted" in out and not list((folder / "runs").glob("*.json"))  # nothing measured, nothing written
    assert_nothing_left(folder, "tiny-cpu-docker")


def test_ray_cluster_forms_across_hosts_then_vllm_cpu_refuses_ray(ssh_host, tmp_path, capsys):
    """The Ray path for real up to vLLM's own refusal: vLLM's CPU platform names no Ray device, so `vllm serve`
    exits with "does not support ray" once both Ray nodes have joined; the runner names that and leaves nothing."""
    docker_env.build_ray_image()
    root, folder = example(tmp_path, "tiny-cpu-cluster-ray")
    assert (
        main(
            [
                "--root",
                str(root),
                "refresh",
                "tiny-cpu-cluster-ray",
                "--hosts",
                f"local,{ssh_host}",
                "--port",
                str(free_port()),
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "vllm serve on the Ray head exited with code" in err and "does not support ray" in err
    raw = next((folder / "runs").iterdir())
    # `vllm serve` starts only after `ray status` on the head counted both nodes
    assert (raw / "server-vllm-serve.log").exists() and "Ray" in (raw / "server-head-ray-head.log").read_text()
    assert not list((folder / "runs").glob("*.json"))  # no level finished, no run file
    assert_nothing_left(folder, "tiny-cpu-cluster-ray")


def test_a_committed_run_reproduces_then_a_slower_flag_is_caught_as_a_regression(engine, tmp_path, capsys):
    """`catalogue reproduce --refresh` of the committed tiny docker run: the runner's own path, pinned to the image
    it ran, the same workload and flags. Then a refresh with `max-num-seqs: 1` at c=4 is a real regression: the
    report names the level, the figure and the changed flag, --fail-on-regression exits 3, the page marks it.
    (Five no-change refreshes in a row are measured by `nox -s bench -- nochange`, not asserted here: on two shared
    CPU cores the machine's speed moves within minutes; see the methodology's regression check.)"""
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker")
    folder = root / "tiny-cpu-docker"
    committed = load_entry(folder).latest
    allow = ["--allow", "--cap-add IPC_LOCK"]
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker", committed.stamp, "--refresh", *allow]) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith(f"tiny-cpu-docker run {committed.stamp} (vLLM 0.32.0, measured ")
    again = load_entry(folder).latest
    assert again.stamp != committed.stamp and again.complete
    assert again.workload.key == committed.workload.key
    old, new = committed.provenance, again.provenance
    assert flag_items(new.serve_command[new.serve_command.index("serve") + 1 :]) == flag_items(
        old.serve_command[old.serve_command.index("serve") + 1 :]
    )
    # Built locally, the image is pinned by its id where this engine still has it; rebuilt elsewhere, by its tag.
    here = subprocess.run(["docker", "image", "inspect", old.hosts[0].image_id], capture_output=True).returncode == 0
    assert new.image == (old.hosts[0].image_id if here else old.image)
    assert new.hosts[0].model_revision == old.hosts[0].model_revision  # the same model files

    path = folder / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    data["serving"]["flags"]["max-num-seqs"] = 1
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    table = tmp_path / "report-slow.md"
    refresh = ["--root", str(root), "refresh", "tiny-cpu-docker", *allow, "--fail-on-regression"]
    assert main([*refresh, "--report", str(table)]) == 3
    err = capsys.readouterr().err
    slow = load_entry(folder).latest
    report = err[err.index("regression check: ") :]
    # The baseline is the median of the committed run and its reproduction, named by the newest; or the reproduction
    # alone when the committed run was measured with this machine in another state (its CPU calibrations), said so.
    both = f"regression check: {slow.stamp} against the median of 2 earlier runs (newest {again.stamp}): "
    alone = f"regression check: {slow.stamp} against {again.stamp}: "
    assert report.startswith(both) or (report.startswith(alone) and f"left out: {committed.stamp}: " in report), report
    # One stream at a time where two or four were batched: some level with more than one stream slows beyond the
    # band (generation, or TTFT from the queue, on the engine's clock when its first tokens reached the client in
    # bursts). Which of c2 and c4 is confirmed depends on the machine's speed (a machine 1.5x faster than the one
    # that recorded the committed run flagged c2, with c4 outside the band but not confirmed); what holds on any
    # machine: a regression is reported, the changed flag is named, and c1, where one stream runs either way and
    # the flag changes nothing, is not flagged as regressed.
    regressed = re.findall(r"\n  regressed: c(\d+) ([^:]+): ", report)
    assert regressed, report
    assert re.match(rf"regression check: [^\n]*: {len(regressed)} regressed, ", report), report
    assert all(int(level) in (2, 4) for level, _ in regressed), report
    assert "flags: +--max-num-seqs 1" in report and "🔴 regressed" in table.read_text()
    page = render_recipe(load_entry(folder)).markdown()
    assert f"regressed: c{regressed[0][0]} " in page and "flags: +--max-num-seqs 1" in page
    assert_nothing_left(folder, "tiny-cpu-docker")
