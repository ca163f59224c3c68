"""`refresh --dry-run`: every command per host, for every topology; nothing starts, nothing is written."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.models.launch import split_command
from runner.planning.plan_data import recipe_cache_name

REPO = Path(__file__).resolve().parents[1]


def dry_run(capsys, recipe_id: str, *extra: str) -> str:
    assert main(["--root", "recipes", "--root", "examples", "refresh", recipe_id, "--dry-run", *extra]) == 0
    return capsys.readouterr().out


def node_commands(out: str) -> list[list[str]]:
    """The docker run commands printed under each host."""
    commands = []
    for chunk in out.split("container catalogue-")[1:]:
        text = chunk.split(":\n", 1)[1]
        lines = []
        for line in text.splitlines():
            lines.append(line)
            if not line.endswith("\\"):
                break
        commands.append(split_command("\n".join(lines)))
    return commands


def test_cluster_on_two_bare_addresses_goes_over_ssh_with_the_spark_profile(capsys):
    out = dry_run(capsys, "gptoss-120b-topology-cluster-tp2", "--hosts", "10.0.0.1,10.0.0.2")
    assert "host 10.0.0.1 (docker ssh://10.0.0.1, address 10.0.0.1):" in out
    assert "    docker -H ssh://10.0.0.1 run \\\n" in out and "    docker -H ssh://10.0.0.2 run \\\n" in out
    head, worker = node_commands(out)
    assert head[:4] == ["docker", "-H", "ssh://10.0.0.1", "run"] and worker[:4] == [
        "docker",
        "-H",
        "ssh://10.0.0.2",
        "run",
    ]
    for rank, (argv, ip) in enumerate(((head, "10.0.0.1"), (worker, "10.0.0.2"))):
        assert argv[argv.index("--nnodes") + 1] == "2" and argv[argv.index("--node-rank") + 1] == str(rank)
        assert argv[argv.index("--master-addr") + 1] == "10.0.0.1"
        words = " ".join(argv)
        assert "--gpus all" in words and "--ipc host" in words and "--network host" in words
        # No hosts file: the interface is a placeholder named after the hosts-file field, and the run would refuse.
        assert f"-e NCCL_SOCKET_IFNAME=<{ip}.interface>" in words and f"-e GLOO_SOCKET_IFNAME=<{ip}.interface>" in words
        assert f"-e VLLM_HOST_IP={ip}" in words
    assert "--headless" in worker and "--headless" not in head
    assert "needs before a real run (hosts.yaml): hosts.10.0.0.1.interface, hosts.10.0.0.2.interface" in out
    assert "from the dgx-spark platform profile: --gpus all, --ipc host" in out


def test_replica_dry_runs_print_the_router_config_with_their_strategy(capsys):
    for recipe_id, strategy in (
        ("gptoss-120b-topology-2x-shuffle", "simple-shuffle"),
        ("gptoss-120b-topology-2x-least-busy", "least-busy"),
    ):
        out = dry_run(capsys, recipe_id, "--hosts", "ssh://me@spark1,ssh://me@spark2")
        assert f"routing_strategy: {strategy}" in out and "api_base: http://spark2:8000/v1" in out
        assert "litellm \\\n      --config" in out and "--base-url http://127.0.0.1:4000" in out
        assert [cmd[:3] for cmd in node_commands(out)] == [
            ["docker", "-H", "ssh://me@spark1"],
            ["docker", "-H", "ssh://me@spark2"],
        ]


def test_a_cluster_cannot_run_on_fewer_remote_hosts_than_nodes(capsys):
    assert main(["--root", "recipes", "refresh", "gptoss-120b-topology-cluster-tp2", "--hosts", "a", "--dry-run"]) == 1
    assert "topology.nodes is 2 but 1 node(s) were given" in capsys.readouterr().err


def test_client_runs_in_the_image_by_default_and_on_the_host_when_asked(capsys):
    out = dry_run(capsys, "gptoss-120b")
    assert "inside vllm-node-mxfp4 on this machine" in out and "--entrypoint python3" in out
    out = dry_run(capsys, "gptoss-120b", "--client", "host")
    assert "in this Python environment" in out and "driver.py" in out


SPARKS = """hosts:
  spark1: {docker: local, address: 192.168.100.10, interface: enp1s0f1np1}
  spark2: {docker: "ssh://me@192.168.100.11", address: 192.168.100.11, interface: enp1s0f1np1}
"""
PUBLISHED = sorted(p.parent.name for p in REPO.glob("recipes/*/recipe.yaml"))


@pytest.mark.parametrize("recipe_id", PUBLISHED)
def test_spark_dry_runs_match_their_golden_files(recipe_id, tmp_path, capsys, monkeypatch):
    """Every published recipe on two named Sparks: the whole plan, per host (UPDATE_GOLDEN=1 rewrites)."""
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(SPARKS)
    monkeypatch.setenv("HF_HOME", "/home/me/.cache/huggingface")
    monkeypatch.setenv("HOME", "/home/me")
    monkeypatch.setattr(os, "getuid", lambda: 1000)
    monkeypatch.setattr(os, "getgid", lambda: 1000)
    out = dry_run(capsys, recipe_id, "--hosts", "spark1,spark2", "--hosts-file", str(hosts))
    out = re.sub(r"\d{8}T\d{6}Z", "<stamp>", out).replace(str(REPO), "<repo>")
    # the compile cache's name holds a hash of this checkout's recipe folder (it differs per clone)
    out = out.replace(recipe_cache_name(recipe_id, REPO / "recipes" / recipe_id), f"{recipe_id}-<folder hash>")
    golden = REPO / "tests" / "golden" / "dry-run" / f"{recipe_id}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(out)
    assert out == golden.read_text()


def test_cluster_nodes_carry_the_playbook_settings(tmp_path, capsys, monkeypatch):
    """The per-node command of the two-Spark cluster against NVIDIA's playbook (nvidia/vllm/README.md, two
    Sparks: -e VLLM_HOST_IP, UCX_NET_DEVICES, NCCL_SOCKET_IFNAME, OMPI_MCA_btl_tcp_if_include, GLOO_SOCKET_IFNAME,
    TP_SOCKET_IFNAME = the CX-7 interface, RAY_memory_monitor_refresh_ms=0, the HF cache mounted) and
    eugr/spark-vllm-docker (--gpus all --ipc=host --network host; RDMA: --device=/dev/infiniband, NCCL_IB_HCA)."""
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(SPARKS.replace("interface: enp1s0f1np1}", "interface: enp1s0f1np1, hca: rocep1s0f1}"))
    monkeypatch.setenv("HF_HOME", "/home/me/.cache/huggingface")
    out = dry_run(capsys, "gptoss-120b-topology-cluster-tp2", "--hosts", "spark1,spark2", "--hosts-file", str(hosts))
    for argv, ip in zip(node_commands(out), ("192.168.100.10", "192.168.100.11")):
        pairs = set(itertools.pairwise(argv))
        reference = {
            ("--gpus", "all"),
            ("--ipc", "host"),
            ("--network", "host"),
            ("-v", "/home/me/.cache/huggingface/hub:/root/.cache/huggingface/hub:ro"),  # spark2 trusts no vllm-node
            ("-e", f"VLLM_HOST_IP={ip}"),
            ("-e", "UCX_NET_DEVICES=enp1s0f1np1"),
            ("-e", "NCCL_SOCKET_IFNAME=enp1s0f1np1"),
            ("-e", "OMPI_MCA_btl_tcp_if_include=enp1s0f1np1"),
            ("-e", "GLOO_SOCKET_IFNAME=enp1s0f1np1"),
            ("-e", "TP_SOCKET_IFNAME=enp1s0f1np1"),
            ("-e", "RAY_memory_monitor_refresh_ms=0"),
            ("--device", "/dev/infiniband"),
            ("--cap-add", "IPC_LOCK"),
            ("-e", "NCCL_IB_HCA=rocep1s0f1"),
            ("--master-addr", "192.168.100.10"),
        }
        assert reference <= pairs, reference - pairs
        assert "needs before a real run" not in out
