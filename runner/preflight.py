"""Preflight: before anything starts, every host answers, has the image (or pulls it), sees its GPU and the
link's interface, and no server already answers where the run's servers and router will listen.

Each failure is one line naming the host and what to fix; the checks start nothing that outlives them
(throwaway containers run with --rm and the run's label). What they found goes into the run's provenance.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from runner.hosts import Host
from runner.plan import Plan

TIMEOUT_S = 30
PULL_TIMEOUT_S = 3600


class PreflightFailed(Exception):
    """One or more hosts are not ready; the message has one line per problem."""


@dataclass
class Preflight:
    """What the checks found, host by host (kept in the run's provenance)."""

    found: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def run_preflight(plan: Plan) -> list[str]:
    """Check every host and port; raise PreflightFailed listing every problem, else return what was found."""
    result = Preflight()
    if plan.image is not None:
        checked = plan.engines if plan.client == "image" else plan.hosts
        for host in checked:
            check_host(plan, host, result)
    check_ports(plan, result)
    if result.problems:
        raise PreflightFailed("\n".join(result.problems))
    return result.found


def docker(host: Host, *args: str, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """A docker CLI call on `host`; a host that does not answer in time is a failed call, not an exception."""
    try:
        return subprocess.run([*host.docker_cli(), *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess([], 124, "", f"no answer within {timeout:.0f} s")
    except OSError as exc:
        return subprocess.CompletedProcess([], 127, "", str(exc))


def _why(out: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in (out.stderr or out.stdout).splitlines() if line.strip()]
    return lines[-1] if lines else f"exit code {out.returncode}"


def check_host(plan: Plan, host: Host, result: Preflight) -> None:
    """docker answers; the image is there (pulled if not); the GPU and the interface are visible."""
    where = "this machine's engine" if host.is_local else host.docker
    version = docker(host, "version", "--format", "{{.Server.Version}}")
    if version.returncode != 0:
        result.problems.append(
            f"host {host.name}: docker does not answer ({where}): {_why(version)}; "
            + ("start the docker engine" if host.is_local else "check `ssh` to it and that docker runs there")
        )
        return
    result.found.append(f"host {host.name}: docker engine {version.stdout.strip()}")
    if plan.image is None:
        return
    image = image_on(host, plan.image, result)
    if image is None:
        return
    needs_host_checks = host in plan.hosts
    if plan.gpu and needs_host_checks:
        gpus = throwaway(plan, host, ["--gpus", "all", "--entrypoint", "nvidia-smi"], ["-L"])
        if gpus.returncode != 0:
            result.problems.append(
                f"host {host.name}: no GPU inside a container (`docker run --gpus all {plan.image} nvidia-smi -L`: "
                f"{_why(gpus)}); install the NVIDIA container toolkit and restart docker there"
            )
        else:
            result.found.append(f"host {host.name}: " + "; ".join(gpus.stdout.strip().splitlines()))
    interfaces = {n.host.interface for n in plan.nodes if n.host == host and n.host.interface}
    if interfaces and needs_host_checks and len(plan.nodes) > 1 and plan.kind == "cluster":
        listing = throwaway(plan, host, ["--network", "host", "--entrypoint", "ls"], ["/sys/class/net"])
        present = set(listing.stdout.split())
        for name in sorted(interfaces):
            if listing.returncode != 0:
                result.problems.append(f"host {host.name}: cannot list its interfaces: {_why(listing)}")
            elif name not in present:
                result.problems.append(
                    f"host {host.name}: no interface {name} (it has {', '.join(sorted(present))}); "
                    f"set hosts.{host.name}.interface in hosts.yaml to the link between the machines"
                )
            else:
                result.found.append(f"host {host.name}: interface {name} present")


def image_on(host: Host, image: str, result: Preflight) -> str | None:
    """The image's id on `host`, pulled first when missing (docker's progress shown); None after a problem."""
    inspect = docker(host, "image", "inspect", "--format", "{{.Id}}", image)
    if inspect.returncode != 0:
        print(f"host {host.name}: pulling {image} ...", file=sys.stderr, flush=True)
        try:
            pulled = subprocess.run([*host.docker_cli(), "pull", image], timeout=PULL_TIMEOUT_S, check=False)
            code = pulled.returncode
        except (subprocess.TimeoutExpired, OSError):
            code = 1
        inspect = docker(host, "image", "inspect", "--format", "{{.Id}}", image) if code == 0 else inspect
        if code != 0 or inspect.returncode != 0:
            result.problems.append(
                f"host {host.name}: image {image} is not there and `docker pull` could not fetch it; "
                "build or load it on that host (see the recipe's image_source)"
            )
            return None
    image_id = inspect.stdout.strip()
    result.found.append(f"host {host.name}: image {image} {image_id}")
    return image_id


def throwaway(plan: Plan, host: Host, options: list[str], command: list[str]) -> subprocess.CompletedProcess[str]:
    """A container that removes itself, labelled with the run so that cleanup finds it if it hangs."""
    assert plan.image is not None
    return docker(host, "run", "--rm", "--label", plan.label, *options, plan.image, *command, timeout=120)


def check_ports(plan: Plan, result: Preflight) -> None:
    """No server may already answer where ours will: health would trust it and measure someone else's."""
    urls = [n.base_url for n in plan.nodes if n.base_url]
    if plan.router is not None:
        urls.append(plan.endpoint)
    for url in dict.fromkeys(urls):
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        if not listening(host, port):
            continue
        node = next((n for n in plan.nodes if n.base_url == url), None)
        owner = who_answers(url)
        container = container_on_port(node.host, port) if node and plan.image else None
        result.problems.append(
            f"{host}:{port} already answers ({owner}"
            + (f"; docker container {container} on host {node.host.name}" if container and node else "")
            + "): stop it, or give the refresh another --port"
        )


def listening(host: str, port: int) -> bool:
    """True when something accepts a TCP connection there."""
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def who_answers(base_url: str) -> str:
    """What the server there says it is: vLLM's /version, else 'not a vLLM server'."""
    try:
        with urllib.request.urlopen(f"{base_url}/version", timeout=3) as response:
            return f"a server reporting version {json.loads(response.read()).get('version', '?')}"
    except (OSError, ValueError):
        return "something that is not a vLLM server"


def container_on_port(host: Host, port: int) -> str | None:
    """The running container that publishes `port`, or whose command names it (host networking: `--port N`)."""
    out = docker(host, "ps", "--no-trunc", "--format", "{{.Names}}\t{{.Ports}}\t{{.Command}}")
    named = re.compile(rf"(?<![\w.]){port}(?!\d)")
    for line in out.stdout.splitlines():
        name, ports, command = [*line.split("\t"), "", ""][:3]
        if f":{port}->" in ports or named.search(command):
            return name
    return None
