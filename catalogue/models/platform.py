"""Platform profiles (`platforms/<name>.yaml`): what every container on a kind of machine needs.

A recipe names its platform in `hardware.platform`. The profile's `docker run` options, environment and
Hugging Face cache mount apply wherever the recipe does not set the same option or variable itself; a
multi-node set-up adds the per-node network environment, filled in from the hosts file. The page, the
dry run and the runner all show the profile's part, marked as such.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pydantic import Field, ValidationError

from catalogue.models.bounded import MAX_YAML_BYTES, read_bounded
from catalogue.models.errors import CatalogueError, from_validation
from catalogue.models.passport import Gates
from catalogue.models.runner_mounts import hub_target, hub_volume
from catalogue.models.strict import Strict
from catalogue.models.yaml_files import parse_yaml
from catalogue.policy.docker_options import option_key, option_name, option_value, split_options

PLATFORMS_DIR = Path(__file__).resolve().parents[2] / "platforms"
NODE_FIELDS = ("interface", "address", "hca")
"""What a per-node value may name, in braces: fields of the host in the hosts file."""


class HfCache(Strict):
    """The Hugging Face cache, mounted from the host so a model is downloaded once per host."""

    host: str = Field(description="Host folder when neither the hosts file (`hf_home`) nor $HF_HOME names one.")
    container: str = Field(description="Where the container's vLLM and tokenizer look for it (its HF_HOME).")


class Rdma(Strict):
    """What RDMA (NCCL over the ConnectX-7 RoCE devices) adds, when the hosts file names each host's HCA."""

    options: list[str] = Field(description="`docker run` options RDMA needs (devices, capabilities).")
    env: dict[str, str] = Field(description="Environment per node; `{hca}` and the other host fields filled in.")


class MultiNode(Strict):
    """What a server spread over several nodes adds on each node."""

    env: dict[str, str] = Field(description="Environment per node: `{interface}`, `{address}` from the hosts file.")
    rdma: Rdma | None = Field(None, description="RDMA additions, used when every host names its `hca`.")


class Source(Strict):
    """Where a profile's values come from."""

    what: str = Field(min_length=1, description="Which values this source gives.")
    where: str = Field(min_length=1, description="URL or repository path.")


class Platform(Strict):
    """One kind of machine: the options, environment and mounts every recipe on it needs."""

    name: str = Field(pattern=r"^[a-z0-9-]+$", description="The slug recipes name in hardware.platform.")
    title: str = Field(min_length=1, description="What machines these are.")
    gpu: bool = Field(description="True: preflight checks the GPU runtime; two servers may not share one host.")
    options: list[str] = Field(default_factory=list, description="`docker run` options every container gets.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment every container gets.")
    hf_cache: HfCache | None = Field(None, description="The Hugging Face cache mount.")
    multi_node: MultiNode | None = Field(None, description="What a multi-node cluster adds per node.")
    sources: list[Source] = Field(default_factory=list, description="Where the values come from.")
    gates: Gates | None = Field(None, description="Thresholds on a host's state that a sweep must meet to start.")
    trusted_images: list[str] = Field(
        default_factory=list,
        description="Image publishers whose images run without consent: a repository (`vllm/vllm-openai`) or a "
        "namespace ending in `/` (`nvcr.io/nvidia/`); the owner adds more in the hosts file.",
    )


@dataclass(frozen=True)
class NodeNet:
    """A node's fields from the hosts file that a profile fills in; None when not given."""

    address: str
    interface: str | None = None
    hca: str | None = None
    hf_home: str | None = None


@dataclass(frozen=True)
class ProfilePart:
    """What a profile adds to one container, after the recipe's own options and env took precedence."""

    platform: str
    options: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    """Recipe options the profile makes moot, e.g. `-p` under host networking; said on the page and the dry run."""
    per_node: frozenset[str] = frozenset()
    """The env names that differ per node (the multi-node network settings)."""
    folded: list[str] = field(default_factory=list)
    """Recipe mounts of the Hugging Face cache that the profile's own cache mount replaces (the owner's folder)."""
    hub: str | None = None
    """Where the profile mounts the Hugging Face cache's hub in the container (runner_mounts.hub_target), if it does."""

    def summary(self) -> list[str]:
        """The added words as `--opt value` / `K=V` items, for a line that marks them."""
        items = [" ".join(group) for group in split_options(self.options)]
        return items + [f"{k}={v}" for k, v in self.env.items()]


class UnknownPlatform(ValueError):
    """A recipe names a platform with no profile."""


def load_platform(name: str, folder: Path = PLATFORMS_DIR) -> Platform:
    """One profile by name (read again only when its file changes); an unknown name lists the known ones."""
    path = folder / f"{name}.yaml"
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        known = ", ".join(sorted(p.stem for p in folder.glob("*.yaml"))) or "none"
        raise UnknownPlatform(f"unknown platform {name!r}: no {folder.name}/{name}.yaml (known: {known})") from None
    return _read_platform(path, stamp)


@lru_cache(maxsize=32)
def _read_platform(path: Path, _stamp: int) -> Platform:
    name = path.stem
    text = read_bounded(path, MAX_YAML_BYTES)
    try:
        platform = Platform.model_validate(parse_yaml(text, path))
    except ValidationError as exc:
        raise from_validation(path, exc, text) from None
    if platform.name != name:
        raise CatalogueError(path, f"name is {platform.name!r} but the file is {name}.yaml", "name")
    check_policy(path, platform)
    return platform


def check_policy(path: Path, platform: Platform) -> None:
    """A profile is held to the run policy as a recipe is: a never-class option or variable is a load error.
    (Its consent-class options, RDMA's, need the owner's --allow when a run uses them.)"""
    from catalogue.policy.check import check_env, check_options

    rdma = platform.multi_node.rdma if platform.multi_node else None
    sections = [
        ("options", check_options(platform.options, {})),
        ("env", check_env(platform.env)),
        ("multi_node.env", check_env(platform.multi_node.env) if platform.multi_node else []),
        ("multi_node.rdma.options", check_options(rdma.options, {}) if rdma else []),
        ("multi_node.rdma.env", check_env(rdma.env) if rdma else []),
    ]
    for field_name, found in sections:
        for finding in found:
            if finding.cls == "never":
                raise CatalogueError(path, finding.line(), field_name)


def fill(template: str, node: NodeNet, role: str) -> str:
    """`{interface}` etc. from the node; a field the hosts file does not give becomes a named placeholder."""
    out = template
    for name in NODE_FIELDS:
        value = getattr(node, name)
        out = out.replace("{" + name + "}", value if value else f"<{role}.{name}>")
    return out


def hf_host_folder(platform: Platform, node: NodeNet, environ: dict[str, str] | None = None) -> str:
    """The cache folder on the host: the hosts file's `hf_home`, else $HF_HOME, else the profile's default."""
    assert platform.hf_cache is not None
    env = os.environ if environ is None else environ
    return node.hf_home or env.get("HF_HOME") or platform.hf_cache.host


def profile_part(
    platform: Platform,
    recipe_options: list[str],
    recipe_env: dict[str, str],
    *,
    node: NodeNet | None = None,
    role: str = "node",
    rdma: bool = False,
    hf_folder: str | None = None,
    read_only_hub: bool = False,
) -> ProfilePart:
    """The profile's options and env that the recipe does not set itself; `node` adds the multi-node network env."""
    folded = [" ".join(g) for g in split_options(recipe_options) if is_hf_cache_mount(platform, g)]
    own = {option_key(group) for group in split_options(recipe_options) if " ".join(group) not in folded}
    options: list[str] = []
    wanted = list(platform.options)
    if platform.hf_cache is not None:
        # The hub folder only: the cache's `token` file stays on the host (a recipe takes HF_TOKEN by name).
        wanted += hub_volume(hf_folder or platform.hf_cache.host, platform.hf_cache.container, read_only_hub)
    env = dict(platform.env)
    if platform.hf_cache is not None:
        env["HF_HOME"] = platform.hf_cache.container
    node_env: dict[str, str] = {}
    if node is not None and platform.multi_node is not None:
        node_env.update(platform.multi_node.env)
        if rdma and platform.multi_node.rdma is not None:
            wanted += platform.multi_node.rdma.options
            node_env.update(platform.multi_node.rdma.env)
    env.update({k: fill(v, node, role) for k, v in node_env.items() if node is not None})
    for group in split_options(wanted):
        if option_key(group) not in own:
            options += group
    network = _network(recipe_options) or _network(options)
    dropped = [" ".join(g) for g in split_options(recipe_options) if network == "host" and option_key(g) == "publish"]
    env = {k: v for k, v in env.items() if k not in recipe_env}
    hub = hub_target(platform.hf_cache.container) if platform.hf_cache is not None else None
    return ProfilePart(platform.name, options, env, dropped, frozenset(node_env) & set(env), folded, hub)


def is_hf_cache_mount(platform: Platform, group: list[str]) -> bool:
    """A recipe's `-v`/`--mount` whose target is where the profile mounts the Hugging Face cache (or its hub)."""
    from catalogue.policy.mounts import PolicyContext, folds_into_hf_cache, parse_mount

    name = option_name(group)
    if platform.hf_cache is None or name not in ("volume", "mount"):
        return False
    return folds_into_hf_cache(parse_mount(name, option_value(group)), PolicyContext(platform.hf_cache.container))


def _network(options: list[str]) -> str | None:
    for group in split_options(options):
        if option_key(group) == "network":
            return group[-1].split("=", 1)[-1] if len(group) == 1 else group[1]
    return None


def without_dropped(options: list[str], part: ProfilePart) -> list[str]:
    """The recipe's options less those the profile makes moot."""
    gone = {*part.dropped, *part.folded}
    return [w for g in split_options(options) if " ".join(g) not in gone for w in g]
