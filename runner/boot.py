"""One boot of a recipe's servers: the flag snapshot and the benchmark client first (the client parses every
job before any server starts), then every server; ready when each runs and every API answers /health; the
LiteLLM router of replica recipes, warmed once per replica."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request

from catalogue.atomic import write_text
from runner import server as srv
from runner.plan import Job, Plan, router_yaml
from runner.state import Bar, Progress, Running
from runner.sweep import ClientFailed


def server_version(base_url: str) -> str:
    """The version the running server reports on /version."""
    try:
        with urllib.request.urlopen(f"{base_url}/version", timeout=5) as response:
            return str(json.loads(response.read()).get("version", "unknown"))
    except (OSError, ValueError):
        return "unknown"


def launch(plan: Plan, running: Running, progress: Progress, key: str, todo: list[Job]) -> None:
    """Start the flag snapshot and the benchmark client; once the client accepts every job, every server."""
    raw = plan.raw_dir
    (raw / "jobs.json").write_text(json.dumps([job.payload() for job in todo]))
    running.snapshot = srv.start(plan.snapshot_argv, {}, raw / "snapshot.log", redact=running.redact)
    (raw / "events.jsonl").write_text("")
    running.client = srv.start(
        plan.client_argv, {"OPENAI_API_KEY": key}, raw / "client.log", stdin=subprocess.PIPE, redact=running.redact
    )
    progress.client_vllm_version = wait_client(plan, running.client)
    for node in plan.nodes:
        running.nodes[node.role] = srv.start(node.argv, node.env, raw / node.log_name, redact=running.redact)


def wait_client(plan: Plan, client: subprocess.Popen, timeout_s: float = 600) -> str | None:
    """The client's vLLM version once it has parsed every job with its own parser; a refused job fails the run
    before any server starts (an image whose client lacks a flag would otherwise fail after a cold boot)."""
    events = plan.raw_dir / "events.jsonl"
    where = f"inside {plan.image}" if plan.client == "image" else "in this Python"
    started = time.monotonic()
    while True:
        exited = client.poll() is not None
        text = events.read_text()
        for line in text.splitlines()[: text.count("\n")]:
            event = json.loads(line)
            if event.get("kind") == "ready":
                refused = event.get("refused") or {}
                if refused:
                    name, why = next(iter(refused.items()))
                    raise ClientFailed(
                        f"vLLM's benchmark client {where} (vLLM {event.get('vllm_version')}) refuses level {name}: "
                        f"{why}; no server was started"
                    )
                return event.get("vllm_version")
        if exited:
            raise srv.failure(
                f"benchmark client {where} exited with code {client.returncode} before it was ready",
                plan.raw_dir / "client.log",
            )
        if time.monotonic() - started > timeout_s:
            raise ClientFailed(f"benchmark client {where} not ready after {timeout_s:.0f} s")
        time.sleep(0.2)


def wait_ready(plan: Plan, running: Running, bar: Bar, done: int) -> float:
    """Seconds until every server runs and every API answers /health; fails naming the server that exited."""
    started = time.monotonic()
    urls = [f"{n.base_url}/health" for n in plan.nodes if n.base_url]
    while True:
        elapsed = time.monotonic() - started
        running.check_alive("before it was healthy")
        if all(srv.healthy(url) for url in urls):
            return elapsed
        if elapsed > plan.health_timeout_s:
            raise srv.ServerFailed(
                f"{plan.api_node.role} on host {plan.api_node.host.name} not healthy after "
                f"{plan.health_timeout_s} s\n{srv.log_tail(plan.raw_dir / plan.api_node.log_name)}"
            )
        bar.show(done, f"waiting for /health {elapsed:.0f} s")
        time.sleep(0.5)


def start_router(plan: Plan, running: Running, key: str, timeout_s: float = 120) -> float:
    """Write the router's config beside the raw results, start LiteLLM, wait for its liveliness check."""
    assert plan.router_argv is not None
    write_text(plan.raw_dir / "router.yaml", router_yaml(plan))
    argv = [litellm_command(), *plan.router_argv[1:]]
    started = time.monotonic()
    running.router = srv.start(argv, {"LITELLM_MASTER_KEY": key}, plan.raw_dir / "router.log", redact=running.redact)
    while not srv.healthy(f"{plan.endpoint}/health/liveliness"):
        running.check_alive("while the router started")
        if time.monotonic() - started > timeout_s:
            raise srv.ServerFailed(
                f"router not live after {timeout_s:.0f} s\n{srv.log_tail(plan.raw_dir / 'router.log')}"
            )
        time.sleep(0.3)
    warm_router(plan, key)
    return time.monotonic() - started


def warm_router(plan: Plan, key: str) -> None:
    """One one-token request per replica through the router, so its first connections are not in c=1's window."""
    body = json.dumps({"model": plan.router_model, "prompt": "warm-up", "max_tokens": 1}).encode()
    for _ in plan.nodes:
        request = urllib.request.Request(
            f"{plan.endpoint}/v1/completions",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                response.read()
        except OSError as exc:
            raise srv.failure(f"router did not answer a warm-up request ({exc})", plan.raw_dir / "router.log") from None


def litellm_command() -> str:
    """The LiteLLM proxy: $CATALOGUE_LITELLM, else `litellm` on PATH or beside this Python."""
    return os.environ.get("CATALOGUE_LITELLM") or srv.executable("litellm")
