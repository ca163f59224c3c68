"""The gates on the hosts' state, on the real engine: the passport is read by a throwaway container of the
recipe's image, and a failed gate refuses in one line with nothing started (`docker ps -a` unchanged)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

import catalogue.models.loading
from catalogue.commands.cli import main
from catalogue.models.loading import load_entry
from catalogue.models.platform import PLATFORMS_DIR, load_platform
from catalogue.site.pages import render_recipe
from tests.docker_support import free_port, labelled_containers

REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.docker, pytest.mark.server]
LABEL = "catalogue.test=state-gate"
ARGS = ["refresh", "tiny-cpu-docker", "--allow", "--cap-add IPC_LOCK"]


def all_containers() -> list[str]:
    return sorted(subprocess.run(["docker", "ps", "-aq"], capture_output=True, text=True, check=True).stdout.split())


def shorter(path: Path) -> None:
    """One closed-loop level only: the allowed run is about the passport, not the sweep."""
    data = yaml.safe_load(path.read_text())
    data["sweep"] = {k: v for k, v in data["sweep"].items() if k not in ("long_context", "open_loop", "slo")}
    data["sweep"]["concurrency"] = [1]
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def running_names() -> set[str]:
    out = subprocess.run(["docker", "ps", "--format", "{{.Names}}"], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """The docker example, and a cpu profile with test thresholds that every recipe of it loads."""
    root = tmp_path / "examples"
    shutil.copytree(
        REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker", ignore=shutil.ignore_patterns("runs")
    )
    profiles = tmp_path / "platforms"
    profiles.mkdir()

    def gates(**values) -> None:
        data = yaml.safe_load((PLATFORMS_DIR / "cpu.yaml").read_text())
        data["gates"] = {**data["gates"], **values}
        (profiles / "cpu.yaml").write_text(yaml.safe_dump(data))

    monkeypatch.setattr(catalogue.models.loading, "load_platform", lambda name: load_platform(name, profiles))
    return root, gates


def refused(capsys) -> list[str]:
    err = capsys.readouterr().err.strip().splitlines()
    at = err.index("refused by the state of the host, nothing started:")
    return err[at + 1 :]


def test_another_container_holding_memory_refuses_then_allow_state_is_named(engine, setup, capsys):
    root, gates = setup
    gates(max_other_container_gib=0.1)
    hog = subprocess.run(
        [
            "docker",
            "run",
            "-d",
            "--rm",
            "--label",
            LABEL,
            "--network",
            "none",
            "--entrypoint",
            "python3",
            "local/debian-py:bookworm",
            "-c",
            "import time; b = b'x' * (300 * 2**20); time.sleep(300)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        name = subprocess.run(["docker", "inspect", "-f", "{{.Name}}", hog], capture_output=True, text=True).stdout
        deadline = time.monotonic() + 30  # until docker stats sees the 300 MiB
        while time.monotonic() < deadline:
            usage = subprocess.run(
                ["docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", hog], capture_output=True, text=True
            ).stdout
            if "MiB" in usage.split("/")[0] and float(usage.split("MiB")[0]) > 250:
                break
            time.sleep(0.5)
        before = all_containers()
        assert main(["--root", str(root), *ARGS, "--port", str(free_port())]) == 1
        lines = refused(capsys)
        hog_name = name.strip().lstrip("/")
        [line] = [x for x in lines if f"container {hog_name} " in x]
        assert line.startswith(f"host local: container {hog_name} holds 0.")
        assert line.endswith(
            "over the 0.1 GiB another container may hold; stop it (platforms/cpu.yaml gates; "
            "--allow-state containers to measure anyway)"
        )
        # The engine is shared: any other line names another running container, one line each.
        running = running_names()
        others = [x.split("container ", 1)[1].split(" ")[0] for x in lines if x != line]
        assert all(o in running for o in others) and len(set(others)) == len(others)
        assert all_containers() == before and not (root / "tiny-cpu-docker" / "runs").exists()
        assert main(["--root", str(root), *ARGS, "--allow-state", "contaners"]) == 1  # a misspelt gate
        assert "--allow-state contaners: no such gate" in capsys.readouterr().err
        # With the owner's --allow-state the run goes ahead, and the run and its page say what was overridden.
        shorter(root / "tiny-cpu-docker" / "recipe.yaml")
        port = str(free_port())
        assert main(["--root", str(root), *ARGS, "--allow-state", "containers", "--port", port]) == 0
        assert f"warning (--allow-state): {line}" in capsys.readouterr().err
        entry = load_entry(root / "tiny-cpu-docker")
        prov = entry.latest.provenance
        assert line in prov.allowed_state
        passport = prov.hosts[0].passport
        held = {c.name: c.memory_mib for c in passport.before.containers}
        assert held[hog_name] > 250 and passport.after is not None and passport.after.read_at > passport.before.read_at
        assert passport.before.gpu == "no GPU" and passport.before.mem_available_mib > 1024
        page = render_recipe(entry).markdown()
        assert "measured despite a failed gate" in page and f"container {hog_name} holds" in page
        assert labelled_containers("catalogue.recipe=tiny-cpu-docker") == []
    finally:
        subprocess.run(["docker", "rm", "-f", hog], capture_output=True)


@pytest.fixture
def veth():
    """A veth pair in the host's namespace: the kernel reports its speed (10000 Mb/s) once it is up."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("creating a veth pair needs root and iproute2")
    subprocess.run(["ip", "link", "add", "cgate0", "type", "veth", "peer", "name", "cgate1"], check=True)
    try:
        for name in ("cgate0", "cgate1"):
            subprocess.run(["ip", "link", "set", name, "up"], check=True)
        yield "cgate0"
    finally:
        subprocess.run(["ip", "link", "del", "cgate0"], check=False)


def hosts_file(tmp_path: Path, interface: str) -> list[str]:
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": {"box": {"docker": "local", "interface": interface}}}))
    return ["--hosts", "box", "--hosts-file", str(path)]


def test_an_interface_slower_than_the_profile_expects_refuses(engine, setup, veth, tmp_path, capsys):
    root, gates = setup
    gates(link_speed_mbps=100000, max_other_container_gib=1000)  # the engine is shared: this gate alone
    speed = int(Path(f"/sys/class/net/{veth}/speed").read_text())
    before = all_containers()
    assert main(["--root", str(root), *ARGS, *hosts_file(tmp_path, veth), "--port", str(free_port())]) == 1
    assert refused(capsys) == [
        f"host box: interface {veth} negotiated {speed} Mb/s, the platform expects 100000 Mb/s; reseat the cable or "
        "check the port's setting (platforms/cpu.yaml gates; --allow-state link to measure anyway)"
    ]
    assert all_containers() == before and not (root / "tiny-cpu-docker" / "runs").exists()


def test_a_missing_interface_refuses(engine, setup, tmp_path, capsys):
    root, gates = setup
    gates(max_other_container_gib=1000)
    before = all_containers()
    assert main(["--root", str(root), *ARGS, *hosts_file(tmp_path, "nosuch0"), "--port", str(free_port())]) == 1
    assert refused(capsys) == [
        "host box: no interface nosuch0; set hosts.<name>.interface in hosts.yaml to the link between the machines "
        "(platforms/cpu.yaml gates; --allow-state link to measure anyway)"
    ]
    assert all_containers() == before and not (root / "tiny-cpu-docker" / "runs").exists()
