"""What a refresh will run, on which host: servers, router, benchmark client, levels, flag snapshot."""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from catalogue.benchmark import RUN_STAMP_FORMAT
from catalogue.docker_options import option_name, option_value, split_options
from catalogue.errors import CatalogueError
from catalogue.loading import RUNS_DIR, Entry
from catalogue.platform import ProfilePart
from catalogue.recipe import ClusterTopology, Recipe
from catalogue.topology import Layout, RouterLaunch, ServerLaunch, layout, runs_serve_itself
from runner.containers import CACHE_MOUNT, LABEL_RECIPE, LABEL_RUN, own_options
from runner.docker_view import OwnMount
from runner.helper_containers import RAW_IN_CONTAINER, with_helpers
from runner.hosts import LOCAL, Host
from runner.jobs import Job, level_jobs
from runner.placement import client_mounts_and_env, link_interfaces, spread_hosts

CACHE_ROOT = "~/.cache/catalogue/compile"
"""vLLM's and torch.compile's caches, one folder per image and recipe (mode 0700), so a second boot is warm: under
the owner's cache folder on this machine; on another host, under /var/tmp (its home folder is not known here)."""
REMOTE_CACHE_ROOT = "/var/tmp/catalogue-compile-cache"


@dataclass(frozen=True)
class NodeRun:
    """One server process or container on one host."""

    role: str
    host: Host
    argv: list[str]
    env: dict[str, str]
    """Environment of a local process (a container gets its own with -e)."""
    container: str | None
    base_url: str | None
    """Its API, when it serves one (the head, a replica, a solo server)."""
    exec_argv: list[str] | None = None
    """Ray: `docker exec <container> vllm serve ...` once every node joined."""
    profile: ProfilePart | None = None
    """What the platform profile put into the command (the dry run marks it)."""
    labels: dict[str, str] = field(default_factory=dict)
    """The runner's labels on its container, exactly (the inspect gate checks docker kept them)."""
    own_mounts: list[OwnMount] = field(default_factory=list)
    """The bind mounts the runner adds: the compile cache, the profile's HF cache."""
    by_name: list[str] = field(default_factory=list)
    """Variables passed by name from the owner's environment."""
    own_entrypoint: bool = False
    """The runner cleared the image's entrypoint itself (an image that runs `vllm serve`; the recipe sets none)."""

    @property
    def log_name(self) -> str:
        return f"server-{_slug(self.role)}.log" if self.role != "server" else "server.log"


@dataclass(frozen=True)
class Plan:
    """Everything a refresh needs, decided before anything starts."""

    recipe_id: str
    folder: Path
    stamp: str
    kind: str
    nodes: list[NodeRun]
    endpoint: str
    health_timeout_s: int
    client: str
    """`image`: vLLM's client inside the recipe's image on this machine; `host`: this Python environment."""
    client_argv: list[str]
    jobs: list[Job]
    snapshot_argv: list[str]
    image: str | None
    router: RouterLaunch | None = None
    router_argv: list[str] | None = None
    changes: list[str] = field(default_factory=list)
    ray: bool = False
    missing: list[str] = field(default_factory=list)
    """Host fields the hosts file must give before a real run (the dry run shows placeholders for them)."""
    platform: str | None = None
    gpu: bool = False
    """The platform has GPUs: preflight checks the GPU runtime on every host."""
    reads: list[str] = field(default_factory=list)
    """`docker run` mounts and env of what a reader of the model needs (HF cache, model folder): the client's."""
    model_arg: str = ""
    revision: str | None = None
    """The model revision the recipe pins (`--revision`), if any."""
    image_source: str | None = None
    capacity: bool = False
    """Search the highest rate within the recipe's SLO after the planned levels (the client waits for probes)."""
    client_mounts: list[OwnMount] = field(default_factory=list)
    """What the runner mounts into the client container (raw results, driver)."""
    snapshot_mounts: list[OwnMount] = field(default_factory=list)
    """What the runner mounts into the flag-snapshot container (code copy, output)."""
    client_cpus: frozenset[int] | None = None
    """`--client-cpus`: the cores the benchmark client of a local run starts on (the rest stay on `--cpus`)."""

    @property
    def probe_template(self) -> Job | None:
        """The parse-only job every capacity probe is made from."""
        return next((job for job in self.jobs if job.parse_only), None)

    @property
    def levels(self) -> list[Job]:
        """The planned jobs (not the probe template)."""
        return [job for job in self.jobs if not job.parse_only]

    @property
    def run_file(self) -> Path:
        return self.folder / RUNS_DIR / f"{self.stamp}.json"

    @property
    def raw_dir(self) -> Path:
        return self.folder / RUNS_DIR / self.stamp

    @property
    def label(self) -> str:
        return f"{LABEL_RUN}={self.stamp}"

    @property
    def hosts(self) -> list[Host]:
        """Each host once, in node order."""
        return list({node.host: None for node in self.nodes})

    @property
    def engines(self) -> list[Host]:
        """Every docker engine the run uses, once each: the hosts' and this machine's (client, snapshot)."""
        found: dict[str | None, Host] = {}
        for host in [*self.hosts, LOCAL]:
            found.setdefault(host.docker, host)
        return list(found.values())

    @property
    def router_model(self) -> str:
        """The model name the router serves (every deployment shares it)."""
        assert self.router is not None
        return str(self.router.config["model_list"][0]["model_name"])

    @property
    def api_node(self) -> NodeRun:
        return next(node for node in self.nodes if node.base_url)

    def job(self, name: str) -> Job:
        return next(job for job in self.jobs if job.name == name)


def now_stamp() -> str:
    """The UTC time as a run stamp."""
    return dt.datetime.now(dt.UTC).strftime(RUN_STAMP_FORMAT)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


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
    try:
        lay = layout(recipe, [h.node for h in hosts], flags, platform)
    except ValueError as exc:
        raise CatalogueError(Path("--hosts"), str(exc)) from None
    by_node = {h.node: h for h in hosts}
    labels = {LABEL_RECIPE: entry.id, LABEL_RUN: stamp}
    changes: list[str] = []
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
                cache = f"{root}/{_slug(str(server.image))}/{entry.id}"
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
            if cache_root:
                cache = str(Path.home() / ".cache" / "catalogue-compile" / entry.id)
                env.setdefault("VLLM_CACHE_ROOT", f"{cache}/vllm")
                env.setdefault("TORCHINDUCTOR_CACHE_DIR", f"{cache}/inductor")
            nodes.append(
                NodeRun(server.role, host, server.serve, env, None, server.base_url, server.exec_serve, server.profile)
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
    """The profile's own Hugging Face cache mount (its target ends in the hub folder)."""
    return option_value(group).split(":")[1].endswith("/hub") and "HF_HOME" in part.env


def router_yaml(plan: Plan) -> str:
    """The router's config file as written beside the raw results."""
    assert plan.router is not None
    return yaml.safe_dump(plan.router.config, sort_keys=False)
