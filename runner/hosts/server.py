"""Processes of a refresh: each started in its own session, health checks, and stopping a whole session."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import psutil

from catalogue.models.errors import CatalogueError
from runner.hosts.child_env import for_argv
from runner.hosts.raw_files import open_append, read_tail


class ServerFailed(Exception):
    """A server (or the router) exited or never became healthy; the message names it and ends with its log tail."""


SERVE_LOG = "server-vllm-serve.log"
"""The log of `vllm serve` on a Ray head (runner/measuring/ray_cluster.py starts it; runner/state.py names it when it
exits)."""
SESSIONS_FILE = "sessions.txt"
"""Beside the logs: one line per process session the runner started (`<sid> <log name>`), for audits and tests."""


def start(
    argv: list[str],
    env: dict[str, str],
    log_path: Path,
    *,
    stdin: int | None = subprocess.DEVNULL,
    redact: Sequence[str] = (),
    by_name: Sequence[str] = (),
) -> subprocess.Popen:
    """Launch `argv` in a new session, so that stopping it can end everything it started; record the session.

    With `redact`, its output reaches the log through a filter that masks those values: a secret the process
    prints (vLLM logs its non-default arguments at start-up) is never written. Its environment is
    runner.hosts.child_env's: `env`, the variables named in `by_name`, and nothing else of the owner's shell.
    The log and sessions.txt are opened by runner.hosts.raw_files (a container may write the folder): a link or
    other non-regular file under either name is ServerFailed naming it, and nothing is left running."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    secrets = [s.encode() for s in redact if s]
    try:
        log = open_append(log_path)
    except CatalogueError as exc:
        raise ServerFailed(f"cannot start {argv[0]}: {exc}") from None
    try:
        process = subprocess.Popen(
            [executable(argv[0]), *argv[1:]],
            stdout=subprocess.PIPE if secrets else log,
            stderr=subprocess.STDOUT,
            stdin=stdin,
            env=for_argv(argv, env, by_name),
            start_new_session=True,
        )
    except OSError as exc:
        log.close()
        raise ServerFailed(f"cannot start {argv[0]}: {exc.strerror}") from None
    if secrets:
        threading.Thread(target=_copy_redacted, args=(process, log, secrets), daemon=True).start()
    else:
        log.close()
    try:
        record_session(log_path.parent, process.pid, log_path.name)
    except CatalogueError as exc:
        stop_group(process, grace_s=2)
        raise ServerFailed(f"{argv[0]} stopped: {exc}") from None
    return process


def record_session(folder: Path, pid: int, name: str) -> None:
    """One line of sessions.txt (never written through a link)."""
    with open_append(folder / SESSIONS_FILE) as sessions:
        sessions.write(f"{pid} {name}\n".encode())


def _copy_redacted(process: subprocess.Popen, log: IO[bytes], secrets: list[bytes]) -> None:
    """The process's output, line by line, into its log with every secret masked."""
    assert process.stdout is not None
    with log:
        for line in iter(process.stdout.readline, b""):
            for secret in secrets:
                line = line.replace(secret, b"[redacted]")
            log.write(line)
            log.flush()


def executable(name: str) -> str:
    """A command from PATH, else from this interpreter's environment (a venv not activated)."""
    if shutil.which(name):
        return name
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else name


def log_tail(path: Path, lines: int = 30) -> str:
    """The last lines of a log file (its last 64 KB; nothing when it is a link or not a regular file)."""
    return "\n".join(read_tail(path, 64 << 10).splitlines()[-lines:])


ERROR_LINE = re.compile(r"(?:^|\] )([A-Z]\w*(?:Error|Exception)): (.+)$")
"""A traceback's last line, bare or behind vLLM's log prefix (`(EngineCore pid=1) ERROR ... [core.py:1] `)."""


def first_error(path: Path) -> str | None:
    """The first `SomethingError: message` in a log: usually the root cause, ahead of the wrappers that re-raise it."""
    for line in read_tail(path, tail=False).splitlines():
        found = ERROR_LINE.search(line)
        if found:
            return f"{found.group(1)}: {found.group(2).strip()}"
    return None


def failure(what: str, log_path: Path) -> ServerFailed:
    """`what`, its log's first error on the same line (the one a run file keeps), then the log's tail."""
    cause = first_error(log_path)
    return ServerFailed(f"{what}" + (f": {cause}" if cause else "") + f"\n{log_tail(log_path)}")


def healthy(url: str) -> bool:
    """True when GET `url` answers 200."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def stop_group(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM every process of the leader's session, then SIGKILL what is left; reap the leader.

    The leader was started with its own session, so its pid names the session and the process group,
    and both outlive it: a leader that died first still lets us find and end everything it started.
    """
    sid = process.pid
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        if not _signal_session(sid, sig):
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and session_members(sid):
            process.poll()
            time.sleep(0.1)
        if not session_members(sid):
            break
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _signal_session(sid: int, sig: signal.Signals) -> bool:
    """Send `sig` to the process group `sid` and to every other member of session `sid`; False if none is left."""
    members = session_members(sid)
    try:
        os.killpg(sid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in members:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    return bool(members)


def session_members(sid: int) -> list[int]:
    """Live (not zombie) processes whose session id is `sid` (psutil lists them, os.getsid names the session)."""
    found = []
    for proc in psutil.process_iter(["status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and os.getsid(proc.pid) == sid:
                found.append(proc.pid)
        except (psutil.Error, ProcessLookupError, PermissionError):
            continue
    return found
