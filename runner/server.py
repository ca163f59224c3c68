"""Start the server in its own process group, wait for /health, stop it and everything it spawned."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


class ServerFailed(Exception):
    """The server exited or never became healthy; the message ends with its log tail."""


@dataclass
class Server:
    """A running server process (or `docker run` client) and its log."""

    process: subprocess.Popen
    log_path: Path
    container: str | None = None

    def exit_code(self) -> int | None:
        return self.process.poll()


def start(argv: list[str], env: dict[str, str], log_path: Path, container: str | None = None) -> Server:
    """Launch `argv` in a new session so that stopping it can end its whole process group."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(log_path, "wb") as log:
            process = subprocess.Popen([executable(argv[0]), *argv[1:]], stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env={**os.environ, **env}, start_new_session=True)
    except OSError as exc:
        raise ServerFailed(f"cannot start {argv[0]}: {exc.strerror}") from None
    return Server(process, log_path, container)


def executable(name: str) -> str:
    """A command from PATH, else from this interpreter's environment (a venv not activated)."""
    if shutil.which(name):
        return name
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else name


def log_tail(server: Server, lines: int = 30) -> str:
    """The last lines of the server log."""
    try:
        text = server.log_path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def healthy(base_url: str) -> bool:
    """True when GET /health answers 200."""
    try:
        with urllib.request.urlopen(f"{base_url}/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def wait_healthy(server: Server, base_url: str, timeout_s: float, progress: Callable[[float], None] | None = None) -> float:
    """Seconds until /health answered; raises ServerFailed on exit or timeout."""
    start_time = time.monotonic()
    while True:
        elapsed = time.monotonic() - start_time
        code = server.exit_code()
        if code is not None:
            raise ServerFailed(f"server exited with code {code} before it was healthy\n{log_tail(server)}")
        if healthy(base_url):
            return elapsed
        if elapsed > timeout_s:
            raise ServerFailed(f"server not healthy after {timeout_s:.0f} s\n{log_tail(server)}")
        if progress:
            progress(elapsed)
        time.sleep(0.5)


def stop_group(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM the process group, then SIGKILL what is left; reap the leader."""
    try:
        pgid = os.getpgid(process.pid)
    except ProcessLookupError:
        pgid = None
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        if pgid is None:
            break
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _group_alive(pgid):
            process.poll()
            time.sleep(0.1)
        if not _group_alive(pgid):
            break
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # zombies still count for killpg(0); treat a group whose only members are zombies as gone
    return any(_pgid_of(pid) == pgid and not _is_zombie(pid) for pid in _pids())


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()] if sys.platform.startswith("linux") else []


def _pgid_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except (ProcessLookupError, PermissionError):
        return None


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True


def stop(server: Server) -> None:
    """Stop the server: its whole process group, and its container when it runs in docker."""
    if server.container:
        subprocess.run(["docker", "rm", "-f", server.container], capture_output=True, check=False)
    stop_group(server.process)
