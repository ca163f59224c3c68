"""A real docker engine for the runner tests, and a second "host" reached through `docker -H ssh://`.

The engine and images come from tools/docker_env.py (built once per machine, cached by a hash of
what they are built from). The SSH host is this machine's own engine behind a private sshd on a
loopback port, so the docker CLI's own SSH transport is what the runner uses to reach it.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import docker_env  # noqa: E402

from runner.hosts.server import session_members  # noqa: E402


def docker_available() -> str | None:
    """Why docker tests cannot run here, or None when they can."""
    if shutil.which("docker") is None or (shutil.which("dockerd") is None and not docker_env.engine_answers()):
        return "docker engine not installed (apt-get install docker.io mmdebstrap; .ci/run does)"
    if not docker_env.engine_answers() and os.geteuid() != 0:
        return "starting dockerd needs root"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_ports(count: int, avoid: tuple[int, ...] = ()) -> int:
    """The first of `count` consecutive free ports, below the kernel's ephemeral range (32768 up on Linux): a port the
    kernel handed out as free is its to hand out again, to the next ephemeral socket of any process (the replicas
    test lost its second replica's port, the first's plus one, that way)."""
    rng = random.Random()
    while True:
        first = rng.randrange(20_000, 32_000 - count)
        wanted = range(first, first + count)
        if any(port in avoid for port in wanted):
            continue
        try:
            with contextlib.ExitStack() as held:
                for port in wanted:
                    s = held.enter_context(socket.socket())
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first


@dataclass
class SshHost:
    """A loopback sshd in front of this machine's docker engine."""

    url: str
    bin_dir: Path
    """Put first on PATH: its `ssh` uses our key and known-hosts settings."""


def start_sshd(folder: Path) -> Iterator[SshHost]:
    """sshd on 127.0.0.1:<free port>, key-only root login, stopped when the generator closes."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True)
    shutil.copy(folder / "client_key.pub", folder / "authorized_keys")
    port = free_port()
    config = folder / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {folder / 'host_key'}",
                f"AuthorizedKeysFile {folder / 'authorized_keys'}",
                "PermitRootLogin prohibit-password",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "StrictModes no",
                "UsePAM no",
                f"PidFile {folder / 'sshd.pid'}",
                "MaxStartups 50",
                "MaxSessions 50",
                "",
            ]
        )
    )
    client_config = folder / "ssh_config"
    client_config.write_text(
        "\n".join(
            [
                "Host 127.0.0.1",
                f"  IdentityFile {folder / 'client_key'}",
                "  StrictHostKeyChecking no",
                "  UserKnownHostsFile /dev/null",
                "  LogLevel ERROR",
                "  IdentitiesOnly yes",
                "",
            ]
        )
    )
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "ssh"
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("ssh")} -F {client_config} "$@"\n')
    wrapper.chmod(0o755)
    Path("/run/sshd").mkdir(exist_ok=True)
    sshd = subprocess.Popen(
        [shutil.which("sshd") or "/usr/sbin/sshd", "-D", "-e", "-f", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=open(folder / "sshd.log", "wb"),
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if sshd.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"sshd did not start: {(folder / 'sshd.log').read_text()}")
        time.sleep(0.1)
    try:
        yield SshHost(f"ssh://root@127.0.0.1:{port}", bin_dir)
    finally:
        sshd.terminate()
        sshd.wait(timeout=10)


def labelled_containers(label: str) -> list[str]:
    """Every container (running or not) on the local engine with `label`."""
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label={label}"], capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def live_sessions(sessions_file: Path) -> dict[int, list[int]]:
    """Sessions the runner recorded as started that still have a live member."""
    if not sessions_file.exists():
        return {}
    sids = [int(line.split()[0]) for line in sessions_file.read_text().splitlines() if line.strip()]
    return {sid: members for sid in sids if (members := session_members(sid))}
