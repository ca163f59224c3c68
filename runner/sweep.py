"""The sweep: release the benchmark client, record each level the moment it finishes, stop on any fault."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from catalogue.imports.vllm_bench import level_from_raw
from runner.plan import Job, Plan

if TYPE_CHECKING:
    from runner.state import Bar, Progress, Running


class ClientFailed(Exception):
    """`vllm bench serve` failed or reported failed requests."""


class Sweep:
    """One pass of the benchmark client over the jobs still to do."""

    def __init__(self, plan: Plan, running: Running, progress: Progress, bar: Bar) -> None:
        self.plan, self.running, self.progress, self.bar = plan, running, progress, bar
        self.seen = 0

    def run(self, todo: list[Job]) -> None:
        client = self.running.client
        assert client is not None and client.stdin is not None
        client.stdin.write(b"go\n")
        client.stdin.flush()
        events = self.plan.raw_dir / "events.jsonl"
        while True:
            exited = client.poll() is not None  # before reading: every event it wrote is then in this read
            for event in self._new_events(events):
                if event["kind"] == "ready":
                    self.progress.client_vllm_version = event.get("vllm_version")
                elif event["kind"] == "level":
                    try:
                        self._take(event)
                    except ClientFailed:
                        self._blame_servers()
                        raise
                    self.bar.show(len(self.progress.levels), f"{event['name']} done")
            self.running.check_alive("during the sweep")
            if exited:
                if client.returncode != 0 or any(job.name not in self.progress.levels for job in todo):
                    self._blame_servers()
                    raise ClientFailed(
                        f"benchmark client exited with code {client.returncode}; see {self.plan.raw_dir / 'client.log'}"
                    )
                return
            time.sleep(0.2)

    def _new_events(self, path: Path) -> list[dict]:
        text = path.read_text()
        lines = text.splitlines()
        complete = lines if text.endswith("\n") else lines[:-1]  # a line still being written waits
        new = [json.loads(line) for line in complete[self.seen :]]
        self.seen = len(complete)
        return new

    def _blame_servers(self, wait_s: float = 3.0) -> None:
        """When requests fail because a server died, say so: the server's exit is the real cause."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            self.running.check_alive("during the sweep")
            time.sleep(0.1)

    def _take(self, event: dict) -> None:
        """Record a finished job; one with failed requests is not kept (its raw file stays)."""
        name = event["name"]
        if not event["ok"]:
            raise ClientFailed(f"benchmark client failed at {name}: {event['error']}")
        job = self.plan.job(name)
        raw = json.loads((self.plan.raw_dir / f"{name}.json").read_text())
        result = level_from_raw(raw, job.concurrency, f"{self.plan.stamp}/{name}.json", job.prompt_tokens)
        if result.failed:
            raise ClientFailed(f"{name}: {result.failed} of {result.failed + (result.completed or 0)} requests failed")
        self.progress.levels[name] = result
        overhead = event["wall_s"] - (event.get("duration_s") or 0)
        again = (
            f"; ran {event['attempts']} times to last at least {job.min_s:g} s ({event.get('num_prompts')} requests)"
            if event.get("attempts", 1) > 1
            else ""
        )
        self.progress.note(
            f"{name}:", f"{name}: {event['wall_s']:.2f} s wall, {overhead:.2f} s outside the benchmark window{again}"
        )
