"""One boot of a recipe's servers: the flag snapshot and the benchmark client first (the client parses every
job before any server starts), then every server; ready when each runs and every API answers /health; the
LiteLLM router of replica recipes, warmed once per replica."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

from catalogue.models.atomic import write_text
from catalogue.models.errors import CatalogueError
from runner.hosts import cpu_placement
from runner.hosts import server as srv
from runner.hosts.containers import LABEL_RECIPE, LABEL_RUN
from runner.hosts.hosts import LOCAL
from runner.hosts.raw_files import read_lines, reply_version
from runner.measuring.sweep import ClientFailed
from runner.planning.helper_containers import prepare_caches, prepare_snapshot
from runner.planning.inspect_gate import Container, Verdicts, create_all
from runner.planning.jobs import Job
from runner.planning.plan import OWNER_SETTINGS, Plan, router_yaml
from runner.state import Bar, Progress, Running


def server_version(base_url: str) -> str:
    """The version the running server reports on /version."""
    try:
        with urllib.request.urlopen(f"{base_url}/version", timeout=5) as response:
            return reply_version(response, base_url) or "unknown"
    except (OSError, ValueError, CatalogueError):
        return "unknown"


def launch(
    plan: Plan, running: Running, progress: Progress, key: str, todo: list[Job], verdicts: Verdicts | None = None
) -> None:
    """Create every container and judge docker's view of it (runner.planning.inspect_gate); then start the flag snapshot
    and the benchmark client and, once the client accepts every job, every server."""
    raw = plan.raw_dir
    write_text(raw / "jobs.json", json.dumps([job.payload() for job in todo]))  # by rename: never through a link
    write_text(raw / "events.jsonl", "")
    prepare_snapshot(plan)
    prepare_caches(plan)
    client_env = {"OPENAI_API_KEY": key}
    starts = {}
    if plan.image:
        starts = create_all(gate_containers(plan, client_env), image_roles(plan), verdicts or Verdicts({}, []))
    running.snapshot = srv.start(
        starts.get(SNAPSHOT, plan.snapshot_argv), {}, raw / "snapshot.log", redact=running.redact
    )
    with cpu_placement.starting_on(plan.client_cpus):
        running.client = srv.start(
            starts.get(CLIENT, plan.client_argv),
            client_env,
            raw / "client.log",
            stdin=subprocess.PIPE,
            redact=running.redact,
            by_name=[] if CLIENT in starts else client_by_name(plan),
        )
    progress.client_vllm_version = wait_client(plan, running.client)
    for node in plan.nodes:
        argv = starts.get(node.role, node.argv)
        by_name = [] if node.container else node.by_name  # a container's were fixed at `docker create`
        running.nodes[node.role] = srv.start(
            argv, node.env, raw / node.log_name, redact=running.redact, by_name=by_name
        )


SNAPSHOT, CLIENT = "flag snapshot", "benchmark client"


def client_by_name(plan: Plan) -> list[str]:
    """What a benchmark client in this Python takes from the owner: the HF cache's place and the recipe's by-name
    variables (a gated tokenizer needs the token); nothing else of the owner's shell."""
    return list(dict.fromkeys([*OWNER_SETTINGS, *(plan.nodes[0].by_name if plan.nodes else [])]))


def image_roles(plan: Plan) -> dict[str, str]:
    """The image of each container the gate creates, by role."""
    image = str(plan.image)
    return {SNAPSHOT: image, CLIENT: image, **{node.role: image for node in plan.nodes}}


def gate_containers(plan: Plan, client_env: dict[str, str]) -> list[Container]:
    """Every container of the run as the inspect gate creates it: servers first, then the snapshot and client."""
    labels = {LABEL_RECIPE: plan.recipe_id, LABEL_RUN: plan.stamp}
    out = [
        Container(n.role, n.host, n.argv, n.env, n.labels, n.own_mounts, n.by_name, own_entrypoint=n.own_entrypoint)
        for n in plan.nodes
        if n.container
    ]
    out.append(Container(SNAPSHOT, LOCAL, plan.snapshot_argv, {}, labels, plan.snapshot_mounts, own_entrypoint=True))
    if plan.client == "image":
        out.append(
            Container(
                CLIENT,
                LOCAL,
                plan.client_argv,
                client_env,
                labels,
                plan.client_mounts,
                plan.nodes[0].by_name if plan.nodes else [],
                interactive=True,
                own_entrypoint=True,
            )
        )
    return out


def client_events(path: Path) -> list[dict]:
    """The client's complete events so far (runner.hosts.raw_files.read_lines: the file is in the folder its
    container writes); a link, FIFO, huge file or a line that is no event is ClientFailed naming the file."""
    try:
        return read_lines(path)[0]
    except CatalogueError as exc:
        raise ClientFailed(f"benchmark client's events: {exc}") from None


def wait_client(plan: Plan, client: subprocess.Popen, timeout_s: float = 600) -> str | None:
    """The client's vLLM version once it has parsed every job with its own parser; a refused job fails the run
    before any server starts (an image whose client lacks a flag would otherwise fail after a cold boot)."""
    events = plan.raw_dir / "events.jsonl"
    where = f"inside {plan.image}" if plan.client == "image" else "in this Python"
    started = time.monotonic()
    while True:
        exited = client.poll() is not None
        for event in client_events(events):
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
