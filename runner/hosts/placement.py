"""Where a plan's servers go and what its client may read: hosts per node (a GPU host never shared unasked, no
loopback once a node is remote), the link's interface per node, and the client's mounts and env."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from catalogue.models.errors import CatalogueError
from catalogue.models.recipe import ClusterTopology, Recipe
from catalogue.models.topology import ServerLaunch, node_count
from catalogue.policy.docker_options import option_key, option_value, split_options
from runner.hosts.hosts import Host


def spread_hosts(
    recipe: Recipe, hosts: list[Host], recipe_id: str, *, gpu: bool, allow_shared_host: bool
) -> list[Host]:
    """The host of every node: a cluster on this machine alone repeats it; a GPU host is never shared unasked.

    Once any node is on another machine, no node may be on a loopback address: the others would be told to
    reach it at their own 127.0.0.1."""
    wanted = node_count(recipe)
    if isinstance(recipe.topology, ClusterTopology) and len(hosts) < wanted and all(h.is_local for h in hosts):
        hosts = hosts + [hosts[-1]] * (wanted - len(hosts))
    used = (
        hosts[:wanted]
        if isinstance(recipe.topology, ClusterTopology)
        else [hosts[i % len(hosts)] for i in range(wanted)]
    )
    if gpu and len(set(used)) < len(used) and not allow_shared_host:
        shared = next(h for h in used if used.count(h) > 1)
        raise CatalogueError(
            Path("--hosts"),
            f"{recipe_id} runs {wanted} servers but host {shared.name} would take {used.count(shared)} of them on one "
            f"GPU: name {wanted} hosts (--hosts a,b), or pass --allow-shared-host to share it on purpose",
        )
    remote = [h for h in used if not h.on_loopback]
    for host in used:
        if remote and host.on_loopback:
            raise CatalogueError(
                Path("--hosts"),
                f"host {host.name} has the loopback address {host.address}, which host {remote[0].name} cannot reach: "
                f"give {host.name} its address on the link between the machines "
                f"(hosts.yaml: hosts.{host.name}.address)",
            )
    return hosts


def link_interfaces(hosts: list[Host]) -> tuple[list[Host], list[str]]:
    """Every node of a multi-node cluster needs the interface of the link; on loopback alone that is `lo`."""
    if all(h.on_loopback for h in hosts):
        return [replace(h, interface=h.interface or "lo") for h in hosts], []
    missing = [f"hosts.{h.name}.interface" for h in hosts if not h.interface]
    return hosts, list(dict.fromkeys(missing))


CLIENT_HF_HOME = "/tmp/hf-cache"
"""Where a client that runs as the owner's uid (not root) sees the HF cache: it cannot enter /root."""


def client_mounts_and_env(server: ServerLaunch, model_arg: str, *, as_root: bool = True) -> list[str]:
    """What the benchmark client reads, and nothing more: the HF cache (read-only where the server's is), the model's
    folder, the server's env less the per-node network settings."""
    env = {k: v for k, v in server.all_env.items() if not (server.profile and k in server.profile.per_node)}
    cache = env.get("HF_HOME")
    if cache and not as_root:
        env["HF_HOME"] = CLIENT_HF_HOME
    out: list[str] = []
    for group in split_options(server.all_options):
        key = option_key(group)
        target = key.removeprefix("volume:").rstrip("/")
        if not key.startswith("volume:"):
            continue
        if cache and target in (cache, cache + "/hub"):
            source, _, *mode = option_value(group).split(":")  # the server's mode too: read-only stays read-only
            where = (cache if as_root else CLIENT_HF_HOME) + target.removeprefix(cache)
            out += ["-v", ":".join([source, where, *mode])]
        elif model_arg == target or model_arg.startswith(target + "/"):
            out += group
    return (
        out + [w for k, v in env.items() for w in ("-e", f"{k}={v}")] + [w for n in server.env_names for w in ("-e", n)]
    )
