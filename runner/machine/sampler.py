"""The sampler during the sweep: on every server host, the passport's nvidia-smi query once a second.

Started before the sweep, stopped with everything else (Running.stop), on every path. It runs as the passport probe
does: a throwaway container of the recipe's image on that host (`--rm`, the run's labels, no network, a read-only
root, the GPU when the platform has one), or a process of this Python for a local process, each in its own session.
Every line it prints is kept as it came in `runs/<stamp>/gpu-samples-<host>.jsonl` and parsed here: a host without
nvidia-smi says "no GPU" once and is sampled no further. The readings are cut to each level's benchmark window by
catalogue.stats.sampling.level_machine, which also integrates the power.

Times: a reading carries the sampling host's clock. For another host, the runner adds the smallest (arrival − reading
time) it saw, which takes out a clock offset between the machines (plus the shortest transport delay), so readings
and the client's windows (this machine's clock) line up.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from catalogue.models.bounded import json_value
from catalogue.models.errors import CatalogueError
from catalogue.stats.sampling import HostSeries, Reading
from runner.hosts import server as srv
from runner.hosts.child_env import for_argv
from runner.hosts.containers import LABEL_RECIPE, RUNNER_OPTIONS
from runner.hosts.hosts import Host
from runner.hosts.raw_files import open_append
from runner.machine.passport import csv_rows, gpu_states
from runner.planning.plan import Plan
from runner.scripts.passport_probe import GPU_FIELDS

PROBE = Path(__file__).resolve().parents[1] / "scripts" / "sampler_probe.py"
INTERVAL_S = 1.0


@dataclass
class Sampler:
    """One host's sampler: its process, its raw file, and what it read so far."""

    host: Host
    raw_path: Path
    series: HostSeries
    process: subprocess.Popen | None = None
    offsets: list[float] = field(default_factory=list)
    """(arrival on this machine − reading time on the host) of each reading."""
    thread: threading.Thread | None = None
    names: set[str] = field(default_factory=set)
    """The GPU names every reading so far reported."""
    other: list[str] = field(default_factory=list)
    """The last lines that were not the sampler's (docker's error when the container could not start)."""


def raw_name(host: Host) -> str:
    """The raw file of a host's readings: gpu-samples-<host>.jsonl."""
    return f"gpu-samples-{re.sub(r'[^A-Za-z0-9_.-]+', '-', host.name)}.jsonl"


def sampler_argv(plan: Plan, host: Host) -> list[str]:
    """The sampler's command on `host`: a throwaway container of the recipe's image, or this Python."""
    argv = ["-c", PROBE.read_text(), GPU_FIELDS, f"{INTERVAL_S:g}"]
    if plan.image is None:
        return [sys.executable, *argv]
    labels = ["--label", plan.label, "--label", f"{LABEL_RECIPE}={plan.recipe_id}"]
    narrow = [*RUNNER_OPTIONS, "--read-only", "--tmpfs", "/tmp", "--network", "none"]
    gpu = ["--gpus", "all"] if plan.gpu else []
    return [*host.docker_cli(), "run", "--rm", *labels, *narrow, *gpu, "--entrypoint", "python3", plan.image, *argv]


def take_line(sampler: Sampler, line: str, arrived: float) -> bool:
    """One line of the sampler's output into its host's series: the 'no GPU' line, a reading, or a failed query.
    False for a line that is not the sampler's (docker's own error, an image's banner): kept apart, never a reading."""
    try:  # the sampler runs in the recipe's image: its line is parsed within the size and nesting limits
        data = json_value(line, 1 << 20)
    except ValueError:
        data = None
    t = data.get("t") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not ("gpu" in data or isinstance(t, int | float)):
        if line.strip():
            sampler.other = [*sampler.other[-4:], line.strip()[:300]]
        return False
    if "gpu" in data:
        sampler.series.gpu = str(data["gpu"])
        return True
    if data.get("code") != 0:
        if not sampler.series.readings:
            sampler.series.gpu = f"nvidia-smi failed: {data.get('stderr') or data.get('stdout')}".strip()[:200]
        return True
    gpus = gpu_states(csv_rows(str(data.get("stdout") or ""), GPU_FIELDS.split(",")))
    t = float(t or 0.0)  # a number: checked above
    sampler.offsets.append(arrived - t)
    sampler.series.readings.append(Reading(t, gpus))
    sampler.names |= {g.name or "?" for g in gpus}
    sampler.series.gpu = "; ".join(sorted(sampler.names)) or sampler.series.gpu
    return True


def aligned(sampler: Sampler) -> HostSeries:
    """The host's readings on this machine's clock (another host's shifted by the smallest arrival delay)."""
    series = sampler.series
    if sampler.host.is_local or not sampler.offsets:
        return HostSeries(series.host, series.gpu, list(series.readings))
    shift = min(sampler.offsets)
    return HostSeries(series.host, series.gpu, [Reading(r.t + shift, r.gpus) for r in series.readings])


def _read(sampler: Sampler, raw: IO[bytes]) -> None:
    """The sampler's output, line by line, into its raw file and its series (a thread per host)."""
    process = sampler.process
    assert process is not None and process.stdout is not None
    with raw:
        for line in iter(process.stdout.readline, ""):
            if take_line(sampler, line, time.time()):  # the raw file stays JSON Lines (check-changes reads it)
                raw.write(line.encode())
                raw.flush()


def start(plan: Plan, host: Host) -> Sampler:
    """Start one host's sampler, in its own session (recorded in sessions.txt like every process of a run); its
    raw file and sessions.txt are opened by runner.hosts.raw_files (never through a link a container planted)."""
    sampler = Sampler(host, plan.raw_dir / raw_name(host), HostSeries(host.name, "not read yet"))
    try:
        raw = open_append(sampler.raw_path)
    except CatalogueError as exc:
        sampler.series.gpu = f"the sampler did not start: {exc}"
        return sampler
    try:
        argv = sampler_argv(plan, host)
        sampler.process = subprocess.Popen(
            argv,
            env=for_argv(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        srv.record_session(plan.raw_dir, sampler.process.pid, sampler.raw_path.name)
    except (OSError, CatalogueError) as exc:
        raw.close()
        if sampler.process is not None:
            srv.stop_group(sampler.process, grace_s=2)
            sampler.process = None
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        sampler.series.gpu = f"the sampler did not start: {why}"
        return sampler
    sampler.thread = threading.Thread(target=_read, args=(sampler, raw), daemon=True)
    sampler.thread.start()
    return sampler


def start_all(plan: Plan, samplers: list[Sampler], first_within_s: float = 60) -> None:
    """A sampler on every server host, each added to `samplers` as it starts (so a fault or Ctrl-C in between still
    stops it); returns once each has answered (a reading, 'no GPU', or its exit), so the first level's window starts
    with readings on both sides of its edge."""
    for host in plan.hosts:
        samplers.append(start(plan, host))  # noqa: PERF401 - one at a time: each is stopped even if the next fails
    deadline = time.monotonic() + first_within_s
    while time.monotonic() < deadline and not all(_answered(s) for s in samplers):
        time.sleep(0.1)


def _answered(sampler: Sampler) -> bool:
    return (
        sampler.process is None
        or sampler.process.poll() is not None
        or bool(sampler.series.readings)
        or sampler.series.gpu != "not read yet"
    )


def stop(sampler: Sampler) -> None:
    """End the sampler's session (its container goes with its client: `--rm`, and the run's labels besides) and
    wait for the last lines to be read."""
    if sampler.process is not None:
        srv.stop_group(sampler.process, grace_s=3)
    if sampler.thread is not None:
        sampler.thread.join(timeout=10)
    if sampler.series.gpu == "not read yet":
        sampler.series.gpu = "the sampler printed nothing" + (f" ({sampler.other[-1]})" if sampler.other else "")
