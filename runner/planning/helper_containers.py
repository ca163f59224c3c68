"""The containers the runner starts beside the servers: vLLM's benchmark client and the flag snapshot.

Both are narrower than the recipe's own: no new privileges, the runner's log driver and labels. The flag snapshot
runs the recipe's image with no network, a read-only root and nothing of the repository but a copy of the
`catalogue` package (made at launch, in a temporary folder) and an empty folder for its one output file."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from runner.hosts.containers import CACHE_MOUNT, LABEL_RECIPE, RUNNER_OPTIONS
from runner.hosts.docker_view import OwnMount
from runner.planning.plan_data import Plan

DRIVER = Path(__file__).resolve().parents[1] / "scripts" / "driver.py"
PROBE = Path(__file__).resolve().parents[1] / "scripts" / "passport_probe.py"
"""Mounted beside the driver: its CPU calibration, taken around every level."""
REPO = Path(__file__).resolve().parents[2]
RAW_IN_CONTAINER = "/raw"
SNAPSHOT_OUT = "flags-out"
"""The raw folder's subfolder the snapshot container writes flags.json to (moved up when it is done)."""


def snapshot_code_dir(plan: Plan) -> Path:
    """Where launch copies the `catalogue` package for the snapshot container (removed when the run stops)."""
    return Path(tempfile.gettempdir()) / f"catalogue-snapshot-{plan.recipe_id}-{plan.stamp}"


def prepare_snapshot(plan: Plan) -> None:
    """Copy the `catalogue` package (Python files only) and make the empty output folder."""
    if not plan.image:
        return
    code = snapshot_code_dir(plan)
    shutil.rmtree(code, ignore_errors=True)
    shutil.copytree(REPO / "catalogue", code / "catalogue", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (plan.raw_dir / SNAPSHOT_OUT).mkdir(parents=True, exist_ok=True)


def prepare_caches(plan: Plan) -> None:
    """Each server's compile-cache folder on this machine, readable by the owner only (0700)."""
    for node in plan.nodes:
        for mount in node.own_mounts:
            if mount.target == CACHE_MOUNT and node.host.is_local:
                os.makedirs(mount.source, mode=0o700, exist_ok=True)
                os.chmod(mount.source, 0o700)


def finish_snapshot(plan: Plan) -> None:
    """Move flags.json up into the raw folder and remove the code copy and the output folder."""
    shutil.rmtree(snapshot_code_dir(plan), ignore_errors=True)
    out = plan.raw_dir / SNAPSHOT_OUT
    made = out / "flags.json"  # the snapshot container wrote it: moved only when a regular file, never a link
    if made.is_file() and not made.is_symlink():
        os.replace(made, plan.raw_dir / "flags.json")
    shutil.rmtree(out, ignore_errors=True)


def with_helpers(plan: Plan, client_extra: list[str]) -> Plan:
    """The benchmark client's and the flag snapshot's commands, in the image or in this Python."""
    raw = plan.raw_dir.resolve()
    jobs, events = ("jobs.json", "events.jsonl")
    labels = ["--label", f"{LABEL_RECIPE}={plan.recipe_id}", "--label", plan.label]
    user = [] if os.getuid() == 0 else ["--user", f"{os.getuid()}:{os.getgid()}", "-e", "HOME=/tmp"]
    client_mounts: list[OwnMount] = []
    snapshot_mounts: list[OwnMount] = []
    if plan.client == "image":
        client_mounts = [
            OwnMount(str(raw), RAW_IN_CONTAINER),
            OwnMount(str(DRIVER), "/catalogue/driver.py", "ro"),
            OwnMount(str(PROBE), "/catalogue/passport_probe.py", "ro"),
        ]
        client = [
            "docker",
            "run",
            "--rm",
            "-i",
            "--name",
            f"catalogue-{plan.recipe_id}-client",
            *RUNNER_OPTIONS,
            *labels,
            "--network",
            "host",
            *user,
            "--entrypoint",
            "python3",
            "-v",
            f"{raw}:{RAW_IN_CONTAINER}",
            "-v",
            f"{DRIVER}:/catalogue/driver.py:ro",
            "-v",
            f"{PROBE}:/catalogue/passport_probe.py:ro",
            "-e",
            "OPENAI_API_KEY",
            *client_extra,
            str(plan.image),
            "/catalogue/driver.py",
            f"{RAW_IN_CONTAINER}/{jobs}",
            f"{RAW_IN_CONTAINER}/{events}",
        ]
    else:
        client = [sys.executable, str(DRIVER), str(raw / jobs), str(raw / events)]
    if plan.capacity:
        client.append("--more")
    if plan.image:
        code = str(snapshot_code_dir(plan))
        snapshot_mounts = [OwnMount(code, "/catalogue", "ro"), OwnMount(str(raw / SNAPSHOT_OUT), "/out")]
        snapshot = [
            "docker",
            "run",
            "--rm",
            *RUNNER_OPTIONS,
            *labels,
            "--network",
            "none",
            "--read-only",
            "--tmpfs",
            "/tmp",
            *user,
            "--entrypoint",
            "python3",
            "-v",
            f"{code}:/catalogue:ro",
            "-v",
            f"{raw / SNAPSHOT_OUT}:/out",
            "-w",
            "/catalogue",
            "-e",
            "PYTHONDONTWRITEBYTECODE=1",
            "-e",
            "HOME=/tmp",
            plan.image,
            "-m",
            "catalogue",
            "flags",
            "dump",
            "--image",
            plan.image,
            "--out",
            "/out/flags.json",
        ]
    else:
        snapshot = [sys.executable, "-m", "catalogue", "flags", "dump", "--out", str(raw / "flags.json")]
    return replace(
        plan,
        client_argv=client,
        snapshot_argv=snapshot,
        client_mounts=client_mounts,
        snapshot_mounts=snapshot_mounts,
    )
