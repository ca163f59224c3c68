"""What one refresh keeps while it runs: finished work (Progress), what it started (Running),
and its progress line (Bar); Boot: what a step after the sweep reads of them (quality checks, the Arena)."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Protocol

from catalogue.models.benchmark import Capacity, HostFacts, LevelResult, RateLevel
from catalogue.models.loading import Entry
from catalogue.models.passport import Passport
from catalogue.models.quality import Quality
from catalogue.stats.sampling import HostSeries
from runner.hosts import server as srv
from runner.hosts.containers import remove_labelled
from runner.hosts.hosts import LOCAL, Host
from runner.machine import sampler
from runner.planning.jobs import Job
from runner.planning.plan import Plan


@dataclass(frozen=True)
class Window:
    """A finished job's benchmark window (seconds since the epoch, this machine's clock) and its output tokens."""

    start: float
    end: float
    output_tokens: int | None


@dataclass
class Progress:
    """What the refresh has finished so far, and what it learnt on the way."""

    levels: dict[str, LevelResult] = field(default_factory=dict)
    """Finished closed-loop jobs by name: `c4`, `ctx5000`."""
    rates: dict[str, RateLevel] = field(default_factory=dict)
    """Finished open-loop jobs by name: `r2.5`, and the capacity search's `probe1`, `probe2`, ..."""
    probe_jobs: dict[str, Job] = field(default_factory=dict)
    """The probes the search made (their commands go into the run file)."""
    capacity: Capacity | None = None
    """The search's result, once it ended."""
    quality: Quality | None = None
    """The quality checks' section, once they ran."""
    vllm_version: str = "unknown"
    client_vllm_version: str | None = None
    snapshot: str | None = None
    image_id: str | None = None
    notes: list[str] = field(default_factory=list)
    preflight: list[str] = field(default_factory=list)
    """What the preflight found on each host (docker version, image, GPUs, interfaces)."""
    hosts: list[HostFacts] = field(default_factory=list)
    """Each host's provenance: engine, kernel, OS, CPU, image digest, vLLM, model revision, GPU."""
    passports_before: dict[str, Passport] = field(default_factory=dict)
    """Each host's state before the sweep, by host name."""
    passports_after: dict[str, Passport] = field(default_factory=dict)
    """Each host's state after every server stopped, by host name."""
    allowed_state: list[str] = field(default_factory=list)
    """Failed gates the owner overrode with --allow-state (shown on the page as warnings)."""
    windows: dict[str, Window] = field(default_factory=dict)
    """The benchmark window of each job finished in this boot, by name (what the sampler's readings are cut to)."""
    series: list[HostSeries] = field(default_factory=list)
    """What the sampler read on each host during this boot, once it stopped."""

    def finished(self, name: str) -> bool:
        """Whether the job of that name has its figures."""
        return name in self.levels or name in self.rates

    @property
    def done(self) -> int:
        """Finished jobs, of every kind."""
        return len(self.levels) + len(self.rates)

    def note(self, prefix: str, text: str) -> None:
        """Replace the note that starts with `prefix` (a resumed run keeps one per level)."""
        self.notes = [n for n in self.notes if not n.startswith(prefix)] + [text]


@dataclass
class Running:
    """Everything a refresh started, so that one place stops all of it, on every host."""

    plan: Plan
    nodes: dict[str, subprocess.Popen] = field(default_factory=dict)
    router: subprocess.Popen | None = None
    client: subprocess.Popen | None = None
    snapshot: subprocess.Popen | None = None
    serve: subprocess.Popen | None = None
    """With Ray: `vllm serve` on the head, started once every node joined."""
    redact: list[str] = field(default_factory=list)
    """Values no log may hold (the run's API key, the variables passed by name): masked as output is written."""
    samplers: list[sampler.Sampler] = field(default_factory=list)
    """The GPU sampler of each host (runner/machine/sampler.py), from just before the sweep."""

    def node_exits(self) -> list[tuple[str, int]]:
        """(description, exit code) of every server that has exited."""
        out = []
        for node in self.plan.nodes:
            process = self.nodes.get(node.role)
            if process is not None and process.poll() is not None:
                out.append((f"{node.role} on host {node.host.name}", process.returncode))
        return out

    def check_alive(self, when: str) -> None:
        """Fail naming the first server (or the router) that exited."""
        for what, code in self.node_exits():
            node = next(n for n in self.plan.nodes if what.startswith(n.role + " "))
            raise srv.failure(f"{what} exited with code {code} {when}", self.plan.raw_dir / node.log_name)
        if self.serve is not None and self.serve.poll() is not None:
            raise srv.failure(
                f"vllm serve on the Ray head exited with code {self.serve.returncode} {when}",
                self.plan.raw_dir / srv.SERVE_LOG,
            )
        if self.router is not None and self.router.poll() is not None:
            raise srv.failure(
                f"router exited with code {self.router.returncode} {when}", self.plan.raw_dir / "router.log"
            )

    def stop(self, *, wait_snapshot: bool) -> list[str]:
        """Client, router, every container with this run's label on every host, every process session.

        Each host is cleaned on its own: one that does not answer is named, with the command that cleans it,
        and the others are still cleaned. Returns those lines (empty when everything was removed)."""
        for each in self.samplers:
            sampler.stop(each)
        if self.client is not None:
            if self.client.stdin:
                try:
                    self.client.stdin.close()
                except OSError:
                    pass
            srv.stop_group(self.client, grace_s=3)
        if self.router is not None:
            srv.stop_group(self.router, grace_s=5)
        unclean: dict[Host, str] = {}
        self._remove(self.plan.engines if self.plan.image else [], unclean)
        for process in [*self.nodes.values(), *([self.serve] if self.serve else [])]:
            srv.stop_group(process)
        if self.snapshot is not None:
            if wait_snapshot and self.snapshot.poll() is None:
                try:
                    self.snapshot.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    pass
            srv.stop_group(self.snapshot, grace_s=1)
            if self.plan.image:
                self._remove([LOCAL], unclean)
        return list(unclean.values())

    def _remove(self, hosts: list[Host], unclean: dict[Host, str]) -> None:
        for host in hosts:
            try:
                remove_labelled(host, self.plan.label)
                unclean.pop(host, None)
            except Exception as exc:
                docker = shlex.join(host.docker_cli())
                unclean[host] = (
                    f"host {host.name} ({exc}): clean it with "
                    f"`{docker} rm -f $({docker} ps -aq --filter label={self.plan.label})`"
                )


class Bar:
    """A progress line on stderr: redrawn in place on a terminal, else a new line on change or every 15 s."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.last = ""
        self.at = 0.0

    def show(self, done: int, label: str) -> None:
        filled = int(20 * done / max(self.total, 1))
        text = f"[{'#' * filled}{'.' * (20 - filled)}] {done}/{self.total} levels {label}"
        if sys.stderr.isatty():
            print(f"\r{text}".ljust(72), end="", file=sys.stderr, flush=True)
            return
        key = text.split(" waiting")[0]
        if key != self.last or time.monotonic() - self.at > 15:
            print(text, file=sys.stderr, flush=True)
            self.last, self.at = key, time.monotonic()


class Boot(Protocol):
    """One boot of a recipe's servers as a step after the sweep sees it (runner.refresh.Refresh is one): the plan,
    the recipe, what was measured, what runs, the progress line and the boot's API key; nothing of the sweep."""

    @property
    def plan(self) -> Plan: ...
    @property
    def entry(self) -> Entry: ...
    @property
    def progress(self) -> Progress: ...
    @property
    def running(self) -> Running: ...
    @property
    def bar(self) -> Bar: ...
    @property
    def key(self) -> str: ...
