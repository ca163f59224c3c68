"""Mounts as docker reads them, and the run policy's verdict on each host folder.

`--mount` values are CSV as docker's CLI reads them (catalogue.policy.docker_csv: Go's encoding/csv, the first record
only; a value docker cannot read is refused), keys and the values of `type` and `bind-propagation` are case-insensitive,
and a local volume whose `volume-opt` names a `device` is a bind of that host path. `-v` is `source:target[:mode]`;
a source that is not a path is a named volume.

The verdict is on the path docker will use (`~` and `..` resolved: `~/..` is the folder above the home folder): system
folders, sockets, credentials and relative paths never; the Hugging Face cache of the platform profile and the
folders the owner names in the hosts file without consent; any other host folder with consent."""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field

from catalogue.policy import paths as rules
from catalogue.policy.docker_csv import CsvError, first_record

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
    device: bool = False
    """The source is a local volume's `device` (the engine, not the CLI, resolves it)."""
    unreadable: str | None = None
    """Why docker's CLI refuses the value (its CSV reader), when it does."""


@dataclass(frozen=True)
class PolicyContext:
    """What the policy knows beyond the recipe: the platform profile's HF cache, the owner's folders."""

    hf_cache_target: str | None = None
    """Where the profile mounts the Hugging Face cache in the container; a recipe mount there is folded into it."""
    owner_folders: tuple[str, ...] = field(default_factory=tuple)
    """Folders the owner names in the hosts file (`allow_mounts`): mounted without consent."""
    profile_env: tuple[str, ...] = field(default_factory=tuple)
    """Variables the platform profile takes from the owner's environment (allowed in env_from_host)."""
    trusted_images: tuple[str, ...] = field(default_factory=tuple)
    """Image repositories and namespaces (`nvcr.io/nvidia/`) that run without consent: the profile's and the owner's."""


def host_path(source: str) -> str:
    """A host path as the kernel will see it: `//a/./b/../c/` -> `/a/c`; `~`, `$HOME` and `${HOME}` are the home
    folder (shown as `~` while the path stays inside it: `~/..` is `/home`, or `/` for root's `/root`)."""
    source = re.sub("/+", "/", HOME.sub("~", source))
    if source == "~" or source.startswith("~/"):
        home = os.path.expanduser("~").rstrip("/") or "/"
        path = posixpath.normpath(home + source[1:])
        if path == home or path.startswith(home + "/"):
            return "~" + path[len(home) :]
        return path
    return posixpath.normpath(source)


def is_relative(path: str) -> bool:
    """A host path docker resolves against some process's working folder (neither absolute nor `~`)."""
    return not path.startswith(("/", "~"))


def csv_fields(value: str) -> list[str]:
    """The fields of a `--mount` value as docker's CLI reads them (its first CSV record); CsvError where it cannot."""
    return first_record(value)


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
    try:
        fields = csv_fields(value)
    except CsvError as exc:
        return Mount(None, None, unreadable=str(exc))
    for item in fields:
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
        return Mount(device, dest, shared, tuple(options), driver, device is not None)
    return Mount(None, dest)


def device_verdict(device: str, context: PolicyContext | None = None) -> tuple[str, str] | None:
    """mount_verdict for a local volume's `device`: a relative one is never (the engine resolves it, from `/`)."""
    if is_relative(host_path(device)):
        return "never", rules.MOUNT_NEVER_WHY["device"]
    return mount_verdict(device, context)


def mount_verdict(source: str, context: PolicyContext | None = None) -> tuple[str, str] | None:
    """('never', why) or ('consent', why) for a host path; None for a folder the owner allowed."""
    path = host_path(source)
    parts = [p for p in path.split("/") if p]
    if is_relative(path) and not [p for p in parts if p not in (".", "..")]:
        return "never", rules.MOUNT_NEVER_WHY["relative"]
    if is_relative(path):
        return "consent", rules.MOUNT_RELATIVE_WHY
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
    runs = {tuple(parts[i : i + len(run)]) for run in rules.CREDENTIAL_PATHS for i in range(len(parts))}
    if runs & set(rules.CREDENTIAL_PATHS):
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
