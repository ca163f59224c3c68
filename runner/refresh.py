"""`catalogue refresh <id>`: plan -> lock -> launch -> sweep -> record, keeping completed levels on any fault."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from catalogue.benchmark import BenchmarkRun, LevelResult, MeasuredProvenance
from catalogue.errors import CatalogueError
from catalogue.loading import Entry, load_catalogue
from runner import server as srv
from runner.lock import refresh_lock
from runner.plan import Plan, describe, make_plan, snapshot_argv, with_results
from runner.record import build_run, level_from_raw, write_run


@dataclass
class Progress:
    """What the sweep has finished so far."""

    levels: dict[int, LevelResult] = field(default_factory=dict)
    vllm_version: str = "unknown"
    snapshot: str | None = None
    notes: list[str] = field(default_factory=list)


_last_line = {"text": "", "at": 0.0}


def bar(done: int, total: int, label: str) -> None:
    """A progress bar on stderr: redrawn in place on a terminal, a new line every 15 s or on change otherwise."""
    filled = int(20 * done / max(total, 1))
    text = f"[{'#' * filled}{'.' * (20 - filled)}] {done}/{total} levels {label}"
    if sys.stderr.isatty():
        print(f"\r{text}".ljust(72), end="", file=sys.stderr, flush=True)
        return
    key = text.split(" waiting")[0]
    if key != _last_line["text"] or time.monotonic() - _last_line["at"] > 15:
        print(text, file=sys.stderr, flush=True)
        _last_line.update(text=key, at=time.monotonic())


def resumable(entry: Entry) -> BenchmarkRun | None:
    """The newest measured run that stopped early."""
    runs = [r for r in entry.runs if isinstance(r.provenance, MeasuredProvenance) and not r.complete]
    return max(runs, key=lambda r: r.recorded_at) if runs else None


def server_version(base_url: str) -> str:
    """The version the running server reports on /version."""
    try:
        with urllib.request.urlopen(f"{base_url}/version", timeout=5) as response:
            return str(json.loads(response.read()).get("version", "unknown"))
    except (OSError, ValueError):
        return "unknown"


def start_snapshot(plan: Plan) -> subprocess.Popen | None:
    """Dump the flag snapshot of the server's own vLLM, beside the raw results, while the server boots."""
    return subprocess.Popen(snapshot_argv(plan), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def save(plan: Plan, entry: Entry, progress: Progress, complete: bool, reason: str | None) -> None:
    """Write the run file with every level finished so far."""
    recipe = entry.recipe
    image = None if plan.container is None else recipe.serving.image
    run = build_run(stamp=plan.stamp, serve=plan.serve, bench=plan.bench, levels=list(progress.levels.values()),
                    vllm_version=progress.vllm_version, image=image, flag_snapshot=progress.snapshot,
                    input_len=recipe.sweep.input_len, output_len=recipe.sweep.output_len, complete=complete,
                    reason=reason, notes=progress.notes)
    write_run(run, plan.run_file)


def start_client(plan: Plan, todo: list[int]) -> subprocess.Popen:
    """Start vLLM's benchmark client for the remaining levels; it imports vLLM while the server boots."""
    jobs, events, go = plan.raw_dir / "jobs.json", plan.raw_dir / "events.jsonl", plan.raw_dir / "go"
    jobs.write_text(json.dumps([{"level": c, "argv": plan.bench[c]} for c in todo]))
    events.write_text("")
    go.unlink(missing_ok=True)
    with open(plan.raw_dir / "client.log", "ab") as log:
        return subprocess.Popen([sys.executable, "-m", "runner.driver", str(jobs), str(events), str(go)], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)


def sweep(plan: Plan, server: srv.Server, client: subprocess.Popen, progress: Progress, todo: list[int]) -> None:
    """Let the client run; record each level as soon as it finishes; stop on any fault."""
    events = plan.raw_dir / "events.jsonl"
    (plan.raw_dir / "go").write_text("go\n")
    seen = 0
    while True:
        exited = client.poll() is not None  # before reading: every event it wrote is then in this read
        lines = events.read_text().splitlines()
        for line in lines[seen:]:
            event = json.loads(line)
            if event["kind"] == "level":
                try:
                    _take_level(plan, progress, event)
                except ClientFailed:
                    _blame_server(server)
                    raise
                bar(len(progress.levels), len(plan.levels), f"c={event['level']} done")
        seen = len(lines)
        if server.exit_code() is not None:
            raise srv.ServerFailed(f"server exited with code {server.exit_code()} during the sweep\n{srv.log_tail(server)}")
        if exited:
            if client.returncode != 0 or any(c not in progress.levels for c in todo):
                raise ClientFailed(f"benchmark client exited with code {client.returncode}; see {plan.raw_dir / 'client.log'}")
            return
        time.sleep(0.2)


def _blame_server(server: srv.Server, wait_s: float = 3.0) -> None:
    """When requests fail because the server died, say so: the server's exit is the real cause."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if server.exit_code() is not None:
            raise srv.ServerFailed(f"server exited with code {server.exit_code()} during the sweep\n{srv.log_tail(server)}")
        time.sleep(0.1)


class ClientFailed(Exception):
    """`vllm bench serve` failed or reported failed requests."""


def _take_level(plan: Plan, progress: Progress, event: dict) -> None:
    """Record a finished level; a level with failed requests is not kept (its raw file stays)."""
    level = event["level"]
    if not event["ok"]:
        raise ClientFailed(f"benchmark client failed at c={level}: {event['error']}")
    raw = json.loads((plan.raw_dir / f"c{level}.json").read_text())
    result = level_from_raw(raw, level, f"{plan.stamp}/c{level}.json")
    if result.failed:
        raise ClientFailed(f"c={level}: {result.failed} of {result.failed + (result.completed or 0)} requests failed")
    progress.levels[level] = result
    overhead = event["wall_s"] - (event.get("duration_s") or 0)
    progress.notes = [n for n in progress.notes if not n.startswith(f"c={level}:")] + [
        f"c={level}: {event['wall_s']:.2f} s wall, {overhead:.2f} s outside the benchmark window"]


def execute(plan: Plan, entry: Entry, progress: Progress) -> int:
    """Boot once, sweep what is left, stop everything, record; 0 only when the sweep completed."""
    todo = [c for c in plan.levels if c not in progress.levels]
    plan.raw_dir.mkdir(parents=True, exist_ok=True)
    snapshot = start_snapshot(plan)
    client = start_client(plan, todo)
    server: srv.Server | None = None
    reason: str | None = None
    code = 1
    try:
        server = srv.start(plan.serve, plan.env, plan.raw_dir / "server.log", plan.container)
        took = srv.wait_healthy(server, plan.base_url, plan.health_timeout_s,
                                lambda s: bar(len(progress.levels), len(plan.levels), f"waiting for /health {s:.0f} s"))
        progress.vllm_version = server_version(plan.base_url)
        progress.notes = [n for n in progress.notes if not n.startswith("server healthy")] + [f"server healthy after {took:.1f} s"]
        bar(len(progress.levels), len(plan.levels), f"healthy after {took:.0f} s")
        sweep(plan, server, client, progress, todo)
        code = 0
    except (srv.ServerFailed, ClientFailed) as exc:
        reason = str(exc).splitlines()[0]
        print(f"\nrefresh failed: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        reason = "interrupted (Ctrl-C)"
        code = 130
        print("\ninterrupted; stopping the server", file=sys.stderr)
    finally:
        srv.stop_group(client, grace_s=3)
        if server is not None:
            srv.stop(server)
        if snapshot is not None:
            if snapshot.poll() is None and code == 0:
                snapshot.wait(timeout=120)
            srv.stop_group(snapshot, grace_s=1)
            if (plan.raw_dir / "flags.json").exists():
                progress.snapshot = f"{plan.stamp}/flags.json"
    if progress.levels:
        save(plan, entry, progress, complete=code == 0, reason=reason)
        print(f"\nwrote {plan.run_file} ({len(progress.levels)}/{len(plan.levels)} levels)", file=sys.stderr)
    return code


def run_refresh(roots: list[Path], recipe_id: str, *, dry_run: bool = False, resume: bool = False, local: bool = False,
                port: int | None = None) -> int:
    """The `refresh` command."""
    entry = load_catalogue(roots, [recipe_id])[0]
    needs_docker = entry.recipe.serving.image is not None and not local
    plan = with_results(make_plan(entry, local=local or entry.recipe.serving.image is None, port=port))
    if dry_run:
        print(describe(plan))
        return 0
    if needs_docker and shutil.which("docker") is None:
        raise CatalogueError(entry.folder / "recipe.yaml", "serving.image needs docker, which is not installed (or pass --local)")
    with refresh_lock(entry.folder):
        progress = Progress()
        previous = resumable(entry) if resume else None
        if previous is not None:
            plan = with_results(make_plan(entry, local=local or entry.recipe.serving.image is None, port=port, stamp=previous.stamp))
            progress.levels = {lv.concurrency: lv for lv in previous.levels}
            progress.notes = list(previous.notes)
            print(f"resuming run {previous.stamp}: {sorted(progress.levels)} done", file=sys.stderr)
        return execute(plan, entry, progress)
