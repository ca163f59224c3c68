"""What real hosts do, against a real docker engine: preflight refusals before anything starts (a missing image,
a missing interface, a host that does not answer, a server already on the port) and a host that stops answering
while the runner cleans up."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.models.loading import load_entry
from tests.docker_support import free_port, labelled_containers, live_sessions, start_sshd

REPO = Path(__file__).resolve().parents[1]
IMAGE = "local/vllm-cpu:0.32.0"
pytestmark = [pytest.mark.docker]


def example(tmp_path: Path, name: str, **changes) -> tuple[Path, Path]:
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / name, root / name, ignore=shutil.ignore_patterns("runs"))
    path = root / name / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    for section, values in changes.items():
        data[section].update(values)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return root, root / name


def all_containers() -> list[str]:
    return subprocess.run(["docker", "ps", "-aq"], capture_output=True, text=True, check=True).stdout.split()


def refused(capsys) -> list[str]:
    """The preflight's lines after its heading."""
    lines = capsys.readouterr().err.strip().splitlines()
    assert "preflight failed, nothing started:" in lines, lines
    return lines[lines.index("preflight failed, nothing started:") + 1 :]


def test_a_missing_image_is_one_line_and_no_container_is_created(engine, tmp_path, capsys):
    root, folder = example(tmp_path, "tiny-cpu-docker", serving={"image": "local/no-such-image:1"})
    before = all_containers()
    args = ["--allow", "--cap-add IPC_LOCK", "--port", str(free_port())]
    assert main(["--root", str(root), "refresh", "tiny-cpu-docker", *args]) == 1
    assert refused(capsys) == [  # a local/ image is trusted as built on the host: never pulled from docker.io/local/
        "host local: image local/no-such-image:1 is not there, and an image of docker.io/local/ is never pulled (the "
        "trust list trusts it as built on the host); build it there (see the recipe's image_source)"
    ]
    assert all_containers() == before and not (folder / "runs").exists()


def test_a_missing_interface_is_named_on_its_host(ssh_host, tmp_path, capsys):
    root, folder = example(tmp_path, "tiny-cpu-cluster")
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(
        "hosts:\n  head: {docker: local, address: 127.0.0.1, interface: nosuch0}\n"
        f"  worker: {{docker: '{ssh_host}', address: 127.0.0.1, interface: lo}}\n"
    )
    before = all_containers()
    args = ["--hosts", "head,worker", "--hosts-file", str(hosts), "--port", str(free_port())]
    assert main(["--root", str(root), "refresh", "tiny-cpu-cluster", *args]) == 1
    (line,) = refused(capsys)
    assert (line.startswith("host head: no interface nosuch0 (it has ") and " lo" in line) or "(it has lo" in line
    assert line.endswith("); set hosts.head.interface in hosts.yaml to the link between the machines")
    assert all_containers() == before and not (folder / "runs").exists()


def test_a_host_that_does_not_answer_is_named(engine, tmp_path, capsys):
    root, folder = example(tmp_path, "tiny-cpu-replicas")
    dead = f"ssh://root@127.0.0.1:{free_port()}"  # nothing listens there
    before = all_containers()
    args = ["--hosts", f"local,{dead}", "--port", str(free_port()), "--router-port", str(free_port())]
    assert main(["--root", str(root), "refresh", "tiny-cpu-replicas", *args]) == 1
    (line,) = refused(capsys)
    assert line.startswith(f"host 127.0.0.1: docker does not answer ({dead}): ")
    assert line.endswith("; check `ssh` to it and that docker runs there")
    assert all_containers() == before and not (folder / "runs").exists()


def test_a_docker_server_already_on_the_port_is_named_with_its_container(engine, tmp_path, capsys):
    root, folder = example(tmp_path, "tiny-cpu-docker")
    port = free_port()
    name = f"squatter-{port}"
    subprocess.run(
        [
            *("docker", "run", "-d", "--rm", "--name", name, "--network", "host", "--entrypoint", "python3", IMAGE),
            *("-m", "http.server", str(port), "--bind", "127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        before = all_containers()
        assert (
            main(
                ["--root", str(root), "refresh", "tiny-cpu-docker", "--allow", "cap-add=IPC_LOCK", "--port", str(port)]
            )
            == 1
        )
        assert refused(capsys) == [
            f"127.0.0.1:{port} already answers (something that is not a vLLM server; docker container {name} on "
            "host local): stop it, or give the refresh another --port"
        ]
        assert all_containers() == before and not (folder / "runs").exists()
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)


@pytest.mark.server
def test_a_host_that_stops_answering_during_cleanup_still_leaves_the_run_file(engine, tmp_path):
    """The worker's engine (reached over ssh) freezes mid-run: the sweep finishes on the head, cleanup gives up on
    that host after its timeout, names it with the command that cleans it, and the run file is written."""
    # Two closed-loop levels, no rate and no quality check: the freeze lands after c1, c2 still runs on the head, and
    # nothing after it but the clean-up this test is about (c4, r4 and the accuracy check added some 40 s to CI).
    quiet = {"enabled": False, "reason": "this test is about clean-up"}
    sweep = {"min_level_s": 6, "concurrency": [1, 2], "open_loop": {"rates": []}, "quality": quiet}
    root, folder = example(tmp_path, "tiny-cpu-cluster", sweep=sweep)
    gen = start_sshd(tmp_path / "sshd")
    host = next(gen)
    sshd = psutil.Process(int((tmp_path / "sshd" / "sshd.pid").read_text()))
    env = {**os.environ, "PATH": f"{host.bin_dir}:{os.environ['PATH']}", "CATALOGUE_CLEANUP_TIMEOUT_S": "15"}
    args = ["--hosts", f"local,{host.url}", "--port", str(free_port())]
    proc = subprocess.Popen(
        [sys.executable, "-m", "catalogue", "--root", str(root), "refresh", "tiny-cpu-cluster", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    frozen: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline and proc.poll() is None:
            events = list(folder.glob("runs/*/events.jsonl"))
            if events and '"name": "c1"' in events[0].read_text():
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[0]
        frozen = [sshd, *sshd.children(recursive=True)]
        for process in frozen:
            process.send_signal(signal.SIGSTOP)
        out = proc.communicate(timeout=600)[0]
    finally:
        for process in frozen:
            try:
                process.send_signal(signal.SIGCONT)
            except psutil.Error:
                pass
        gen.close()
    assert proc.returncode == 1, out
    run = load_entry(folder).runs[-1]
    assert [lv.concurrency for lv in run.levels] == [1, 2] and run.complete, out
    docker = f"docker -H {host.url}"
    assert (
        f"left unclean: host 127.0.0.1 (docker ps did not answer within 15 s): clean it with "
        f"`{docker} rm -f $({docker} ps -aq --filter label=catalogue.run={run.stamp})`"
    ) in out
    assert any(note.startswith("left unclean: host 127.0.0.1 (docker ps did not answer") for note in run.notes)
    # Both hosts are this machine's engine: the local clean-up removed every container of the run.
    assert labelled_containers("catalogue.recipe=tiny-cpu-cluster") == []
    assert live_sessions(folder / "runs" / run.stamp / "sessions.txt") == {}


def test_the_facts_an_image_prints_are_read_within_the_limits_and_only_as_text():
    # facts.py runs as the image's python3: its last line was json.loads'd, so deep JSON was a RecursionError and a
    # list a .get() AttributeError, each a traceback from preflight.
    from runner.machine.preflight import printed_facts

    assert printed_facts('banner\n{"cpu": "x86", "gpu": 5, "interfaces": ["eth0"]}\n') == {
        "cpu": "x86",
        "interfaces": ["eth0"],
    }
    for stdout in ["[" * 3000 + "]" * 3000, '["cpu"]', "", "{not json"]:
        assert printed_facts(stdout) is None, stdout
    assert printed_facts('{"cpu": 1e999, "vllm_version": {"a": 1}}') == {}  # a value not text is left out
