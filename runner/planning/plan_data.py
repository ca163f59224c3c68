"""What a plan is: NodeRun and Plan, plain data. runner/planning/plan.py decides them before anything starts; every step
of a refresh reads them (runner/planning/helper_containers.py too, which plan.py uses: so they live below both)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from catalogue.models.loading import RUNS_DIR
from catalogue.models.platform import ProfilePart
from catalogue.models.topology import RouterLaunch
from runner.hosts.containers import LABEL_RUN
from runner.hosts.docker_view import OwnMount
from runner.hosts.hosts import LOCAL, Host
from runner.planning.jobs import Job


def slug(text: str) -> str:
    """Lower-case letters, digits and '-' (a log or cache folder name)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def recipe_cache_name(recipe_id: str, folder: Path) -> str:
    """'<id>-<sha256 of the resolved recipe folder>': one recipe of one checkout (a stranger's recipe with the
    same id, in another folder, gets its own cache)."""
    return f"{recipe_id}-{_short_hash(str(folder.resolve()))}"


def compile_cache(root: str, image: str, recipe_id: str, folder: Path, launch: str | None = None) -> str:
    """A server's compile-cache folder: `<root>/<slug(image)>-<sha256(image)>/<id>-<sha256(folder)>`. The slug
    keeps it readable; the hashes of the exact image reference and of the recipe folder keep it injective (slugs
    collide: 'vllm/vllm-openai:v1' and 'vllm-vllm/openai:v1'), so no image or checkout loads another's artifacts.

    `launch` (launch_key): a recipe that runs code of its choice gets `-code-<sha256(launch)>` after that, a folder
    of that exact launch: what its code writes there (torch.compile's Python files) no other launch loads, such as
    the committed recipe after a pull request that edited it ran in the same checkout."""
    name = recipe_cache_name(recipe_id, folder) + (f"-code-{_short_hash(launch)}" if launch is not None else "")
    return f"{root}/{slug(image)}-{_short_hash(image)}/{name}"


def launch_key(model: str, serving: dict) -> str:
    """What a launch runs, as one text: the model argument and the serving block (JSON, keys sorted)."""
    return json.dumps({"model": model, "serving": serving}, sort_keys=True)


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
    """Variables passed by name from the owner's environment (`-e NAME` for a container; a local process's own)."""
    own_entrypoint: bool = False
    """The runner cleared the image's entrypoint itself (an image that runs `vllm serve`; the recipe sets none)."""

    @property
    def log_name(self) -> str:
        return f"server-{slug(self.role)}.log" if self.role != "server" else "server.log"


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
    seed_base: int = 0
    """Added to every client `--seed` of the refresh, levels and probes (`refresh --seed-base`): 0 by default, so
    every refresh of a recipe sends the same prompts and arrivals; a bench that repeats refreshes as independent
    trials gives each its own."""

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
