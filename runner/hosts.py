"""The machines a refresh runs on, each reached through the docker CLI's own remote support.

`--hosts a,b` names hosts in order (the first is the head, or replica 1). Each word is:
- `local`: this machine's docker engine (or a local process), address 127.0.0.1;
- a name from the hosts file (`hosts.yaml`, or `--hosts-file`);
- `ssh://user@host[:port]`: `docker -H ssh://...`, address `host`;
- any other word: a docker context of that name (`docker --context NAME`), address the same word.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from catalogue.errors import CatalogueError
from catalogue.topology import Node
from catalogue.yaml_files import parse_yaml

HOSTS_FILE = Path("hosts.yaml")


@dataclass(frozen=True)
class Host:
    """A machine: its name, how the docker CLI reaches it, and its address for the other nodes."""

    name: str
    docker: str | None
    """None: the local engine; `ssh://...`: a remote engine over SSH; else a docker context name."""
    address: str

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
        return Node(self.name, self.address)


LOCAL = Host("local", None, "127.0.0.1")


class HostEntry(BaseModel):
    """One machine in the hosts file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    docker: str = Field("local", description="`local`, `ssh://user@host[:port]`, or a docker context name.")
    address: str | None = Field(None, description="Address the other nodes and the client use; default: the SSH host.")


class HostsFile(BaseModel):
    """`hosts.yaml`: host name -> how to reach it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hosts: dict[str, HostEntry] = Field(description="Hosts by name.")


def load_hosts_file(path: Path) -> dict[str, Host]:
    """Hosts by name from a hosts file; a one-line error naming the file and the field."""
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"), path) or {}
        parsed = HostsFile.model_validate(data)
    except OSError as exc:
        raise CatalogueError(path, f"cannot read: {exc.strerror}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        raise CatalogueError(path, f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}") from None
    return {name: _host(name, entry.docker, entry.address) for name, entry in parsed.hosts.items()}


def _host(name: str, docker: str, address: str | None) -> Host:
    if docker == "local":
        return Host(name, None, address or "127.0.0.1")
    if docker.startswith("ssh://"):
        return Host(name, docker, address or (urlsplit(docker).hostname or name))
    return Host(name, docker, address or name)


def parse_hosts(spec: str | None, hosts_file: Path | None = None) -> list[Host]:
    """The hosts of `--hosts`, in order; none given means this machine only."""
    if not spec:
        return [LOCAL]
    known = load_hosts_file(hosts_file) if hosts_file else (load_hosts_file(HOSTS_FILE) if HOSTS_FILE.exists() else {})
    hosts = []
    for word in (w.strip() for w in spec.split(",")):
        if not word:
            raise CatalogueError(Path("--hosts"), f"empty host name in {spec!r}")
        if word in known:
            hosts.append(known[word])
        elif word == "local":
            hosts.append(LOCAL)
        else:
            hosts.append(_host(urlsplit(word).hostname or word if word.startswith("ssh://") else word, word, None))
    return hosts
