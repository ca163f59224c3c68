"""The sweep: release the benchmark client, record each level the moment it finishes, stop on any fault."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from catalogue.imports.vllm_bench import level_from_raw, rate_level_from_raw
from catalogue.models.errors import CatalogueError
from catalogue.models.plausible import MAX_CALIBRATION_MS
from catalogue.stats.engine_timing import EngineTiming, timing
from catalogue.stats.spec_decode import SpecDecodeFigures, figures, parse_counters
from runner.hosts.raw_files import read_json, read_lines
from runner.planning.jobs import Job
from runner.planning.plan import Plan
from runner.state import Window

if TYPE_CHECKING:
    from catalogue.models.slo import Slo
    from runner.state import Bar, Progress, Running


def spec_figures(event: dict) -> SpecDecodeFigures | None:
    """A level's speculative-decoding figures from the counter lines the client read around it; None when it read
    none, or the server exports none (the recipe's method made no drafts the counters know of)."""
    before, after = event.get("metrics_before"), event.get("metrics_after")
    if before is None or after is None:
        return None
    first, last = parse_counters(before), parse_counters(after)
    if first is None or last is None:
        return None
    try:
        return figures(first, last)
    except ValueError:
        return None


def engine_timing(event: dict) -> EngineTiming | None:
    """A level's server-side timing from the histogram lines the client read around it; None when it read none."""
    before, after = event.get("metrics_before"), event.get("metrics_after")
    return None if before is None or after is None else timing(before, after)


def calibrations(event: dict) -> list[float] | None:
    """The machine's CPU calibration just before and after a level (the client's reading); None when it took none,
    or not two positive numbers within MAX_CALIBRATION_MS (the image's Python wrote them: untrusted)."""
    found = event.get("calibration_ms")
    if not isinstance(found, list) or len(found) != 2:
        return None
    if not all(isinstance(x, int | float) and not isinstance(x, bool) and 0 < x <= MAX_CALIBRATION_MS for x in found):
        return None
    return [float(x) for x in found]


class ClientFailed(Exception):
    """`vllm bench serve` failed or reported failed requests."""


class Sweep:
    """The benchmark client's events: the planned jobs still to do, then (capacity search) one job at a time."""

    def __init__(self, plan: Plan, running: Running, progress: Progress, bar: Bar, slo: Slo | None = None) -> None:
        self.plan, self.running, self.progress, self.bar = plan, running, progress, bar
        self.limits = slo.limits if slo else {}
        """The SLO's limits, ms by vLLM --goodput key: each open-loop level counts the requests above them."""
        self.percentile = slo.percentile if slo else 95
        """The SLO's percentile: the tail whose runs say how independent a level's requests are."""
        self.seen = 0
        self.failures: dict[str, str] = {}
        """Jobs the client could not run, by name (an open-loop probe's failure ends the search, not the run)."""

    def run(self, todo: list[Job]) -> None:
        """Release the client and take every planned job; return once each has its figures."""
        self._send("go")
        self._until([job for job in todo if not job.parse_only], wait_exit=not self.plan.capacity)

    def one(self, job: Job) -> None:
        """Give the waiting client one more job (a probe) and take its result."""
        self.progress.probe_jobs[job.name] = job
        self._send("job " + json.dumps(job.payload()))
        self._until([job], wait_exit=False)

    def end(self) -> None:
        """Tell a waiting client there is nothing more."""
        self._send("end")

    def _send(self, line: str) -> None:
        client = self.running.client
        assert client is not None and client.stdin is not None
        client.stdin.write(line.encode() + b"\n")
        client.stdin.flush()

    def _until(self, jobs: list[Job], wait_exit: bool) -> None:
        client = self.running.client
        assert client is not None
        events = self.plan.raw_dir / "events.jsonl"
        names = {job.name for job in jobs}
        while True:
            exited = client.poll() is not None  # before reading: every event it wrote is then in this read
            for event in self._new_events(events):
                if event["kind"] == "ready":
                    self.progress.client_vllm_version = event.get("vllm_version")
                elif event["kind"] == "level":
                    try:
                        self._take(event)
                    except (KeyError, TypeError, ValueError, AttributeError, StopIteration) as exc:  # another shape
                        self._blame_servers()
                        raise ClientFailed(f"{events}: a level event without its fields ({exc!r})") from None
                    except ClientFailed:
                        self._blame_servers()
                        raise
                    planned = sum(1 for job in self.plan.levels if self.progress.finished(job.name))
                    self.bar.show(planned, f"{event['name']} done")
            self.running.check_alive("during the sweep")
            missing = [name for name in names if not self.progress.finished(name) and name not in self.failures]
            if not missing and not wait_exit:
                return
            if exited:
                if client.returncode != 0 or missing:
                    self._blame_servers()
                    raise ClientFailed(
                        f"benchmark client exited with code {client.returncode}; see {self.plan.raw_dir / 'client.log'}"
                    )
                return
            time.sleep(0.2)

    def _new_events(self, path: Path) -> list[dict]:
        try:  # the complete lines (one still being written waits); the file is in the client container's folder
            complete = read_lines(path)[0]
        except CatalogueError as exc:
            raise ClientFailed(f"benchmark client's events: {exc}") from None
        new = complete[self.seen :]
        self.seen = len(complete)
        return new

    def _blame_servers(self, wait_s: float = 3.0) -> None:
        """When requests fail because a server died, say so: the server's exit is the real cause."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            self.running.check_alive("during the sweep")
            time.sleep(0.1)

    def _job(self, name: str) -> Job:
        return self.progress.probe_jobs.get(name) or self.plan.job(name)

    def _take(self, event: dict) -> None:
        """Record a finished job. A closed-loop level with failed requests is not kept (its raw file stays); an
        open-loop level keeps its failures, which its verdict reports."""
        name = event["name"]
        job = self._job(name)
        if not event["ok"]:
            if job.probe is not None:
                self.failures[name] = event["error"]
                return
            raise ClientFailed(f"benchmark client failed at {name}: {event['error']}")
        path = self.plan.raw_dir / f"{name}.json"
        try:  # the client runs in the recipe's image: its file is untrusted, read within the limits
            raw = read_json(path)  # regular, no link, within the size and nesting limits
        except CatalogueError as exc:
            raise ClientFailed(str(exc)) from None
        raw_name = f"{self.plan.stamp}/{name}.json"
        read = {
            "spec_decode": spec_figures(event),
            "engine": engine_timing(event),
            "calibration_ms": calibrations(event),
        }
        read = {key: value for key, value in read.items() if value is not None}
        try:
            rate = (
                rate_level_from_raw(raw, raw_name, job.probe, self.limits, self.percentile)
                if job.rate is not None
                else None
            )
            result = level_from_raw(raw, job.concurrency or 1, raw_name, job.prompt_tokens) if rate is None else None
        except ValidationError as exc:  # the client (in the recipe's image) wrote a figure no level can have
            error = exc.errors()[0]
            raise ClientFailed(f"{name}: {'.'.join(map(str, error['loc']))}: {error['msg']}") from None
        if rate is not None:
            self.progress.rates[name] = rate.model_copy(update=read)
        else:
            assert job.concurrency is not None and result is not None
            if result.failed:
                raise ClientFailed(
                    f"{name}: {result.failed} of {result.failed + (result.completed or 0)} requests failed"
                )
            self.progress.levels[name] = result.model_copy(update=read)
        ended, duration = event.get("ended_at"), event.get("duration_s")
        if ended and duration:
            self.progress.windows[name] = Window(ended - duration, ended, raw.get("total_output_tokens"))
        overhead = event["wall_s"] - (event.get("duration_s") or 0)
        again = (
            f"; ran {event['attempts']} times to last at least {job.min_s:g} s ({event.get('num_prompts')} requests)"
            if event.get("attempts", 1) > 1
            else ""
        )
        self.progress.note(
            f"{name}:", f"{name}: {event['wall_s']:.2f} s wall, {overhead:.2f} s outside the benchmark window{again}"
        )
