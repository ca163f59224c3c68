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

from catalogue.models.runner_mounts import runner_binds
from catalogue.policy import paths as rules
from catalogue.policy.docker_csv import CsvError, first_record
from catalogue.policy.docker_options import walk_options

HOME = re.compile(r"^(~|\$HOME|\$\{HOME\})(?=/|$)")
MOUNT_ALIASES = {"src": "source", "dst": "target", "destination": "target", "ro": "readonly"}
"""docker's other spellings of a `--mount` key (docker/cli opts/mount.go): each sets the same field."""
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
    repeated: str | None = None
    """The spellings of a key the value gives more than once (`src, source`): docker keeps the last."""
    volume: str | None = None
    """The name of a named volume (docker reuses a volume of that name, or creates it)."""
    kind: str = "bind"
    """docker's mount type (`bind`, `volume`, `tmpfs`, `image`, or another docker does not make here)."""
    image: str | None = None
    """An image mount's image (`type=image,source=IMAGE`): its files appear at the target."""


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
    runner_binds: tuple[tuple[str, str], ...] = field(default_factory=lambda: runner_binds(None))
    """(host folder, container folder) of the binds the runner adds to a server container (runner_mounts)."""


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
        volume = source if named and source else None
        return Mount(None if named else source, target, shared, volume=volume, kind="bind" if not named else "volume")
    try:
        fields = csv_fields(value)
    except CsvError as exc:
        return Mount(None, None, unreadable=str(exc))
    keys, options, device, repeated = _mount_fields(fields)
    kind = keys.get("type", "volume").strip().lower()
    dest = keys.get("target")
    shared = keys.get("bind-propagation", "").strip().lower() in ("shared", "rshared")
    named_driver = keys.get("volume-driver", "").strip()
    driver = named_driver if named_driver not in ("", "local") else None
    if kind == "bind":
        return Mount(keys.get("source", ""), dest, shared, repeated=repeated)
    if kind == "volume":
        volume = keys.get("source", "").strip() or None if device is None else None
        return Mount(
            device,
            dest,
            shared,
            tuple(options),
            driver,
            device is not None,
            repeated=repeated,
            volume=volume,
            kind=kind,
        )
    image = keys.get("source", "").strip() if kind == "image" else None
    return Mount(None, dest, repeated=repeated, kind=kind, image=image)


def _mount_fields(fields: list[str]) -> tuple[dict[str, str], list[str], str | None, str | None]:
    """(keys by docker's name, volume-driver options, the local volume's device, the first key given twice) of a
    `--mount` value's fields. docker's CLI keeps the last value of a key under any of its spellings (`src=/a,
    source=/b` mounts /b), and so does this reading; a key given twice is also reported, to be refused."""
    keys: dict[str, str] = {}
    spelled: dict[str, list[str]] = {}
    options: list[str] = []
    device: str | None = None
    for item in fields:
        key, _, val = item.partition("=")
        key = key.strip().lower()
        opt, _, opt_value = val.partition("=")
        if key == "volume-opt":
            if opt.strip().lower() == "device":
                device = opt_value
            elif opt.strip().lower() not in ("type", "o") or opt_value.strip().lower() not in ("none", "bind", "rbind"):
                options.append(val)
        else:
            keys[MOUNT_ALIASES.get(key, key)] = val
        if key in ("volume-opt", "volume-label"):  # a map: each of its own keys once
            spelled.setdefault(f"{key}={opt.strip().lower()}", []).append(f"{key}={opt}")
        else:
            spelled.setdefault(MOUNT_ALIASES.get(key, key), []).append(item.partition("=")[0])
    twice = next((spellings for spellings in spelled.values() if len(spellings) > 1), None)
    return keys, options, device, ", ".join(twice) if twice else None


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
    if is_relative(path):  # docker (>= 23) resolves it against the folder the runner runs in: judged there
        resolved = mount_verdict(from_cwd(path), context)
        return resolved if resolved is None or resolved[0] == "never" else ("consent", rules.MOUNT_RELATIVE_WHY)
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
    lengths = {len(run) for run in (*rules.CREDENTIAL_PATHS, *rules.STARTUP_PATHS)}
    runs = {tuple(parts[i : i + n]) for n in lengths for i in range(len(parts))}
    if runs & set(rules.CREDENTIAL_PATHS):
        return "never", rules.MOUNT_NEVER_WHY["credentials"]
    if runs & set(rules.STARTUP_PATHS):
        return "never", rules.MOUNT_NEVER_WHY["startup"]
    held = held_credential(path)
    if held is not None:
        return "never", rules.MOUNT_NEVER_WHY["holds"].format(path=held)
    for folder in context.owner_folders if context else ():
        folder = host_path(folder)
        if path == folder or path.startswith(folder.rstrip("/") + "/"):
            return None
    return "consent", rules.MOUNT_CONSENT_WHY


def from_cwd(path: str) -> str:
    """A relative host path as docker's CLI (23 and later) makes it: joined to the working folder, in host_path's form
    (`~/...` inside the home folder)."""
    full = posixpath.normpath(posixpath.join(os.getcwd(), path))
    home = os.path.expanduser("~").rstrip("/")
    return host_path("~" + full[len(home) :] if home and (full == home or full.startswith(home + "/")) else full)


def owner_hf_tokens() -> tuple[str, ...]:
    """The token files of the owner's own Hugging Face cache when $HF_HOME names it (as the runner's plan mounts it),
    in host_path's form; the default cache's are in paths.CREDENTIAL_HOME_PATHS."""
    home = os.environ.get("HF_HOME", "").strip()
    return tuple(f"{host_path(home).rstrip('/')}/{name}" for name in rules.HF_TOKEN_FILES) if home else ()


def held_credential(path: str) -> str | None:
    """The first credentials path (paths.CREDENTIAL_HOME_PATHS in any home folder, CREDENTIAL_SYSTEM_PATHS) that a
    mount of the folder `path` (host_path's form) would expose: `path` is an ancestor of it; else None."""
    home = re.fullmatch(r"(~|/root|/home/[^/]+)(/.*)?", path)
    if home is not None:
        inside = (home.group(2) or "").strip("/")
        for held in rules.CREDENTIAL_HOME_PATHS:
            if inside == "" or held.startswith(inside + "/"):
                return f"{home.group(1)}/{held}"
    for held in (*rules.CREDENTIAL_SYSTEM_PATHS, *owner_hf_tokens()):
        if held.startswith(path.rstrip("/") + "/"):
            return held
    return None


def folds_into_hf_cache(mount: Mount, context: PolicyContext | None) -> bool:
    """The recipe mounts a host folder where the profile mounts the Hugging Face cache: the profile's mount wins."""
    if context is None or not context.hf_cache_target or mount.target is None:
        return False
    cache = posixpath.normpath(context.hf_cache_target)
    return posixpath.normpath(mount.target) in (cache, cache + "/hub")


def host_binds(options: list[str], context: PolicyContext | None = None) -> list[tuple[str, str]]:
    """(host path, container path) of each mount in `docker run` options that reaches a host folder (a bind, a local
    volume's device); not a named volume, nor a mount the profile's Hugging Face cache replaces, nor one refused."""
    out: list[tuple[str, str]] = []
    for _, name, value in walk_options(options):
        if name not in ("volume", "mount"):
            continue
        mount = parse_mount(name, value or "")
        if mount.source is None or mount.target is None or mount.unreadable or mount.repeated:
            continue
        if not folds_into_hf_cache(mount, context):
            out.append((host_path(mount.source), posixpath.normpath(mount.target)))
    return out


def through_binds(path: str, binds: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(host path, container path of the bind) that a container path reaches through the deepest bind holding it."""
    path = posixpath.normpath(path)
    held = [(source, target) for source, target in binds if path == target or path.startswith(target.rstrip("/") + "/")]
    if not held:
        return None
    source, target = max(held, key=lambda bind: len(bind[1]))
    rest = posixpath.relpath(path, target)
    return (source if rest == "." else source.rstrip("/") + "/" + rest), target
