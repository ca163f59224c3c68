"""What docker made of a container, read back with `docker inspect`, as the `docker run` options that would make
it: the run policy then judges docker's own parse with the same rules as the recipe's words.

Only what differs from a baseline container of the same image on the same engine counts (the daemon's defaults,
e.g. the cgroup namespace on cgroup v1, and the image's own env and labels are not the recipe's doing)."""

from __future__ import annotations

import csv
import io
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

ANONYMOUS = re.compile(r"[0-9a-f]{64}")
"""The name docker gives an anonymous volume (`-v /x`, an image's VOLUME): made for this container, and new."""
LOG_DRIVER = "json-file"
"""The log driver the runner sets on every container it creates (the runner reads the output itself)."""


@dataclass(frozen=True)
class DockerView:
    """A created container as docker sees it: options rebuilt from HostConfig, env, labels, log config."""

    options: list[list[str]]
    """One group of words per setting (`["--cap-add", "IPC_LOCK"]`), mounts with their sources as docker has them."""
    mounts: list[tuple[str, str, str]]
    """(kind 'volume' or 'mount', host source, target) of each bind, and of each local volume backed by a device."""
    env: dict[str, str]
    labels: dict[str, str]
    log: tuple[str, tuple[tuple[str, str], ...]]
    command: tuple[str, ...] = ()
    """What the container runs: the entrypoint and its arguments, as docker holds them (Path, then Args)."""
    image: str = ""
    """The image as the container names it (Config.Image)."""
    workdir: str = "/"
    """The working folder its command starts in (Config.WorkingDir; `/` when empty): where a relative path lands."""
    image_id: str = ""
    """The id of the image docker made it of (Image: `sha256:...`)."""


@dataclass(frozen=True)
class OwnMount:
    """A bind mount the runner adds itself (`-v source:target[:mode]`), as `docker inspect` must list it."""

    source: str
    target: str
    mode: str = ""
    """The mode words after the target (`ro`), exactly as the runner wrote them."""

    def matches(self, entry: dict[str, Any], resolve: bool) -> bool:
        """Whether one `Mounts[]` entry is exactly this mount: type, source, destination, mode, RW, propagation."""
        source = entry.get("Source", "")
        same_source = source == self.source or (resolve and os.path.realpath(source) == os.path.realpath(self.source))
        return (
            entry.get("Type") == "bind"
            and same_source
            and entry.get("Destination") == self.target
            and entry.get("Mode", "") == self.mode
            and entry.get("RW") is ("ro" not in self.mode.split(","))
            and entry.get("Propagation") == "rprivate"
        )


def without_own(entries: list[dict[str, Any]], own: list[OwnMount], resolve: bool) -> list[dict[str, Any]]:
    """The `Mounts[]` entries left after taking away, once each, an entry exactly equal to each of the runner's own."""
    left = list(entries)
    for mount in own:
        index = next((i for i, entry in enumerate(left) if mount.matches(entry, resolve)), None)
        if index is not None:
            del left[index]
    return left


def _csv(fields: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(fields)
    return out.getvalue()


def home_form(path: str) -> str:
    home = os.path.expanduser("~").rstrip("/")
    if home and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def _mounts(
    data: dict[str, Any], volumes: dict[str, dict[str, str]], resolve: bool, own: list[OwnMount]
) -> tuple[list[list[str]], list]:
    host = data.get("HostConfig") or {}
    bind_targets = {b.split(":")[1] for b in host.get("Binds") or [] if b.count(":") >= 1}
    groups: list[list[str]] = []
    mounts: list[tuple[str, str, str]] = []
    for mount in without_own(data.get("Mounts") or [], own, resolve):
        target = mount.get("Destination", "")
        kind = "volume" if target in bind_targets else "mount"
        shared = mount.get("Propagation", "") in ("shared", "rshared")
        if mount.get("Type") == "bind":
            source = os.path.realpath(mount["Source"]) if resolve else mount["Source"]
            source = home_form(source)
            mounts.append((kind, source, target))
            if kind == "volume":
                groups.append(["--volume", f"{source}:{target}" + (":rshared" if shared else "")])
            else:
                fields = ["type=bind", f"source={source}", f"target={target}"]
                groups.append(["--mount", _csv([*fields, *(["bind-propagation=rshared"] if shared else [])])])
        elif mount.get("Type") == "volume":
            driver = mount.get("Driver") or "local"
            options = volumes.get(mount.get("Name", ""), {})
            fields = ["type=volume", f"target={target}"]
            if driver != "local":
                fields.append(f"volume-driver={driver}")
            fields += [f"volume-opt={k}={v}" for k, v in sorted(options.items())]
            if "device" in options:
                mounts.append(("mount", options["device"], target))
            if driver != "local" or options:
                groups.append(["--mount", _csv(fields)])
            elif not ANONYMOUS.fullmatch(name := str(mount.get("Name") or "")):  # a named volume, as it was given
                named = ["--volume", f"{name}:{target}"]
                groups.append(
                    named if kind == "volume" else ["--mount", _csv(["type=volume", f"source={name}", *fields[1:]])]
                )
    groups += _other_mounts(host)
    return groups, mounts


def _other_mounts(host: dict[str, Any]) -> list[list[str]]:
    """`--mount` groups of HostConfig.Mounts entries that are neither binds, volumes nor tmpfs (an image mount of
    docker 28, a type a later engine adds), as `type=..,source=..,target=..` for the policy to judge by its type."""
    out = []
    for mount in host.get("Mounts") or []:
        kind = str(mount.get("Type") or "").lower()
        if kind not in ("bind", "volume", "tmpfs"):
            fields = [f"type={kind}", f"source={mount.get('Source') or ''}", f"target={mount.get('Target') or ''}"]
            out.append(["--mount", _csv(fields)])
    return out


def _settings(host: dict[str, Any]) -> list[list[str]]:
    groups: list[list[str]] = []
    if host.get("Privileged"):
        groups.append(["--privileged"])
    groups += [["--cap-add", cap] for cap in host.get("CapAdd") or []]
    for key, option in (
        ("PidMode", "--pid"),
        ("IpcMode", "--ipc"),
        ("UTSMode", "--uts"),
        ("UsernsMode", "--userns"),
        ("CgroupnsMode", "--cgroupns"),
        ("NetworkMode", "--network"),
        ("Runtime", "--runtime"),
        ("CgroupParent", "--cgroup-parent"),
        ("ContainerIDFile", "--cidfile"),
        ("VolumeDriver", "--volume-driver"),
    ):
        if host.get(key):
            groups.append([option, str(host[key])])
    groups += [["--device", d.get("PathOnHost", "")] for d in host.get("Devices") or []]
    for request in host.get("DeviceRequests") or []:
        if request.get("Driver") == "cdi":
            groups += [["--device", device] for device in request.get("DeviceIDs") or []]
        else:
            groups.append(["--gpus", "all"])
    groups += [["--device-cgroup-rule", rule] for rule in host.get("DeviceCgroupRules") or []]
    # docker turns SELinux labelling off by itself when it shares the host's IPC or PID namespace (or privileged)
    implied = host.get("IpcMode") == "host" or host.get("PidMode") == "host" or host.get("Privileged")
    opts = [opt for opt in host.get("SecurityOpt") or [] if not (implied and opt in ("label=disable", "label:disable"))]
    groups += [["--security-opt", opt] for opt in opts]
    groups += [["--sysctl", f"{k}={v}"] for k, v in sorted((host.get("Sysctls") or {}).items())]
    groups += [["--add-host", h] for h in host.get("ExtraHosts") or []]
    groups += [["--dns", d] for d in host.get("Dns") or []]
    groups += [["--dns-search", d] for d in host.get("DnsSearch") or []]
    groups += [["--dns-option", d] for d in host.get("DnsOptions") or []]
    groups += [["--volumes-from", v] for v in host.get("VolumesFrom") or []]
    if host.get("OomKillDisable"):
        groups.append(["--oom-kill-disable"])
    if host.get("OomScoreAdj"):
        groups.append([f"--oom-score-adj={host['OomScoreAdj']}"])
    return groups


def _health(config: dict[str, Any]) -> list[list[str]]:
    """The health check's command as `--health-cmd` (the image's own is the baseline's too); none for NONE."""
    test = [str(word) for word in (config.get("Healthcheck") or {}).get("Test") or []]
    if not test or test[0] == "NONE":
        return []
    return [["--health-cmd", " ".join(test)]]


def read_view(
    data: dict[str, Any],
    volumes: dict[str, dict[str, str]] | None = None,
    *,
    resolve: bool = True,
    own: list[OwnMount] | None = None,
) -> DockerView:
    """The view of one `docker inspect` document; `volumes` holds `docker volume inspect` Options by name.

    With `resolve` (the engine runs on this machine) each bind source is resolved as the kernel will (realpath):
    a symlink is judged by what it points to. The runner's `own` mounts are left out only where an entry equals
    one of them field by field; nothing is exempted by its text."""
    host = data.get("HostConfig") or {}
    config = data.get("Config") or {}
    mount_groups, mounts = _mounts(data, volumes or {}, resolve, own or [])
    env = dict(item.partition("=")[::2] for item in config.get("Env") or [])
    log = host.get("LogConfig") or {}
    log_config = tuple(sorted((log.get("Config") or {}).items()))
    entrypoint = [["--entrypoint", " ".join(config.get("Entrypoint") or [])]]
    return DockerView(
        [*_settings(host), *mount_groups, *entrypoint, *_health(config)],
        mounts,
        env,
        dict(config.get("Labels") or {}),
        (log.get("Type", ""), log_config),
        (str(data.get("Path") or ""), *(str(a) for a in data.get("Args") or [])),
        str(config.get("Image") or ""),
        str(config.get("WorkingDir") or "/"),
        str(data.get("Image") or ""),
    )


def beyond(view: DockerView, baseline: DockerView) -> DockerView:
    """What the container has that a container of the same image with no options has not."""
    left = Counter(tuple(g) for g in baseline.options)
    options: list[list[str]] = []
    for group in view.options:
        if left[tuple(group)] > 0:
            left[tuple(group)] -= 1
        else:
            options.append(group)
    base_mounts = set(baseline.mounts)
    env = {k: v for k, v in view.env.items() if baseline.env.get(k) != v}
    labels = {k: v for k, v in view.labels.items() if baseline.labels.get(k) != v}
    mounts = [m for m in view.mounts if m not in base_mounts]
    return DockerView(options, mounts, env, labels, view.log, view.command, view.image, view.workdir, view.image_id)
