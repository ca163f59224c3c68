"""A recipe laid out on nodes: one server, vLLM's multi-node launcher, replicas behind LiteLLM."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from catalogue.models.loading import load_entry
from catalogue.models.recipe import Recipe
from catalogue.models.topology import Node, layout, nodes_used, placeholder_nodes

REPO = Path(__file__).resolve().parents[1]

A, B = Node("a", "192.0.2.1"), Node("b", "192.0.2.2")


def test_solo_is_the_recipes_own_command(entries):
    recipe = entries["gptoss-120b"].recipe
    lay = layout(recipe, [A])
    assert lay.kind == "solo" and len(lay.servers) == 1 and lay.router is None
    assert (
        lay.servers[0].serve[:3] == ["vllm", "serve", "openai/gpt-oss-120b"]
        and lay.endpoint() == "http://192.0.2.1:8000"
    )


def test_cluster_runs_the_same_serve_on_every_node_with_its_rank(entries):
    recipe = entries["gptoss-120b-topology-cluster-tp2"].recipe
    head, worker = layout(recipe, [A, B]).servers
    for rank, server in enumerate((head, worker)):
        argv = server.serve
        assert argv[argv.index("--node-rank") + 1] == str(rank) and argv[argv.index("--nnodes") + 1] == "2"
        assert argv[argv.index("--master-addr") + 1] == "192.0.2.1" and "--master-port" in argv
        assert argv[argv.index("--tensor-parallel-size") + 1] == "2"
    assert "--headless" in worker.serve and "--headless" not in head.serve
    assert head.port == 8000 and worker.port is None and worker.node == B


def test_cluster_needs_its_nodes(entries):
    with pytest.raises(ValueError, match=r"topology\.nodes is 2 but 1 node"):
        layout(entries["gptoss-120b-topology-cluster-tp2"].recipe, [A])


def test_ray_backend_starts_ray_on_every_node_then_serves_on_the_head(entries):
    recipe = entries["gptoss-120b-topology-cluster-tp2"].recipe
    flags = {**recipe.serving.flags, "distributed-executor-backend": "ray"}
    lay = layout(recipe, [A, B], flags)
    head, worker = lay.servers
    assert (
        lay.ray and head.serve[:3] == ["ray", "start", "--head"] and worker.serve[:3] == ["ray", "start", "--address"]
    )
    assert "192.0.2.1:6379" in worker.serve and head.exec_serve[:2] == ["vllm", "serve"]
    assert "--distributed-executor-backend" in head.exec_serve


def test_replicas_get_a_router_with_the_recipes_strategy(entries):
    recipe = entries["gptoss-120b-topology-2x-least-busy"].recipe
    lay = layout(recipe, [A, B])
    assert [s.base_url for s in lay.servers] == ["http://192.0.2.1:8000", "http://192.0.2.2:8000"]
    config = lay.router.config
    assert config["router_settings"] == {"routing_strategy": "least-busy"}
    assert [m["litellm_params"]["api_base"] for m in config["model_list"]] == [
        "http://192.0.2.1:8000/v1",
        "http://192.0.2.2:8000/v1",
    ]
    assert {m["model_name"] for m in config["model_list"]} == {"openai/gpt-oss-120b"}
    assert lay.endpoint() == "http://127.0.0.1:4000"


def test_two_replicas_on_one_address_take_two_ports(entries):
    recipe = entries["gptoss-120b-topology-2x-shuffle"].recipe
    servers = layout(recipe, [A]).servers
    assert [s.port for s in servers] == [8000, 8001] and "8001" in servers[1].serve


def test_page_nodes_are_placeholders(entries):
    assert [n.address for n in placeholder_nodes(entries["gptoss-120b-topology-cluster-tp2"].recipe)] == [
        "<head-ip>",
        "<worker-1-ip>",
    ]


def test_per_node_figures_divide_by_the_hosts_a_run_really_used(entries):
    tiny = load_entry(REPO / "examples" / "tiny-cpu-cluster")
    run = tiny.latest
    assert [n.host for n in run.provenance.nodes] == ["local", "local"]  # the committed run: one machine
    assert nodes_used(tiny.recipe, run) == 1 and tiny.recipe.hardware.nodes == 2
    hosts = [n.model_copy(update={"host": h}) for n, h in zip(run.provenance.nodes, ["spark1", "spark2"])]
    spread = run.model_copy(update={"provenance": run.provenance.model_copy(update={"nodes": hosts})})
    assert nodes_used(tiny.recipe, spread) == 2
    assert nodes_used(entries["gptoss-120b-topology-cluster-tp2"].recipe, None) == 2  # not measured: the topology


def test_hardware_nodes_must_agree_with_the_topology(entries):
    data = entries["gptoss-120b-topology-cluster-tp2"].recipe.model_dump()
    data["hardware"]["nodes"] = 1
    with pytest.raises(ValidationError, match=r"hardware\.nodes is 1 but the topology uses 2 machine"):
        Recipe.model_validate(data)


def test_an_image_that_runs_vllm_serve_itself_gets_its_entrypoint_cleared(entries):
    """vllm/vllm-openai's entrypoint is `vllm serve`: `IMAGE vllm serve MODEL` would run `vllm serve vllm serve`."""
    recipe = entries["gptoss-120b-ngc-2509"].recipe
    official = recipe.model_copy(
        update={"serving": recipe.serving.model_copy(update={"image": "vllm/vllm-openai:v0.12.0", "image_flags": {}})}
    )
    argv = layout(official, [A]).servers[0].argv()
    at = argv.index("vllm/vllm-openai:v0.12.0")
    assert argv[argv.index("--entrypoint") + 1] == "" and argv[at + 1 : at + 3] == ["vllm", "serve"]
    assert "--entrypoint" not in layout(recipe, [A]).servers[0].argv()  # NGC's entrypoint runs the command given
