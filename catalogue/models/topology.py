"""A recipe's launch on real nodes: one server, a multi-node cluster, or replicas behind a router.

The page and the runner share this: the page lays a recipe out on placeholder nodes (`<head-ip>`),
the runner on the hosts it was given. Every command is an argv list; rendering quotes it with shlex.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from catalogue.models.benchmark import BenchmarkRun, MeasuredProvenance
from catalogue.models.launch import flags_argv
from catalogue.models.platform import NodeNet, Platform, ProfilePart, profile_part, without_dropped
from catalogue.models.recipe import ClusterTopology, Recipe, ReplicasTopology

DEFAULT_PORT = 8000
MASTER_PORT = 29501
"""`--master-port` of vLLM's multi-node launcher when the recipe sets none."""
RAY_PORT = 6379
ROUTER_PORT = 4000
SERVE_ENTRYPOINT_IMAGES = ("vllm/vllm-openai", "docker.io/vllm/vllm-openai")
"""Images whose entrypoint is already `vllm serve`: the launch clears it (`--entrypoint ''`), so that the command
after the image, `vllm serve MODEL ...` (or `ray start ...`), runs as written."""
LITELLM_VERSION = "1.106.2"
"""The LiteLLM proxy release the runner pins for replica topologies (1.106.3 and later need a certifi
release that the package registry reachable here does not serve)."""


@dataclass(frozen=True)
class Node:
    """A machine the launch runs on: a name for people, an address for the other nodes and the client."""

    name: str
    address: str
    interface: str | None = None
    """The network interface of the fast link (NCCL, gloo), from the hosts file."""
    hca: str | None = None
    """The RDMA device of that link (NCCL_IB_HCA), from the hosts file; RDMA is used when every node names one."""
    hf_home: str | None = None
    """The Hugging Face cache folder on this host, when it differs from the profile's default."""

    @property
    def net(self) -> NodeNet:
        return NodeNet(self.address, self.interface, self.hca, self.hf_home)

    @property
    def slug(self) -> str:
        """The name as one word, for placeholders: `worker-1`."""
        return self.name.replace(" ", "-")


@dataclass(frozen=True)
class ServerLaunch:
    """One `vllm serve` (or `ray start`) on one node."""

    role: str
    """What this server is, e.g. 'server', 'head (rank 0)', 'worker (rank 1)', 'replica 2'."""
    node: Node
    serve: list[str]
    """The command inside the container (or the local process): `vllm serve ...` or `ray start ...`."""
    port: int | None
    """The OpenAI API port it answers on; None for a headless node."""
    image: str | None
    options: list[str] = field(default_factory=list)
    """`docker run` options from the recipe."""
    env: dict[str, str] = field(default_factory=dict)
    exec_serve: list[str] | None = None
    """With Ray: `vllm serve ...`, run with `docker exec` in this node's container once every node joined."""
    profile: ProfilePart | None = None
    """What the platform profile adds (options, env) and which recipe options it makes moot."""
    env_names: list[str] = field(default_factory=list)
    """Variables passed by name from the owner's environment (`-e NAME`): secrets are never written down."""

    @property
    def base_url(self) -> str | None:
        return None if self.port is None else f"http://{self.node.address}:{self.port}"

    @property
    def all_options(self) -> list[str]:
        """The recipe's options (less those the profile makes moot), then the profile's."""
        if self.profile is None:
            return list(self.options)
        return [*without_dropped(self.options, self.profile), *self.profile.options]

    @property
    def all_env(self) -> dict[str, str]:
        """The recipe's environment, then the profile's."""
        return {**self.env, **(self.profile.env if self.profile else {})}

    def docker_argv(self, options: list[str] | None = None) -> list[str]:
        """`docker run [options] [-e K=V] image <serve>`; `options` replaces the recipe's and the profile's."""
        if self.image is None:
            raise ValueError("this server has no image")
        env = [w for key, value in self.all_env.items() for w in ("-e", f"{key}={value}")]
        env += [w for name in self.env_names for w in ("-e", name)]
        return ["docker", "run", *(self.all_options if options is None else options), *env, self.image, *self.serve]

    def argv(self) -> list[str]:
        """The full launch as a person runs it: docker when there is an image, else `env K=V <serve>`."""
        if self.image is not None:
            return self.docker_argv()
        env = [f"{k}={v}" for k, v in self.all_env.items()]
        return (["env", *env] if env else []) + self.serve


@dataclass(frozen=True)
class RouterLaunch:
    """The LiteLLM proxy in front of replicas: its generated config and its command."""

    config: dict[str, Any]
    port: int
    strategy: str

    def argv(self, config_path: str = "litellm.yaml", host: str = "0.0.0.0") -> list[str]:
        return ["litellm", "--config", config_path, "--host", host, "--port", str(self.port)]


@dataclass(frozen=True)
class Layout:
    """Every server of a recipe on its nodes, the router if any, and the endpoint a client measures."""

    kind: str
    servers: list[ServerLaunch]
    router: RouterLaunch | None
    ray: bool = False

    @property
    def api_server(self) -> ServerLaunch:
        """The server whose API the client (or the router) reaches first: the head or replica 1."""
        return next(s for s in self.servers if s.port is not None)

    def endpoint(self, router_address: str = "127.0.0.1") -> str:
        """The base URL the benchmark client measures: the router's, else the API server's."""
        if self.router is not None:
            return f"http://{router_address}:{self.router.port}"
        return str(self.api_server.base_url)


def runs_serve_itself(image: str) -> bool:
    """True for an image whose entrypoint is `vllm serve` (any tag or digest of vllm/vllm-openai)."""
    name = image.split("@", 1)[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    return name in SERVE_ENTRYPOINT_IMAGES


def served_name(recipe: Recipe) -> str:
    """The model name clients send (Recipe.served_name)."""
    return recipe.served_name


def placeholder_nodes(recipe: Recipe) -> list[Node]:
    """Nodes for the page, whose addresses a reader fills in."""
    topology = recipe.topology
    if isinstance(topology, ClusterTopology):
        return [Node("head", "<head-ip>")] + [Node(f"worker {i}", f"<worker-{i}-ip>") for i in range(1, topology.nodes)]
    if isinstance(topology, ReplicasTopology):
        return [Node(f"replica {i + 1}", f"<replica-{i + 1}-ip>") for i in range(topology.replicas)]
    return [Node("server", "127.0.0.1")]


def launch_argv(recipe: Recipe, platform: Platform | None = None) -> list[str]:
    """The first server's `vllm serve` launch on the page's placeholder nodes (a solo recipe's one command);
    with Ray, the head's container running `vllm serve` in place of `ray start`."""
    head = layout(recipe, placeholder_nodes(recipe), platform=platform).servers[0]
    if head.exec_serve is None:
        return head.argv()
    return replace(head, serve=head.exec_serve).argv()


def nodes_used(recipe: Recipe, run: BenchmarkRun | None) -> int:
    """Machines a run really used: the distinct hosts its servers ran on when the runner measured it (two servers
    may share a host with --allow-shared-host), else what the topology says. Per-node figures divide by this."""
    prov = run.provenance if run is not None else None
    if isinstance(prov, MeasuredProvenance) and prov.nodes:
        return len({node.host for node in prov.nodes})
    return node_count(recipe)


def node_count(recipe: Recipe) -> int:
    """Machines the set-up uses: 1 (solo), the cluster's nodes, or one per replica."""
    topology = recipe.topology
    if isinstance(topology, ClusterTopology):
        return topology.nodes
    if isinstance(topology, ReplicasTopology):
        return topology.replicas
    return 1


def layout(
    recipe: Recipe,
    nodes: list[Node],
    flags: dict[str, Any] | None = None,
    platform: Platform | None = None,
    *,
    read_only_hub: bool = False,
) -> Layout:
    """Lay the recipe out on `nodes` (one per cluster node or replica; extra replicas wrap round).

    `flags` replaces the recipe's `vllm serve` flags (the runner pins a port, say); the order is kept.
    `platform` adds its profile to every server: options and env the recipe does not set, and on a
    multi-node cluster each node's network environment. `read_only_hub`: the profile mounts the Hugging Face
    cache's hub read-only (the runner's choice: catalogue.models.runner_mounts.hub_read_only).
    """
    lay = _layout(recipe, nodes, flags)
    if platform is None:
        return lay
    cluster = lay.kind == "cluster"
    rdma = cluster and all(s.node.hca for s in lay.servers)
    servers = [
        replace(
            s, profile=_profile(platform, s, cluster=cluster, rdma=rdma, image=s.image is not None, ro=read_only_hub)
        )
        for s in lay.servers
    ]
    return replace(lay, servers=servers)


def _profile(
    platform: Platform, server: ServerLaunch, *, cluster: bool, rdma: bool, image: bool, ro: bool = False
) -> ProfilePart:
    node = server.node
    part = profile_part(
        platform,
        server.options if image else [],
        server.env,
        node=node.net if cluster else None,
        role=node.slug,
        rdma=rdma,
        hf_folder=node.hf_home,
        read_only_hub=ro,
    )
    if image:
        return part
    # A local process takes no docker options, nor the container's cache folder: only the network environment.
    network = {k: v for k, v in part.env.items() if k != "HF_HOME"}
    return ProfilePart(part.platform, [], network if cluster else {}, [], part.per_node)


def _layout(recipe: Recipe, nodes: list[Node], flags: dict[str, Any] | None) -> Layout:
    flags = dict(recipe.serving.flags if flags is None else flags)
    serving = recipe.serving
    options = list(serving.container.options) if serving.container else []
    if serving.image and runs_serve_itself(serving.image) and not any(w.startswith("--entrypoint") for w in options):
        options = ["--entrypoint", "", *options]
    if serving.container and serving.container.name:
        options = ["--name", serving.container.name, *options]
    base = ServerLaunch(
        "server",
        nodes[0],
        [],
        int(flags.get("port", DEFAULT_PORT)),
        serving.image,
        options,
        dict(serving.env),
        env_names=list(serving.env_from_host),
    )
    topology = recipe.topology
    if isinstance(topology, ClusterTopology):
        return _cluster(recipe, topology, nodes, flags, base)
    if isinstance(topology, ReplicasTopology):
        return _replicas(recipe, topology, nodes, flags, base)
    return Layout("solo", [replace(base, serve=_serve(recipe, flags))], None)


def _serve(recipe: Recipe, flags: dict[str, Any]) -> list[str]:
    """`vllm serve MODEL flags`, or the simulator's command line in its place (the same flags, then its own)."""
    if recipe.serving.simulator is not None:
        return ["python", "-m", "simulator", recipe.model_arg, *flags_argv(flags), *recipe.serving.simulator.argv()]
    return ["vllm", "serve", recipe.model_arg, *flags_argv(flags)]


def _cluster(
    recipe: Recipe, topology: ClusterTopology, nodes: list[Node], flags: dict[str, Any], base: ServerLaunch
) -> Layout:
    if len(nodes) < topology.nodes:
        raise ValueError(f"topology.nodes is {topology.nodes} but {len(nodes)} node(s) were given")
    nodes = nodes[: topology.nodes]
    head = nodes[0]
    if flags.get("distributed-executor-backend") == "ray":
        # Ray: every node joins one Ray cluster (VLLM_HOST_IP says which address is its own), then `vllm serve`
        # runs once, on the head, and Ray places the tensor-parallel workers.
        servers = [
            replace(
                base,
                role="head (Ray head)",
                node=head,
                serve=["ray", "start", "--head", "--port", str(RAY_PORT), "--node-ip-address", head.address, "--block"],
                exec_serve=_serve(recipe, flags),
            )
        ]
        servers += [
            replace(
                base,
                role=f"worker {i} (Ray worker)",
                node=node,
                port=None,
                serve=[
                    "ray",
                    "start",
                    "--address",
                    f"{head.address}:{RAY_PORT}",
                    "--node-ip-address",
                    node.address,
                    "--block",
                ],
            )
            for i, node in enumerate(nodes[1:], start=1)
        ]
        return Layout("cluster", servers, None, ray=True)
    master_port = int(flags.get("master-port", MASTER_PORT))
    servers = []
    for rank, node in enumerate(nodes):
        node_flags = {
            key: value
            for key, value in flags.items()
            if key not in ("master-addr", "master-port", "nnodes", "node-rank")
        }
        node_flags.update(
            {"nnodes": topology.nodes, "node-rank": rank, "master-addr": head.address, "master-port": master_port}
        )
        if rank:
            node_flags["headless"] = True
        role = "head (rank 0)" if rank == 0 else f"worker (rank {rank}, headless)"
        servers.append(
            replace(base, role=role, node=node, serve=_serve(recipe, node_flags), port=None if rank else base.port)
        )
    return Layout("cluster", servers, None)


def _replicas(
    recipe: Recipe, topology: ReplicasTopology, nodes: list[Node], flags: dict[str, Any], base: ServerLaunch
) -> Layout:
    servers = []
    taken: set[tuple[str, int]] = set()
    for i in range(topology.replicas):
        node = nodes[i % len(nodes)]
        port = base.port or DEFAULT_PORT
        while (node.address, port) in taken:  # two replicas on one address need two ports
            port += 1
        taken.add((node.address, port))
        replica_flags = {**flags, "port": port} if port != base.port or "port" in flags else flags
        servers.append(
            replace(base, role=f"replica {i + 1}", node=node, port=port, serve=_serve(recipe, replica_flags))
        )
    return Layout("replicas", servers, router_for(recipe, topology, servers))


def router_for(recipe: Recipe, topology: ReplicasTopology, servers: list[ServerLaunch]) -> RouterLaunch:
    """LiteLLM's proxy config: one deployment per replica under the served model name, the recipe's strategy."""
    name = served_name(recipe)
    model_list = [
        {
            "model_name": name,
            "litellm_params": {"model": f"hosted_vllm/{name}", "api_base": f"{server.base_url}/v1", "api_key": "none"},
        }
        for server in servers
    ]
    config = {
        "model_list": model_list,
        "router_settings": {"routing_strategy": topology.routing_strategy},
        "litellm_settings": {"drop_params": True},
        "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},  # LiteLLM refuses to start without one
    }
    return RouterLaunch(config, ROUTER_PORT, topology.routing_strategy)
