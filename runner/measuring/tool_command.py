"""A pinned client tool the runner starts (tool-eval-bench, llama-benchy, AIPerf): where it is, the Python that runs
it, and one run of it to its end with the run's API key handed over inside its process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from runner.hosts import server as srv


def tool_command(variable: str, name: str) -> str | None:
    """The tool named by $`variable`, else `name` on PATH or beside this Python; None when it is not installed."""
    found = os.environ.get(variable) or shutil.which(name)
    if found:
        return found
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else None


def interpreter(command: str) -> str | None:
    """The Python that runs a tool's entry script (its `#!` line); None when it is not a Python script."""
    path = shutil.which(command) or command
    try:
        with open(path, "rb") as handle:
            first = handle.readline(4096).decode(errors="replace").strip()
    except OSError:
        return None
    words = first[2:].split() if first.startswith("#!") else []
    if words and Path(words[0]).name == "env" and len(words) > 1:
        words = words[1:]
    return words[0] if words and "python" in Path(words[0]).name else None


def key_launcher(variable: str) -> str:
    """`python -c` text that runs an entry script with `--api-key <$variable>` appended to its own sys.argv: never on
    a command line others can read (/proc/<pid>/cmdline keeps the words a process was started with)."""
    return (
        "import os, runpy, sys; script = sys.argv[1]; "
        f"sys.argv = [script, *sys.argv[2:], '--api-key', os.environ.pop({variable!r})]; "
        "runpy.run_path(script, run_name='__main__')"
    )


def run_to_end(
    name: str,
    python: str,
    launcher: str,
    argv: list[str],
    env: dict[str, str],
    log: Path,
    redact: list[str],
    timeout_s: int,
) -> int:
    """One run of the tool through `launcher` in a process group of its own, ended after `timeout_s`; its exit code.
    Raises ValueError when it did not finish in time."""
    process = srv.start([python, "-c", launcher, *argv], env, log, redact=redact)
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise ValueError(f"{name} did not finish within {timeout_s} s") from None
    finally:
        srv.stop_group(process, grace_s=3)
