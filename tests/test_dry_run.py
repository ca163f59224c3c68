"""`refresh --dry-run`: every command per host, for every topology; nothing starts, nothing is written."""

from __future__ import annotations

from catalogue.cli import main
from catalogue.launch import split_command


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


def test_cluster_on_two_hosts_prints_one_command_per_node(capsys):
    out = dry_run(capsys, "gptoss-120b-topology-cluster-tp2", "--hosts", "a,b")
    assert "host a (docker a, address a):" in out and "host b (docker b, address b):" in out
    head, worker = node_commands(out)
    assert head[:4] == ["docker", "--context", "a", "run"] and worker[:4] == ["docker", "--context", "b", "run"]
    for rank, argv in enumerate((head, worker)):
        assert argv[argv.index("--nnodes") + 1] == "2" and argv[argv.index("--node-rank") + 1] == str(rank)
        assert argv[argv.index("--master-addr") + 1] == "a"
    assert "--headless" in worker and "--headless" not in head


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
