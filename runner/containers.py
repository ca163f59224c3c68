"""The runner's containers: options it owns (name, labels, no -d/--restart), and removal by label."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from runner.hosts import Host

LABEL_RECIPE = "catalogue.recipe"
LABEL_RUN = "catalogue.run"
DROPPED_SWITCHES = {"-d", "--detach", "--rm"}
DROPPED_WITH_VALUE = {"--restart", "--name"}
CACHE_MOUNT = "/catalogue-cache"
"""Where a server container sees its host's compile-cache folder (VLLM_CACHE_ROOT, TORCHINDUCTOR_CACHE_DIR)."""


@dataclass(frozen=True)
class OwnedOptions:
    """`docker run` options after the runner took over the container's lifecycle, and what it changed."""

    options: list[str]
    changes: list[str]


def own_options(
    options: list[str], *, name: str, labels: dict[str, str], network_host: bool, cache_dir: str | None
) -> OwnedOptions:
    """Drop -d, --rm, --restart and --name; add our name and labels; host networking and the compile cache if asked."""
    kept: list[str] = []
    changes: list[str] = []
    words = iter(options)
    for word in words:
        flag = word.split("=", 1)[0]
        if flag in DROPPED_SWITCHES and "=" not in word:
            changes.append(f"dropped {word}: the runner waits on the container and removes it itself")
        elif flag in DROPPED_WITH_VALUE:
            value = word.split("=", 1)[1] if "=" in word else next(words, "")
            if flag == "--restart":
                changes.append(f"dropped --restart {value}: a container the runner stops must stay stopped")
        else:
            kept.append(word)
    owned = ["--name", name, *(w for k, v in labels.items() for w in ("--label", f"{k}={v}"))]
    if network_host and not any(re.match(r"^--net(work)?(=|$)", w) for w in kept):
        owned += ["--network", "host"]
        changes.append("added --network host: nodes and the client reach each other by host address")
    if cache_dir:
        owned += [
            "-v",
            f"{cache_dir}:{CACHE_MOUNT}",
            "-e",
            f"VLLM_CACHE_ROOT={CACHE_MOUNT}/vllm",
            "-e",
            f"TORCHINDUCTOR_CACHE_DIR={CACHE_MOUNT}/inductor",
        ]
    return OwnedOptions([*owned, *kept], changes)


def mounts_and_env(options: list[str]) -> list[str]:
    """The recipe's `-v`/`--volume`/`--mount`/`-e`/`--env` options: the client sees the same files and settings."""
    out: list[str] = []
    words = iter(options)
    for word in words:
        flag = word.split("=", 1)[0]
        if flag in ("-v", "--volume", "--mount", "-e", "--env", "--env-file"):
            out += [word] if "=" in word and flag.startswith("--") else [word, next(words, "")]
    return out


def labelled(host: Host, label: str) -> list[str]:
    """Ids of every container on `host` carrying `label` (key=value), running or not."""
    out = subprocess.run(
        [*host.docker_cli(), "ps", "-aq", "--filter", f"label={label}"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return out.stdout.split()


def remove_labelled(host: Host, label: str) -> list[str]:
    """Remove (force) every container on `host` with `label`; the ids removed."""
    ids = labelled(host, label)
    if ids:
        subprocess.run([*host.docker_cli(), "rm", "-f", *ids], capture_output=True, check=False, timeout=120)
    return ids


def image_id(host: Host, image: str) -> str | None:
    """The image's content id on `host` (what `:latest` really was), or None when docker does not know it."""
    out = subprocess.run(
        [*host.docker_cli(), "image", "inspect", "--format", "{{.Id}}", image],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return out.stdout.strip() or None if out.returncode == 0 else None
