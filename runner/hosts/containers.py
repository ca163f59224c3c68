"""The runner's containers: options it owns (name, labels, no -d/--restart), and removal by label."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from catalogue.models.runner_mounts import COMPILE_CACHE
from catalogue.policy.docker_options import option_key, option_value, split_options
from runner.hosts.child_env import child_env
from runner.hosts.docker_view import LOG_DRIVER
from runner.hosts.hosts import Host

LABEL_RECIPE = "catalogue.recipe"
LABEL_RUN = "catalogue.run"
RUNNER_OPTIONS = ("--security-opt", "no-new-privileges", "--log-driver", LOG_DRIVER)
"""On every container the runner creates: no privilege gain through setuid, and the log where the runner keeps it."""
CACHE_MOUNT = COMPILE_CACHE
"""Where a server container sees its host's compile-cache folder (catalogue.models.runner_mounts)."""
CACHE_ENV = {"VLLM_CACHE_ROOT": f"{CACHE_MOUNT}/vllm", "TORCHINDUCTOR_CACHE_DIR": f"{CACHE_MOUNT}/inductor"}
"""The variables the runner sets beside its compile-cache mount: the inspect gate knows them by these exact values."""


@dataclass(frozen=True)
class OwnedOptions:
    """`docker run` options after the runner took over the container's lifecycle, and what it changed."""

    options: list[str]
    changes: list[str]


def own_options(options: list[str], *, name: str, labels: dict[str, str], cache_dir: str | None) -> OwnedOptions:
    """Drop -d, --rm, --restart and --name; add our name and labels, host networking and the compile cache.

    Host networking makes vLLM's `--port` the port the client, the router and the other nodes reach, whatever
    port the runner picks; a `-p` mapping or another network would not follow it."""
    kept: list[str] = []
    changes: list[str] = []
    network_host = False
    for group in split_options(options):
        key, value = option_key(group), option_value(group)
        if key in ("detach", "rm"):
            changes.append(f"dropped {group[0]}: the runner waits on the container and removes it itself")
        elif key == "restart":
            changes.append(f"dropped --restart {value}: a container the runner stops must stay stopped")
        elif key == "name":
            pass
        elif key == "network" and value != "host":
            changes.append(f"replaced --network {value} with --network host: vLLM's --port is then the reachable port")
        elif key == "publish":
            changes.append(f"dropped {' '.join(group)}: under host networking vLLM's --port is the reachable port")
        else:
            network_host = network_host or key == "network"
            kept += group
    owned = ["--name", name, *RUNNER_OPTIONS, *(w for k, v in labels.items() for w in ("--label", f"{k}={v}"))]
    if not network_host:
        owned += ["--network", "host"]
        changes.append("added --network host: nodes and the client reach each other by host address")
    if cache_dir:
        owned += ["-v", f"{cache_dir}:{CACHE_MOUNT}", *(w for k, v in CACHE_ENV.items() for w in ("-e", f"{k}={v}"))]
    # After the recipe's: docker keeps the last of a repeated setting, so the runner's name and labels win.
    return OwnedOptions([*kept, *owned], changes)


CLEANUP_TIMEOUT_S = float(os.environ.get("CATALOGUE_CLEANUP_TIMEOUT_S", "60"))
"""How long cleaning up waits for one docker call on a host before it names the host as left unclean."""


class HostUnreachable(Exception):
    """The host's docker engine did not answer (or failed) while the runner cleaned up."""


def labelled(host: Host, label: str, timeout_s: float = CLEANUP_TIMEOUT_S) -> list[str]:
    """Ids of every container on `host` carrying `label` (key=value), running or not."""
    try:
        out = subprocess.run(
            [*host.docker_cli(), "ps", "-aq", "--filter", f"label={label}"],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout_s,
            env=child_env(remote=not host.is_local),
        )
    except subprocess.TimeoutExpired:
        raise HostUnreachable(f"docker ps did not answer within {timeout_s:.0f} s") from None
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        raise HostUnreachable(f"docker ps failed: {lines[-1] if lines else out.returncode}")
    return out.stdout.split()


def remove_labelled(host: Host, label: str) -> list[str]:
    """Remove (force) every container on `host` with `label`; the ids removed. HostUnreachable when it fails."""
    ids = labelled(host, label)
    if ids:
        try:
            out = subprocess.run(
                [*host.docker_cli(), "rm", "-f", *ids],
                capture_output=True,
                text=True,
                timeout=2 * CLEANUP_TIMEOUT_S,
                env=child_env(remote=not host.is_local),
            )
        except subprocess.TimeoutExpired:
            raise HostUnreachable(f"docker rm did not answer within {2 * CLEANUP_TIMEOUT_S:.0f} s") from None
        if out.returncode != 0 and labelled(host, label):
            raise HostUnreachable(f"docker rm failed: {out.stderr.strip().splitlines()[-1:]}")
    return ids


def image_id(host: Host, image: str) -> str | None:
    """The image's content id on `host` (what `:latest` really was), or None when docker does not know it."""
    out = subprocess.run(
        [*host.docker_cli(), "image", "inspect", "--format", "{{.Id}}", image],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=child_env(remote=not host.is_local),
    )
    return out.stdout.strip() or None if out.returncode == 0 else None
