"""What a recipe page gives to copy: the launch commands node by node, one benchmark level by hand, the refresh
command, and the newest measured run's reproduction."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import yaml

from catalogue.models.benchmark import MeasuredProvenance
from catalogue.models.launch import bench_argv, shell_command
from catalogue.models.loading import Entry
from catalogue.models.platform import Platform, ProfilePart
from catalogue.models.recipe import Recipe
from catalogue.models.reproduce import missing_pins
from catalogue.models.topology import DEFAULT_PORT, LITELLM_VERSION, layout, placeholder_nodes


def command_text(argv: list[str], serve: list[str]) -> str:
    """A copyable command; the in-container command (`vllm serve ...`) starts its own line after the image."""
    head = argv[: len(argv) - len(serve)]
    return shell_command(head) + " \\\n  " + shell_command(serve) if head else shell_command(serve)


@dataclass(frozen=True)
class LaunchBlock:
    """One copyable block of the launch section: a node's command, the router's config or its command."""

    title: str | None
    text: str
    argv: list[str] | None
    """What the text splits back to (None for the YAML config)."""
    profile: ProfilePart | None = None
    """What the platform profile put into this command (marked under it), and the recipe options it made moot."""


def launch_blocks(recipe: Recipe, platform: Platform | None = None) -> list[LaunchBlock]:
    """Every command a reader runs, node by node (cluster) or replica by replica plus the router (replicas)."""
    lay = layout(recipe, placeholder_nodes(recipe), platform=platform)
    if lay.kind == "solo":
        server = lay.servers[0]
        return [LaunchBlock(None, command_text(server.argv(), server.serve), server.argv(), server.profile)]
    blocks = []
    for server in lay.servers:
        blocks.append(
            LaunchBlock(
                f"{server.role}, on {server.node.address}",
                command_text(server.argv(), server.serve),
                server.argv(),
                server.profile,
            )
        )
        if server.exec_serve:
            exec_argv = ["docker", "exec", "<container>", *server.exec_serve]
            blocks.append(
                LaunchBlock("then, once every node has joined, on the head", shell_command(exec_argv), exec_argv)
            )
    if lay.router is not None:
        config = yaml.safe_dump(lay.router.config, sort_keys=False).rstrip()
        blocks.append(LaunchBlock(f"router config, litellm.yaml (LiteLLM {LITELLM_VERSION})", config, None))
        argv = lay.router.argv()
        blocks.append(LaunchBlock("router, with LITELLM_MASTER_KEY set", shell_command(argv), argv))
    return blocks


def bench_text(recipe: Recipe, concurrency: int) -> str:
    """The copyable `vllm bench serve` command for one level, against the recipe's own port."""
    port = recipe.serving.flags.get("port", DEFAULT_PORT)
    return shell_command(bench_argv(recipe, concurrency, f"http://127.0.0.1:{port}"))


@dataclass(frozen=True)
class ReproduceBlock:
    """The newest measured run's reproduction: its stamp and what keeps it from being fully pinned."""

    stamp: str
    missing: list[str]
    host_facts: list[str]
    """One line per host: engine, kernel, OS, CPU, image, vLLM, model revision, GPU."""


def reproduce_block(entry: Entry) -> ReproduceBlock | None:
    """The "reproduce this run" block of the newest measured run, if there is one (of the runner's own sweep while
    there is one: a named profile's run comes from the same refresh)."""
    measured = [r for r in entry.runs if isinstance(r.provenance, MeasuredProvenance)]
    if not measured:
        return None
    run = max(measured, key=lambda r: (r.workload is None or r.workload.profile is None, r.recorded_at))
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    facts = [
        "; ".join(
            f"{label} {value}"
            for label, value in (
                ("host", h.host),
                ("docker", h.docker_version),
                ("kernel", h.kernel),
                ("OS", h.os),
                ("CPU", h.cpu),
                ("image", h.image_digest or h.image_id),
                ("vLLM", h.vllm_version),
                ("commit", h.vllm_commit),
                ("model revision", h.model_revision),
                ("GPU", h.gpu),
                ("driver", h.gpu_driver),
                ("CUDA", h.cuda),
            )
            if value
        )
        for h in prov.hosts
    ]
    return ReproduceBlock(run.stamp, missing_pins(run, entry.recipe.serving.image), facts)


def refresh_command(recipe_id: str, recipe: Recipe) -> str:
    """`nox -s refresh -- <id>`, with an `--allow` for each option the recipe asks the owner's consent for."""
    allows = [w for c in recipe.serving.consent for w in ("--allow", " ".join(c.option.split()))]
    return shlex.join(["nox", "-s", "refresh", "--", recipe_id, *allows])
