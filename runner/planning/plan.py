"""What a refresh will run, on which host: servers, router, benchmark client, levels, flag snapshot."""

from __future__ import annotations

import datetime as dt
import os
import sys
from dataclasses import replace
from pathlib import Path

import yaml

from catalogue.models.benchmark import RUN_STAMP_FORMAT
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import RUNS_DIR, Entry
from catalogue.models.platform import ProfilePart
from catalogue.models.recipe import ClusterTopology, Recipe
from catalogue.models.runner_mounts import COMPILE_CACHE_HOST, hub_read_only
from catalogue.models.topology import Layout, RouterLaunch, ServerLaunch, layout, runs_serve_itself
from catalogue.policy.check import code_options
from catalogue.policy.docker_options import option_name, option_value, split_options
from runner.hosts.containers import CACHE_MOUNT, LABEL_RECIPE, LABEL_RUN, own_options
from runner.hosts.docker_view import OwnMount
from runner.hosts.hosts import LOCAL, Host, trusted_everywhere
from runner.hosts.placement import client_mounts_and_env, link_interfaces, spread_hosts
from runner.planning.helper_containers import RAW_IN_CONTAINER, with_helpers
from runner.planning.jobs import level_jobs
from runner.planning.plan_data import NodeRun, Plan, compile_cache, launch_key

CACHE_ROOT = COMPILE_CACHE_HOST
"""vLLM's and torch.compile's caches, one folder per image and recipe (mode 0700), so a second boot is warm: under
the owner's cache folder on this machine; on another host, under /var/tmp (its home folder is not known here)."""
REMOTE_CACHE_ROOT = "/var/tmp/catalogue-compile-cache"


READ_ONLY_NOTE = (
    "mounted the Hugging Face cache's hub read-only ({why}): the model must be in the owner's cache before the run "
    "(`hf download` on each host)"
)
OWN_CACHE_NOTE = (
    "the compile cache is a folder of this launch's own ({what} runs code the recipe chooses): what that code writes "
    "there no other launch of the recipe loads"
)
OWNER_SETTINGS = ("HF_HOME",)
"""The owner's own setting a local process keeps (where the Hugging Face cache is; the recipe's env wins)."""


def now_stamp() -> str:
    """The UTC time as a run stamp."""
    return dt.datetime.now(dt.UTC).strftime(RUN_STAMP_FORMAT)


def make_plan(
    entry: Entry,
    *,
    hosts: list[Host] | None = None,
    local: bool = False,
    port: int | None = None,
    stamp: str | None = None,
    client: str | None = None,
    router_port: int | None = None,
    cache_root: str | None = CACHE_ROOT,
    allow_shared_host: bool = False,
    capacity: bool = False,
) -> Plan:
    """The plan for one recipe on `hosts`; `local` runs `vllm serve` as processes on this machine, not in docker."""
    recipe = entry.recipe
    hosts = hosts or [LOCAL]
    stamp = stamp or now_stamp()
    docker = recipe.serving.image is not None and not local
    path = entry.folder / "recipe.yaml"
    if not docker and any(not h.is_local for h in hosts):
        raise CatalogueError(
            path, "a local process runs on this machine only: give an image (serving.image) to run on other hosts"
        )
    platform = entry.platform
    flags = dict(recipe.serving.flags)
    if port is not None:
        flags["port"] = port
    model_path = recipe.serving.model_path
    if model_path and not docker and (entry.folder / model_path).exists():
        recipe = recipe.model_copy(
            update={
                "serving": recipe.serving.model_copy(update={"model_path": str((entry.folder / model_path).resolve())})
            }
        )
    hosts = spread_hosts(
        recipe, hosts, entry.id, gpu=bool(platform and platform.gpu), allow_shared_host=allow_shared_host
    )
    if docker and platform is not None and platform.hf_cache is not None:
        default_cache = os.environ.get("HF_HOME") or os.path.expanduser(platform.hf_cache.host)
        hosts = [replace(h, hf_home=h.hf_home or default_cache) for h in hosts]
    multi_node = (
        isinstance(recipe.topology, ClusterTopology) and platform is not None and platform.multi_node is not None
    )
    missing: list[str] = []
    if multi_node:
        hosts, missing = link_interfaces(hosts)
    hub = docker and platform is not None and platform.hf_cache is not None
    code = code_options(recipe.serving, platform, trusted_everywhere(hosts), recipe.model_arg) if docker else []
    launch = launch_key(recipe.model_arg, recipe.serving.model_dump(mode="json")) if code else None
    read_only = hub_read_only(flags, recipe.serving.env, code) if hub else None
    try:
        lay = layout(recipe, [h.node for h in hosts], flags, platform, read_only_hub=read_only is not None)
    except ValueError as exc:
        raise CatalogueError(Path("--hosts"), str(exc)) from None
    by_node = {h.node: h for h in hosts}
    labels = {LABEL_RECIPE: entry.id, LABEL_RUN: stamp}
    changes: list[str] = [READ_ONLY_NOTE.format(why=read_only)] if read_only else []
    changes += [OWN_CACHE_NOTE.format(what=code[0])] if code and cache_root else []
    nodes = []
    for i, server in enumerate(lay.servers):
        host = by_node[server.node]
        name = f"catalogue-{entry.id}" if len(lay.servers) == 1 else f"catalogue-{entry.id}-{i}"
        if server.profile is not None:
            changes += [
                f"{server.profile.platform} profile: left out {d} "
                "(host networking: vLLM's --port is the reachable port)"
                for d in server.profile.dropped
                if f"left out {d} " not in " ".join(changes)
            ]
        if docker:
            cache = None
            if cache_root:
                root = os.path.expanduser(cache_root) if host.is_local else REMOTE_CACHE_ROOT
                cache = compile_cache(root, str(server.image), entry.id, entry.folder, launch)
            owned = own_options(
                [os.path.expanduser(w) if w.startswith("~/") else w for w in server.all_options],  # as a shell would
                name=name,
                labels={**labels, "catalogue.node": str(i)},
                cache_dir=cache,
            )
            changes += [c for c in owned.changes if c not in changes]
            argv = [*host.docker_cli(), *server.docker_argv(owned.options)[1:]]
            exec_argv = [*host.docker_cli(), "exec", name, *server.exec_serve] if server.exec_serve else None
            node_labels = {**labels, "catalogue.node": str(i)}
            nodes.append(
                NodeRun(
                    server.role,
                    host,
                    argv,
                    {},
                    name,
                    server.base_url,
                    exec_argv,
                    server.profile,
                    node_labels,
                    own_mounts(server, cache),
                    list(server.env_names),
                    runs_serve_itself(str(server.image)) and "--entrypoint" not in " ".join(recipe_options(recipe)),
                )
            )
        else:
            env = dict(server.all_env)
            serve = server.serve
            if recipe.serving.simulator is not None:  # this Python, which imports the simulator as it does the runner
                serve = [sys.executable, *serve[1:]]
            if cache_root:
                cache = str(Path.home() / ".cache" / "catalogue-compile" / entry.id)
                env.setdefault("VLLM_CACHE_ROOT", f"{cache}/vllm")
                env.setdefault("TORCHINDUCTOR_CACHE_DIR", f"{cache}/inductor")
            nodes.append(
                NodeRun(
                    server.role,
                    host,
                    serve,
                    env,
                    None,
                    server.base_url,
                    server.exec_serve,
                    server.profile,
                    by_name=[*OWNER_SETTINGS, *server.env_names],
                )
            )
    client = client or ("image" if docker else "host")
    if client == "image" and not docker:
        raise CatalogueError(
            entry.folder / "recipe.yaml", "--client image needs a recipe with an image (serving.image)"
        )
    router, router_argv, endpoint = _router(lay, stamp, entry, router_port)
    raw_for_client = RAW_IN_CONTAINER if client == "image" else str(entry.folder / RUNS_DIR / stamp)
    if capacity and (recipe.sweep.slo is None or recipe.sweep.open_loop is None):
        raise CatalogueError(
            path, "--capacity needs an SLO and open-loop settings: give sweep.slo and sweep.open_loop", "sweep.slo"
        )
    jobs = level_jobs(entry, recipe, endpoint, raw_for_client, stamp, capacity)
    image = recipe.serving.image if docker else None
    plan = Plan(
        entry.id,
        entry.folder,
        stamp,
        lay.kind,
        nodes,
        endpoint,
        recipe.sweep.health_timeout_s,
        client,
        [],
        jobs,
        [],
        image,
        router,
        router_argv,
        changes,
        lay.ray,
        missing,
        platform.name if platform else None,
        bool(platform and platform.gpu and docker),
        client_mounts_and_env(lay.servers[0], recipe.model_arg),
        recipe.model_arg,
        str(flags["revision"]) if "revision" in flags else None,
        recipe.serving.image_source,
        capacity,
    )
    return with_helpers(plan, client_mounts_and_env(lay.servers[0], recipe.model_arg, as_root=os.getuid() == 0))


def _router(
    lay: Layout, stamp: str, entry: Entry, router_port: int | None
) -> tuple[RouterLaunch | None, list[str] | None, str]:
    """LiteLLM on this machine, listening on loopback, with a master key the runner makes per run."""
    if lay.router is None:
        return None, None, lay.endpoint()
    router = lay.router
    if router_port is not None:
        router = RouterLaunch(router.config, router_port, router.strategy)
    config_path = entry.folder / RUNS_DIR / stamp / "router.yaml"
    return router, router.argv(str(config_path), host="127.0.0.1"), f"http://127.0.0.1:{router.port}"


def recipe_options(recipe: Recipe) -> list[str]:
    """The recipe's own `docker run` options."""
    return list(recipe.serving.container.options) if recipe.serving.container else []


def own_mounts(server: ServerLaunch, cache: str | None) -> list[OwnMount]:
    """The mounts the runner adds to a server container: its compile cache, the profile's HF cache hub."""
    out = [OwnMount(cache, CACHE_MOUNT)] if cache else []
    part = server.profile
    for group in split_options(part.options if part else []):
        if option_name(group) == "volume" and part is not None and group_is_hf_cache(group, part):
            source, target, *mode = option_value(group).split(":")
            out.append(OwnMount(os.path.expanduser(source), target, ":".join(mode)))
    return out


def group_is_hf_cache(group: list[str], part: ProfilePart) -> bool:
    """The profile's own Hugging Face cache mount: its target is the hub folder the profile mounts (whether or not the
    recipe sets HF_HOME itself)."""
    return part.hub is not None and option_value(group).split(":")[1] == part.hub


def router_yaml(plan: Plan) -> str:
    """The router's config file as written beside the raw results."""
    assert plan.router is not None
    return yaml.safe_dump(plan.router.config, sort_keys=False)
