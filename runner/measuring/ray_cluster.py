"""Ray clusters for `distributed-executor-backend: ray`: wait until every node joined, then serve on the head."""

from __future__ import annotations

import subprocess
import time
from typing import TYPE_CHECKING

from catalogue.models.topology import RAY_PORT
from runner.hosts import server as srv
from runner.hosts.child_env import for_argv
from runner.planning.plan import Plan

if TYPE_CHECKING:
    from runner.state import Running


def active_nodes(status: str) -> int:
    """How many nodes `ray status` lists as active."""
    if "Active:" not in status:
        return 0
    section = status.split("Active:", 1)[1].split("Pending:", 1)[0]
    return sum(1 for line in section.splitlines() if "node_" in line)


def status_argv(plan: Plan) -> list[str]:
    """`ray status` on the head: inside its container, or against its address."""
    head = plan.nodes[0]
    if head.container:
        return [*head.host.docker_cli(), "exec", head.container, "ray", "status"]
    return ["ray", "status", "--address", f"{head.host.address}:{RAY_PORT}"]


def wait_for_nodes(plan: Plan, running: Running, timeout_s: float) -> float:
    """Seconds until `ray status` on the head counts every node; fails naming a node that exited, or the count."""
    started = time.monotonic()
    seen = 0
    while True:
        running.check_alive("before the Ray cluster formed")
        try:
            argv = status_argv(plan)
            out = subprocess.run(
                argv, capture_output=True, text=True, check=False, timeout=60, env=for_argv(argv)
            ).stdout
        except subprocess.TimeoutExpired:
            out = ""
        seen = active_nodes(out)
        if seen >= len(plan.nodes):
            return time.monotonic() - started
        if time.monotonic() - started > timeout_s:
            raise srv.ServerFailed(f"Ray cluster has {seen} of {len(plan.nodes)} nodes after {timeout_s:.0f} s")
        time.sleep(1)


def start_serve(plan: Plan, running: Running) -> None:
    """`vllm serve` on the head (docker exec into its container, or a local process)."""
    head = plan.nodes[0]
    assert head.exec_argv is not None
    running.serve = srv.start(head.exec_argv, head.env, plan.raw_dir / srv.SERVE_LOG, redact=running.redact)
