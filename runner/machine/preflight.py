"""Preflight: before anything starts, every host answers, has the image (or pulls it), sees its GPU and the
link's interface, and no server already answers where the run's servers and router will listen.

Each failure is one line naming the host and what to fix; the checks start nothing that outlives them
(throwaway containers run with --rm and the run's label). What they found goes into the run's provenance.
"""

from __future__ import annotations

import json
import platform
import re
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from catalogue.models.benchmark import HostFacts
from catalogue.models.bounded import load_json
from catalogue.models.errors import CatalogueError
from catalogue.models.image_refs import digest_of, repository
from catalogue.models.revision import is_revision
from runner.hosts.child_env import child_env, for_argv
from runner.hosts.containers import RUNNER_OPTIONS
from runner.hosts.hosts import Host
from runner.hosts.raw_files import reply_version
from runner.planning.plan import Plan

FACTS = Path(__file__).resolve().parents[1] / "scripts" / "facts.py"
TIMEOUT_S = 30
PULL_TIMEOUT_S = 3600


class PreflightFailed(Exception):
    """One or more hosts are not ready; the message has one line per problem."""


@dataclass
class Preflight:
    """What the checks found, host by host (kept in the run's provenance)."""

    found: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    hosts: list[HostFacts] = field(default_factory=list)


def run_preflight(plan: Plan) -> Preflight:
    """Check every host and port; raise PreflightFailed listing every problem, else return what was found."""
    result = Preflight()
    if plan.image is None:
        result.hosts.append(local_process_facts(plan))
    else:
        for host in plan.engines if plan.client == "image" else plan.hosts:
            check_host(plan, host, result)
    check_ports(plan, result)
    if result.problems:
        raise PreflightFailed("\n".join(result.problems))
    return result


def docker(host: Host, *args: str, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """A docker CLI call on `host`; a host that does not answer in time is a failed call, not an exception."""
    try:
        argv = [*host.docker_cli(), *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=for_argv(argv))
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess([], 124, "", f"no answer within {timeout:.0f} s")
    except OSError as exc:
        return subprocess.CompletedProcess([], 127, "", str(exc))


def _why(out: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in (out.stderr or out.stdout).splitlines() if line.strip()]
    return lines[-1] if lines else f"exit code {out.returncode}"


def check_host(plan: Plan, host: Host, result: Preflight) -> None:
    """docker answers; the image is there (pulled if not); one throwaway container reports the host and image
    (GPU, interfaces, vLLM, model revision, CPU): a GPU platform's container must see its GPU, a cluster node
    its interface."""
    where = "this machine's engine" if host.is_local else host.docker
    version = docker(host, "version", "--format", "{{.Server.Version}}")
    if version.returncode != 0:
        result.problems.append(
            f"host {host.name}: docker does not answer ({where}): {_why(version)}; "
            + ("start the docker engine" if host.is_local else "check `ssh` to it and that docker runs there")
        )
        return
    result.found.append(f"host {host.name}: docker engine {version.stdout.strip()}")
    assert plan.image is not None
    image = image_on(host, plan.image, result)
    if image is None or host not in plan.hosts:
        return  # this machine only runs the client and the flag snapshot: the image is all it needs
    gpu = ["--gpus", "all"] if plan.gpu else []
    reported = throwaway(
        plan, host, [*gpu, "--network", "host", *plan.reads, "--entrypoint", "python3"], facts_argv(plan)
    )
    if reported.returncode != 0 or not reported.stdout.strip().startswith("{"):
        what = f"--gpus all {plan.image}" if plan.gpu else plan.image
        fix = "; install the NVIDIA container toolkit and restart docker there" if plan.gpu else ""
        result.problems.append(f"host {host.name}: a container of `{what}` did not start: {_why(reported)}{fix}")
        return
    seen = printed_facts(reported.stdout)
    if seen is None:
        result.problems.append(f"host {host.name}: a container of `{plan.image}` printed facts that are no JSON object")
        return
    if plan.gpu and seen.get("gpu", "no GPU") == "no GPU":
        result.problems.append(
            f"host {host.name}: no GPU inside a container (`docker run --gpus all {plan.image}` has no nvidia-smi); "
            "install the NVIDIA container toolkit and restart docker there"
        )
    if plan.gpu:
        result.found.append(
            f"host {host.name}: {seen.get('gpu')} (driver {seen.get('gpu_driver')}, CUDA {seen.get('cuda')})"
        )
    for name in sorted({n.host.interface for n in plan.nodes if n.host == host and n.host.interface}):
        if plan.kind != "cluster":
            break
        if name not in seen.get("interfaces", []):
            result.problems.append(
                f"host {host.name}: no interface {name} (it has {', '.join(seen.get('interfaces', []))}); "
                f"set hosts.{host.name}.interface in hosts.yaml to the link between the machines"
            )
        else:
            result.found.append(f"host {host.name}: interface {name} present")
    result.hosts.append(host_facts(plan, host, version.stdout.strip(), image, seen))


def facts_argv(plan: Plan) -> list[str]:
    """`python3 -c <facts.py> MODEL [REVISION]`: the script travels as an argument, so a remote host needs no file."""
    return ["-c", FACTS.read_text(), plan.model_arg, *([plan.revision] if plan.revision else [])]


def printed_facts(stdout: str) -> dict | None:
    """The last line facts.py printed (in the recipe's image: untrusted), parsed within the nesting and number limits;
    only its text values (and `interfaces`, a list of text) are kept; None when it is no JSON object."""
    try:
        data = load_json(stdout.strip().splitlines()[-1], "facts")
    except (CatalogueError, IndexError):
        return None
    if not isinstance(data, dict):
        return None
    keep: dict[str, str | list[str]] = {key: value for key, value in data.items() if isinstance(value, str)}
    names = data.get("interfaces")
    if isinstance(names, list) and all(isinstance(name, str) for name in names):
        keep["interfaces"] = names
    return keep


def _seen(seen: dict) -> dict[str, str | None]:
    """The HostFacts fields that facts.py reported."""
    return {
        "cpu": seen.get("cpu"),
        "vllm_version": seen.get("vllm_version"),
        "vllm_commit": seen.get("vllm_commit"),
        "model_revision": revision if is_revision(revision := str(seen.get("model_revision") or "")) else "",
        "model_revision_from": seen.get("model_revision_from"),
        "gpu": seen.get("gpu"),
        "gpu_driver": seen.get("gpu_driver") or None,
        "cuda": seen.get("cuda") or None,
    }


def host_facts(plan: Plan, host: Host, version: str, image_id: str, seen: dict) -> HostFacts:
    """The provenance of one host: its engine, kernel and OS (docker info), the image's digest, what the
    throwaway container saw."""
    assert plan.image is not None
    info = docker(host, "info", "--format", "{{.KernelVersion}}\t{{.OperatingSystem}}")
    kernel, _, os_name = info.stdout.strip().partition("\t")
    digests = docker(host, "image", "inspect", "--format", "{{json .RepoDigests}}", plan.image)
    try:
        listed = json.loads(digests.stdout or "[]") or []
    except ValueError:
        listed = []
    # an image tagged in several repositories lists a digest per repository: only the recipe's own counts
    digest = next((d for d in listed if isinstance(d, str) and digest_of(d, plan.image)), None)
    note = None if digest else f"built locally: reproducible only with its build recipe ({plan.image_source})"
    if listed and not digest:
        note = f"its registry digests name other repositories than {plan.image}: pull it by that name to pin it"
    return HostFacts(
        host=host.name,
        docker_version=version,
        kernel=kernel or None,
        os=os_name or None,
        image_id=image_id,
        image_digest=digest,
        image_note=note,
        **_seen(seen),
    )


def local_process_facts(plan: Plan) -> HostFacts:
    """The provenance of a local `vllm serve` process: this machine and this Python's vLLM."""
    argv = [sys.executable, *facts_argv(plan)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=child_env())
    seen = json.loads(out.stdout) if out.returncode == 0 and out.stdout.startswith("{") else {}
    return HostFacts(host="local", kernel=platform.release(), os=platform.platform(terse=True), **_seen(seen))


LOCAL_NAMESPACE = "docker.io/local/"
"""Images built on the host (`local/...`): trusted by the platform profiles, so never fetched from a registry, where
anyone could publish under that name."""


def image_on(host: Host, image: str, result: Preflight) -> str | None:
    """The image's id on `host`, pulled first when missing (docker's progress shown); None after a problem."""
    inspect = docker(host, "image", "inspect", "--format", "{{.Id}}", image)
    if inspect.returncode != 0 and repository(image).startswith(LOCAL_NAMESPACE):
        result.problems.append(
            f"host {host.name}: image {image} is not there, and an image of {LOCAL_NAMESPACE} is never pulled (the "
            "trust list trusts it as built on the host); build it there (see the recipe's image_source)"
        )
        return None
    if inspect.returncode != 0:
        print(f"host {host.name}: pulling {image} ...", file=sys.stderr, flush=True)
        try:
            pull = [*host.docker_cli(), "pull", image]
            pulled = subprocess.run(pull, timeout=PULL_TIMEOUT_S, check=False, env=for_argv(pull))
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
    """A container that removes itself, labelled with the run so that cleanup finds it if it hangs; no privilege
    gain, a read-only root, the runner's log driver."""
    assert plan.image is not None
    narrow = [*RUNNER_OPTIONS, "--read-only", "--tmpfs", "/tmp"]
    return docker(host, "run", "--rm", "--label", plan.label, *narrow, *options, plan.image, *command, timeout=120)


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
            return f"a server reporting version {reply_version(response, base_url) or '?'}"
    except (OSError, ValueError, CatalogueError):
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
