"""The run policy on what docker made of each container, before any of them starts.

Every container of a run is made with `docker create` (the same words as `docker run`), read back with
`docker inspect`, rebuilt as options (runner.hosts.docker_view) and judged by catalogue.policy.check with the consent
the static gate saw and the owner's `--allow`s. A refusal removes every container it created and names each finding
in one line; otherwise the runner starts each one with `docker start -a`."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from catalogue.policy.check import (
    PolicyContext,
    PolicyFinding,
    check_env,
    check_env_paths,
    check_options,
    errors,
    missing_allows,
)
from catalogue.policy.docker_options import docker_options
from catalogue.policy.mounts import Mount, folds_into_hf_cache
from catalogue.policy.written_paths import Landing
from runner.hosts.child_env import child_env
from runner.hosts.containers import CACHE_ENV, CACHE_MOUNT
from runner.hosts.docker_view import LOG_DRIVER, DockerView, OwnMount, beyond, read_view
from runner.hosts.hosts import Host
from runner.planning.served_flags import judge_command

TIMEOUT_S = 120


class Refused(Exception):
    """Docker's view of a container breaks the run policy: nothing was started."""


@dataclass
class Container:
    """One container the runner means to start: its `docker run` argv and what the runner itself puts in it."""

    role: str
    host: Host
    argv: list[str]
    env: dict[str, str]
    """The docker CLI's environment (values of `-e NAME` words)."""
    labels: dict[str, str]
    """The runner's own labels (catalogue.*), exactly."""
    own_mounts: list[OwnMount] = field(default_factory=list)
    """The bind mounts the runner adds itself (raw results, driver, caches): left out of docker's view only where
    an entry of `docker inspect` equals one field by field."""
    by_name: list[str] = field(default_factory=list)
    """Variables passed by name from the owner's environment (judged by the static gate; never shown)."""
    interactive: bool = False
    own_entrypoint: bool = False
    """The runner sets the entrypoint itself (its helpers run python3; an image that runs `vllm serve` itself)."""


@dataclass
class Verdicts:
    """What the static gate accepted, against which docker's view is judged."""

    declared: dict[str, str]
    """Consent names with the reason the recipe (or platform profile) declares."""
    allowed: list[str]
    """The owner's `--allow` names."""
    context: PolicyContext | None = None


def create_argv(container: Container) -> list[str]:
    """`docker ... create <options> image ...` for `docker ... run <options> image ...`."""
    cli = container.host.docker_cli()
    if container.argv[: len(cli)] != cli or container.argv[len(cli)] != "run":
        raise ValueError(f"not a docker run command: {container.argv[:3]}")
    return [*cli, "create", *container.argv[len(cli) + 1 :]]


def start_argv(container: Container, cid: str) -> list[str]:
    """`docker ... start -a [-i] <id>`: attached, so the log and the exit code are the container's."""
    return [*container.host.docker_cli(), "start", "-a", *(["-i"] if container.interactive else []), cid]


def _docker(
    host: Host, args: list[str], env: Mapping[str, str] | None = None, by_name: list[str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*host.docker_cli(), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=TIMEOUT_S,
        env=child_env(env, by_name=by_name or (), remote=not host.is_local),
    )


def inspect(host: Host, cid: str) -> tuple[dict, dict[str, dict[str, str]]]:
    """`docker inspect` of a container, and the Options of each named volume it mounts."""
    out = _docker(host, ["inspect", cid])
    if out.returncode != 0:
        raise Refused(f"docker inspect {cid[:12]} failed: {out.stderr.strip()}")
    data = json.loads(out.stdout)[0]
    volumes: dict[str, dict[str, str]] = {}
    for mount in data.get("Mounts") or []:
        if mount.get("Type") == "volume" and mount.get("Name"):
            vol = _docker(host, ["volume", "inspect", "--format", "{{json .Options}}", mount["Name"]])
            volumes[mount["Name"]] = json.loads(vol.stdout or "null") or {} if vol.returncode == 0 else {}
    return data, volumes


def baseline(host: Host, image: str, labels: dict[str, str]) -> DockerView:
    """The view of a container of `image` created with nothing but the runner's labels (then removed)."""
    words = [w for k, v in labels.items() for w in ("--label", f"{k}={v}")]
    out = _docker(host, ["create", *words, image, "true"])
    if out.returncode != 0:
        raise Refused(f"docker create of a baseline {image} container failed: {out.stderr.strip()}")
    cid = out.stdout.strip()
    try:
        return read_view(*inspect(host, cid), resolve=host.is_local)
    finally:
        _docker(host, ["rm", "-f", "-v", cid])


def judge(container: Container, view: DockerView, base: DockerView, verdicts: Verdicts) -> list[PolicyFinding]:
    """The policy's findings on what docker made, beyond the baseline and the runner's own settings (its mounts
    were left out of `view` by read_view; its variables only where the value is exactly the one it passes): the
    options, the variables (a path variable by the host folder it reaches through a bind), the `vllm serve` flags of
    the command docker holds (runner.planning.served_flags), the labels and the log."""
    extra = beyond(view, base)
    options: list[str] = []
    for group in extra.options:
        if group[0] == "--entrypoint" and container.own_entrypoint:
            continue
        options += group
    found = check_options(options, verdicts.declared, verdicts.context)
    # The runner's own variables: what it passes by name, and its cache variables beside its own cache mount, each
    # recognised only where docker holds exactly the value the runner wrote.
    own = CACHE_ENV if any(m.target == CACHE_MOUNT for m in container.own_mounts) else {}
    passed = {**{name: os.environ.get(name) for name in container.by_name}, **container.env, **own}
    env = {k: v for k, v in extra.env.items() if k not in passed or passed[k] != v}
    found += check_env(env, declared=verdicts.declared)
    binds = [(s, t) for _, s, t in extra.mounts if not folds_into_hf_cache(Mount(s, t), verdicts.context)]
    found += check_env_paths(env, binds, verdicts.context, verdicts.declared)
    own = tuple((m.source, m.target) for m in container.own_mounts)
    landing = Landing(own, tuple(binds), view.workdir)
    found += judge_command(list(view.command), view.image, verdicts.declared, landing)
    found += _labels_and_log(container, view, base)
    found += _image(view, base)
    source = f"{container.role} container (docker inspect)"
    return [PolicyFinding(f.cls, f.option, f.why, f.how, f.basis, source, f.field, f.lineno, f.reason) for f in found]


IMAGE_WHY = (
    "docker made it of {image} ({id}), not of the planned image ({planned}): a word of the options was read as "
    "another's value, or as the image"
)


def _image(view: DockerView, base: DockerView) -> list[PolicyFinding]:
    """Never where the container is not of the planned image: the baseline was created with the planned reference
    alone, so its Config.Image and image id are what docker makes of that reference (an option left without its
    value, `--label --ipc host IMAGE`, made `host` the image and the rest the command)."""
    if (view.image, view.image_id) == (base.image, base.image_id):
        return []
    why = IMAGE_WHY.format(image=ascii(view.image)[:80], id=view.image_id[:19], planned=base.image)
    return [PolicyFinding("never", f"image {view.image[:60]}", why, "never allowed", "catalogue policy")]


def _labels_and_log(container: Container, view: DockerView, base: DockerView) -> list[PolicyFinding]:
    out: list[PolicyFinding] = []
    image_labels = {k: v for k, v in base.labels.items() if k not in container.labels}
    for key, value in view.labels.items():
        if key.startswith("catalogue.") and container.labels.get(key) != value and image_labels.get(key) != value:
            why = "a label of the runner's own, set to another value: clean-up finds its containers by them"
            out.append(PolicyFinding("never", f"--label {key}={value}", why, "never allowed", "catalogue policy"))
    for key, value in container.labels.items():
        if view.labels.get(key) != value:
            why = f"docker did not keep the runner's label ({value}): clean-up could not find the container"
            out.append(PolicyFinding("never", f"--label {key}", why, "never allowed", "catalogue policy"))
    if view.log != (LOG_DRIVER, ()):
        why = f"the log goes to {view.log[0]} {dict(view.log[1]) or ''}".rstrip() + ", not where the runner keeps it"
        out.append(PolicyFinding("never", "--log-driver", why, "never allowed", "CIS 2.13"))
    return out


def normal_allow(name: str) -> str:
    """`cap-add=IPC_LOCK`, `--cap-add=IPC_LOCK` and `--cap-add IPC_LOCK` all name '--cap-add IPC_LOCK'."""
    name = " ".join(name.split())
    head = name.split("=", 1)[0].split(" ", 1)[0]
    if not name.startswith("-") and head in docker_options().takes_value:
        name = "--" + name
    head, eq, value = name.partition("=")
    return f"{head} {value}" if eq and " " not in head else name


def refusal_lines(found: list[PolicyFinding], allowed: list[str]) -> list[str]:
    """One line per finding that stops the run: never, undeclared consent, consent the owner did not give."""
    lines = [str(f) for f in errors(found)]
    for name in missing_allows(found, [normal_allow(a) for a in allowed]):
        finding = next((f for f in found if f.option == name and not f.is_error), None)
        if finding is None:
            continue  # undeclared: listed above
        lines.append(
            f"{finding.source}: consent: {name}: {finding.why}; the owner has not allowed it (--allow '{name}')"
        )
    return lines


def create_all(containers: list[Container], image_of: Mapping[str, str], verdicts: Verdicts) -> dict[str, list[str]]:
    """Create every container, judge docker's view of each; the argv that starts each one, by role.

    On a refusal (or a create that fails) every container created so far is removed and Refused raised."""
    created: list[tuple[Host, str]] = []
    starts: dict[str, list[str]] = {}
    bases: dict[tuple[str, str], DockerView] = {}
    lines: list[str] = []
    try:
        for container in containers:
            image = image_of[container.role]
            key = (" ".join(container.host.docker_cli()), image)
            if key not in bases:
                bases[key] = baseline(container.host, image, container.labels)
            args = create_argv(container)[len(container.host.docker_cli()) :]
            out = _docker(container.host, args, container.env, container.by_name)
            if out.returncode != 0:
                error = out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]
                raise Refused(f"{container.role} container: docker create refused it: {error[0]}")
            cid = out.stdout.strip()
            created.append((container.host, cid))
            view = read_view(*inspect(container.host, cid), resolve=container.host.is_local, own=container.own_mounts)
            found = judge(container, view, bases[key], verdicts)
            lines += refusal_lines(found, verdicts.allowed)
            starts[container.role] = start_argv(container, cid)
        if lines:
            raise Refused("\n".join(dict.fromkeys(lines)))
    except BaseException:
        for host, cid in created:
            _docker(host, ["rm", "-f", "-v", cid])
        raise
    return starts
