"""The machines a refresh runs on, each reached through the docker CLI's own remote support.

`--hosts a,b` names hosts in order (the first is the head, or replica 1). Each word is:
- `local`: this machine's docker engine (or a local process), address 127.0.0.1;
- a name from the hosts file (the owner's `$XDG_CONFIG_HOME/catalogue/hosts.yaml`, default
  `~/.config/catalogue/hosts.yaml`, or `--hosts-file FILE`);
- `ssh://user@host[:port]`: `docker -H ssh://...`, address `host`;
- a docker context that exists (`docker context ls`): `docker --context NAME`, address the same word;
- any other word, a bare host name or address: `docker -H ssh://WORD` through the owner's ssh config.

The hosts file also gives each host the address the other nodes, the router and the client use (the one on
the fast link, not necessarily the ssh name), that link's interface, its RDMA device, and its HF cache.
It says which engines the runner drives, so it lives in the owner's config folder, never in the repository
(a `hosts.yaml` in a pull request could point a host at another engine): one in the working folder is not read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from catalogue.models.bounded import MAX_YAML_BYTES, read_bounded
from catalogue.models.errors import CatalogueError
from catalogue.models.topology import Node
from catalogue.models.yaml_files import parse_yaml
from runner.hosts.child_env import child_env

HOSTS_NAME = "hosts.yaml"


def hosts_file_path() -> Path:
    """The owner's hosts file: `$XDG_CONFIG_HOME/catalogue/hosts.yaml`, by default `~/.config/catalogue/hosts.yaml`
    (a relative XDG_CONFIG_HOME is ignored, as the XDG base directory specification says)."""
    config = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(config) if os.path.isabs(config) else Path.home() / ".config"
    return base / "catalogue" / HOSTS_NAME


HOSTS_FILE = hosts_file_path()
"""The owner's hosts file when this module was imported (`hosts_file_path()` reads the environment again)."""


@dataclass(frozen=True)
class Host:
    """A machine: its name, how the docker CLI reaches it, and its address for the other nodes."""

    name: str
    docker: str | None
    """None: the local engine; `ssh://...`: a remote engine over SSH; else a docker context name."""
    address: str
    interface: str | None = None
    """The network interface of the link between the nodes (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, ...)."""
    hca: str | None = None
    """The RDMA device(s) of that link (NCCL_IB_HCA); RDMA is used when every node of a cluster names one."""
    hf_home: str | None = None
    """The Hugging Face cache folder on this host, when not the profile's default."""
    allow_mounts: tuple[str, ...] = ()
    """Host folders the owner lets recipes mount without consent (a model store, say)."""
    trusted_images: tuple[str, ...] = ()
    """Image repositories or namespaces (ending in `/`) the owner trusts on this host, beyond the profile's."""

    @property
    def is_local(self) -> bool:
        return self.docker is None

    def docker_cli(self) -> list[str]:
        """The docker command that talks to this host's engine."""
        if self.docker is None:
            return ["docker"]
        if self.docker.startswith("ssh://") or self.docker.startswith("tcp://"):
            return ["docker", "-H", self.docker]
        return ["docker", "--context", self.docker]

    @property
    def node(self) -> Node:
        return Node(self.name, self.address, self.interface, self.hca, self.hf_home)

    @property
    def on_loopback(self) -> bool:
        """True when the other nodes would be told to reach this host at a loopback address."""
        return is_loopback(self.address)


def is_loopback(address: str) -> bool:
    """127.0.0.0/8, ::1 or localhost."""
    return address.startswith("127.") or address in ("::1", "localhost")


LOCAL = Host("local", None, "127.0.0.1")


def trusted_everywhere(hosts: list[Host]) -> list[str]:
    """The image publishers the owner trusts on every one of `hosts` (hosts file `trusted_images`)."""
    lists = [set(host.trusted_images) for host in hosts]
    return sorted(set.intersection(*lists)) if lists else []


class HostEntry(BaseModel):
    """One machine in the hosts file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    docker: str = Field(
        "local", description="`local`, `ssh://user@host[:port]`, a docker context name, or a bare ssh host name."
    )
    address: str | None = Field(
        None,
        description="Address the other nodes, the router and the client use (on the fast link); default: the ssh host.",
    )
    interface: str | None = Field(
        None, description="Interface of the link between the nodes, e.g. enp1s0f1np1 (`ip -br addr` lists them)."
    )
    hca: str | None = Field(None, description="RDMA device(s) of that link for NCCL_IB_HCA, e.g. rocep1s0f1.")
    hf_home: str | None = Field(None, description="Hugging Face cache folder on this host; default: the profile's.")
    allow_mounts: list[str] = Field(
        default_factory=list,
        description="Host folders (absolute, or ~/...) recipes may mount on this host without the owner's consent.",
    )
    trusted_images: list[str] = Field(
        default_factory=list,
        description="Image repositories (`me/vllm`) or namespaces (`ghcr.io/me/`) that run on this host without the "
        "owner's consent, beyond the platform profile's; recipes may pass them the owner's variables.",
    )


class HostsFile(BaseModel):
    """`hosts.yaml`: host name -> how to reach it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hosts: dict[str, HostEntry] = Field(description="Hosts by name.")


def load_hosts_file(path: Path) -> dict[str, Host]:
    """Hosts by name from a hosts file; a one-line error naming the file and the field."""
    try:
        data = parse_yaml(read_bounded(path, MAX_YAML_BYTES), path) or {}
        parsed = HostsFile.model_validate(data)
    except OSError as exc:
        raise CatalogueError(path, f"cannot read: {exc.strerror}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise CatalogueError(path, f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}") from None
    return {
        name: replace(
            _host(name, e.docker, e.address),
            interface=e.interface,
            hca=e.hca,
            hf_home=e.hf_home,
            allow_mounts=tuple(e.allow_mounts),
            trusted_images=tuple(e.trusted_images),
        )
        for name, e in parsed.hosts.items()
    }


def _host(name: str, docker: str, address: str | None) -> Host:
    if docker == "local":
        return Host(name, None, address or "127.0.0.1")
    if "://" not in docker and docker not in docker_contexts():
        docker = f"ssh://{docker}"  # a bare name is an ssh host, as in the owner's ssh config
    if docker.startswith("ssh://"):
        return Host(name, docker, address or (urlsplit(docker).hostname or name))
    return Host(name, docker, address or name)


@cache
def docker_contexts() -> frozenset[str]:
    """Names of the docker contexts this user has (`docker context ls`); none when docker is missing."""
    try:
        out = subprocess.run(
            ["docker", "context", "ls", "--format", "{{.Name}}"],
            capture_output=True,
            text=True,
            timeout=20,
            env=child_env(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(out.stdout.split()) if out.returncode == 0 else frozenset()


def owner_hosts() -> dict[str, Host]:
    """The hosts of the owner's hosts file, none when there is none; a `hosts.yaml` in the working folder (where
    it used to be) is named in a note and not read."""
    if Path(HOSTS_NAME).is_file():
        print(
            f"note: ./{HOSTS_NAME} is not read (the hosts file lives in {hosts_file_path()}; or pass --hosts-file)",
            file=sys.stderr,
        )
    path = hosts_file_path()
    return load_hosts_file(path) if path.is_file() else {}


def parse_hosts(spec: str | None, hosts_file: Path | None = None) -> list[Host]:
    """The hosts of `--hosts`, in order; none given means this machine only."""
    if not spec:
        return [LOCAL]
    known = load_hosts_file(hosts_file) if hosts_file else owner_hosts()
    hosts = []
    for word in (w.strip() for w in spec.split(",")):
        if not word:
            raise CatalogueError(Path("--hosts"), f"empty host name in {spec!r}")
        if word in known:
            hosts.append(known[word])
        elif word == "local":
            hosts.append(LOCAL)
        else:
            name = (urlsplit(word).hostname or word) if word.startswith("ssh://") else word
            hosts.append(_host(name, word, None))
    return hosts
