"""Mounts as docker reads them, and the run policy's verdict on each host folder.

`--mount` values are CSV (docker's CLI reads them with Go's encoding/csv: a quoted field may hold commas), keys and
the values of `type` and `bind-propagation` are case-insensitive, and a local volume whose `volume-opt` names a
`device` is a bind of that host path. `-v` is `source:target[:mode]`; a source that is not a path is a named volume.

The verdict: system folders, engine sockets and credentials never; the Hugging Face cache of the platform profile
and the folders the owner names in the hosts file without consent; any other host folder with consent."""

from __future__ import annotations

import csv
import posixpath
import re
from dataclasses import dataclass, field

from catalogue import policy_rules as rules

HOME = re.compile(r"^(~|\$HOME|\$\{HOME\})(?=/|$)")
SHELL_SYNTAX = re.compile(r"\$[({A-Za-z_]|`")


@dataclass(frozen=True)
class Mount:
    """One mount as docker would make it: the host side (None for a named or anonymous volume) and the target."""

    source: str | None
    target: str | None
    shared: bool = False
    """Shared or rshared propagation: mounts made inside flow back to the host."""
    driver_options: tuple[str, ...] = ()
    """Volume-driver options other than a local `device` (NFS, CIFS, another driver's settings)."""
    driver: str | None = None
    """A volume driver other than `local`."""


@dataclass(frozen=True)
class PolicyContext:
    """What the policy knows beyond the recipe: the platform profile's HF cache, the owner's folders."""

    hf_cache_target: str | None = None
    """Where the profile mounts the Hugging Face cache in the container; a recipe mount there is folded into it."""
    owner_folders: tuple[str, ...] = field(default_factory=tuple)
    """Folders the owner names in the hosts file (`allow_mounts`): mounted without consent."""
    profile_env: tuple[str, ...] = field(default_factory=tuple)
    """Variables the platform profile takes from the owner's environment (allowed in env_from_host)."""


def host_path(source: str) -> str:
    """A host path as the kernel will see it: `//a/./b/../c/` -> `/a/c`; `~`, `$HOME` and `${HOME}` kept as `~`."""
    source = HOME.sub("~", source)
    return posixpath.normpath(re.sub("/+", "/", source))


def csv_fields(value: str) -> list[str]:
    """The fields of a `--mount` value as docker's CSV reader splits them (quotes hold commas)."""
    try:
        rows = list(csv.reader([value], strict=True))
    except csv.Error:
        return value.split(",")
    return rows[0] if rows else []


def parse_mount(name: str, value: str) -> Mount:
    """The mount a `-v`/`--volume` or `--mount` value makes."""
    if name == "volume":
        parts = value.split(":")
        if len(parts) == 1:
            return Mount(None, parts[0])
        source, target, mode = parts[0], parts[1], ",".join(parts[2:]).lower()
        shared = bool(re.search(r"(^|,)r?shared($|,)", mode))
        named = not source.startswith(("/", ".", "~", "$"))
        return Mount(None if named else source, target, shared)
    keys: dict[str, str] = {}
    options: list[str] = []
    device: str | None = None
    for item in csv_fields(value):
        key, _, val = item.partition("=")
        key = key.strip().lower()
        if key == "volume-opt":
            opt, _, opt_value = val.partition("=")
            if opt.strip().lower() == "device":
                device = opt_value
            elif opt.strip().lower() not in ("type", "o") or opt_value.strip().lower() not in ("none", "bind", "rbind"):
                options.append(val)
        else:
            keys[key] = val
    kind = keys.get("type", "volume").strip().lower()
    dest = keys.get("target") or keys.get("dst") or keys.get("destination")
    shared = keys.get("bind-propagation", "").strip().lower() in ("shared", "rshared")
    named_driver = keys.get("volume-driver", "").strip()
    driver = named_driver if named_driver not in ("", "local") else None
    if kind == "bind":
        return Mount(keys.get("source") or keys.get("src") or "", dest, shared)
    if kind == "volume":
        return Mount(device, dest, shared, tuple(options), driver)
    return Mount(None, dest)


def mount_verdict(source: str, context: PolicyContext | None = None) -> tuple[str, str] | None:
    """('never', why) or ('consent', why) for a host path; None for a folder the owner allowed."""
    path = host_path(source)
    parts = [p for p in path.split("/") if p]
    if path in rules.NEVER_EXACT:
        return "never", rules.MOUNT_NEVER_WHY["exact"].format(path=path)
    if re.fullmatch(r"/home/[^/]+|~", path):
        return "never", rules.MOUNT_NEVER_WHY["home"]
    for tree in rules.NEVER_TREES:
        if path == tree or path.startswith(tree + "/"):
            return "never", rules.MOUNT_NEVER_WHY["tree"].format(path=tree)
    if (parts and parts[-1] in rules.SOCKET_NAMES) or "docker.sock" in path:
        return "never", rules.MOUNT_NEVER_WHY["socket"]
    if any(p in rules.CREDENTIAL_PARTS for p in parts) or (parts and parts[-1] in rules.CREDENTIAL_FILES):
        return "never", rules.MOUNT_NEVER_WHY["credentials"]
    for folder in context.owner_folders if context else ():
        folder = host_path(folder)
        if path == folder or path.startswith(folder.rstrip("/") + "/"):
            return None
    return "consent", rules.MOUNT_CONSENT_WHY


def folds_into_hf_cache(mount: Mount, context: PolicyContext | None) -> bool:
    """The recipe mounts a host folder where the profile mounts the Hugging Face cache: the profile's mount wins."""
    if context is None or not context.hf_cache_target or mount.target is None:
        return False
    cache = posixpath.normpath(context.hf_cache_target)
    return posixpath.normpath(mount.target) in (cache, cache + "/hub")
