"""`catalogue refresh <id>`: plan -> lock -> launch -> sweep -> record, keeping completed levels on any fault."""

from __future__ import annotations

import secrets
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from catalogue.models import texts
from catalogue.models.atomic import write_text
from catalogue.models.benchmark import BenchmarkRun, MeasuredProvenance
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import Entry, load_catalogue
from catalogue.policy.check import PolicyFinding
from catalogue.publish.regression_table import markdown
from catalogue.stats import regression
from runner.hosts import cpu_placement
from runner.hosts import server as srv
from runner.hosts.containers import LABEL_RECIPE, HostUnreachable, image_id, remove_labelled
from runner.hosts.hosts import HOSTS_FILE, Host, parse_hosts
from runner.hosts.lock import refresh_lock
from runner.machine import sampler
from runner.machine.preflight import PreflightFailed, run_preflight
from runner.measuring import capacity_search, ray_cluster
from runner.measuring.agents import step_agents
from runner.measuring.arena import dry_run_lines as arena_dry_run
from runner.measuring.arena import step_arena
from runner.measuring.boot import launch, server_version, start_router, wait_ready
from runner.measuring.quality import step_quality
from runner.measuring.state_gate import gate_state, read_after
from runner.measuring.sweep import ClientFailed, Sweep
from runner.planning import policy_gate
from runner.planning.dry_run import describe
from runner.planning.estimate import estimate
from runner.planning.estimate import lines as estimate_lines
from runner.planning.helper_containers import finish_snapshot
from runner.planning.inspect_gate import Refused, Verdicts
from runner.planning.jobs import Job, shift_seeds
from runner.planning.plan import Plan, make_plan
from runner.recording.rerun import (
    finished_jobs,
    finished_probe_jobs,
    finished_rates,
    refuse_different,
    reproducing,
    resumable,
    same_setup,
)
from runner.save_runs import save
from runner.state import Bar, Progress, Running


def clear_stale(plan: Plan) -> None:
    """Containers of this recipe left by a refresh that was killed outright: we hold the lock, so they are orphans."""
    if not plan.image:
        return
    for host in plan.engines:
        try:
            removed = remove_labelled(host, f"{LABEL_RECIPE}={plan.recipe_id}")
        except HostUnreachable as exc:
            raise srv.ServerFailed(f"host {host.name}: cannot clear containers of an earlier refresh: {exc}") from None
        if removed:
            print(f"removed {len(removed)} container(s) of an earlier refresh on host {host.name}", file=sys.stderr)


REGRESSED = 3
"""Exit code of a refresh that found a regression, with --fail-on-regression."""


def check_regression(entry: Entry, run: BenchmarkRun, fail: bool, table: Path | None = None) -> int:
    """Print the run against the earlier runs of its workload (and write the Markdown table to `table`);
    REGRESSED when asked to fail on one."""
    found = regression.report(entry.runs, run, entry.recipe.sweep.regression)
    print(found.text(), file=sys.stderr)
    if table is not None:
        write_text(table, markdown(entry.id, found))
    return REGRESSED if fail and found.regressions else 0


@dataclass
class Refresh:
    """One boot of a recipe's servers and the sweep against it: what the steps share."""

    plan: Plan
    entry: Entry
    progress: Progress
    running: Running
    bar: Bar
    key: str = field(default_factory=lambda: "sk-" + secrets.token_hex(16))
    """The API key of this boot (servers, router and client)."""
    resumed_image_id: str | None = None
    """A resumed run's image id: the image must still be the same."""
    sweep: Sweep | None = None
    """The benchmark client's events, once released (the capacity search goes on reading them)."""
    verdicts: Verdicts | None = None
    """What the static gate accepted: the inspect gate judges docker's view of each container against it."""

    @property
    def todo(self) -> list[Job]:
        """The jobs not finished yet (a resumed run skips the rest); the probe template is always checked."""
        return [job for job in self.plan.jobs if not self.progress.finished(job.name)]


def step_clear(r: Refresh) -> None:
    clear_stale(r.plan)


def step_launch(r: Refresh) -> None:
    launch(r.plan, r.running, r.progress, r.key, r.todo, r.verdicts)


def step_ray(r: Refresh) -> None:
    if r.plan.ray:
        joined = ray_cluster.wait_for_nodes(r.plan, r.running, r.plan.health_timeout_s)
        r.progress.note("ray cluster", f"ray cluster of {len(r.plan.nodes)} nodes formed after {joined:.1f} s")
        ray_cluster.start_serve(r.plan, r.running)


def step_ready(r: Refresh) -> None:
    took = wait_ready(r.plan, r.running, r.bar, len(r.progress.levels))
    r.progress.vllm_version = server_version(str(r.plan.api_node.base_url))
    r.progress.note("server healthy", f"server healthy after {took:.1f} s")
    if r.plan.image:
        r.progress.image_id = image_id(r.plan.nodes[0].host, r.plan.image)
        if r.resumed_image_id and r.progress.image_id != r.resumed_image_id:
            raise srv.ServerFailed(
                f"cannot resume: the image {r.plan.image} is now {r.progress.image_id}, the run's levels were measured "
                f"on {r.resumed_image_id}; start a new run (without --resume)"
            )
    r.bar.show(len(r.progress.levels), f"healthy after {took:.0f} s")


def step_router(r: Refresh) -> None:
    if r.plan.router_argv is not None:
        router_s = start_router(r.plan, r.running, r.key)
        r.progress.note("router live", f"router live after {router_s:.1f} s")


def step_sample(r: Refresh) -> None:
    sampler.start_all(r.plan, r.running.samplers)


def step_sweep(r: Refresh) -> None:
    slo = r.entry.recipe.sweep.slo
    r.sweep = Sweep(r.plan, r.running, r.progress, r.bar, slo)
    r.sweep.run(r.todo)


def step_capacity(r: Refresh) -> None:
    if r.plan.capacity:
        assert r.sweep is not None
        r.progress.capacity = capacity_search.search(r.plan, r.entry.recipe, r.sweep, r.progress)


STEPS = (
    step_clear,
    step_launch,
    step_ray,
    step_ready,
    step_router,
    step_sample,
    step_sweep,
    step_capacity,
    step_quality,
    step_arena,
    step_agents,
)
"""A refresh, in order; any step may raise ServerFailed, ClientFailed or KeyboardInterrupt."""


def execute(
    plan: Plan,
    entry: Entry,
    progress: Progress,
    resumed_image_id: str | None = None,
    fail_on_regression: bool = False,
    verdicts: Verdicts | None = None,
    report_table: Path | None = None,
) -> int:
    """Run the steps against one boot, stop everything, record; 0 only when the sweep completed."""
    plan.raw_dir.mkdir(parents=True, exist_ok=True)
    texts.write_files(plan.raw_dir, entry.recipe.sweep.texts)  # the fixed prompts the client reads, kept with the run
    refresh = Refresh(plan, entry, progress, Running(plan), Bar(len(plan.levels)), resumed_image_id=resumed_image_id)
    refresh.verdicts = verdicts
    refresh.running.redact = [refresh.key, *policy_gate.secret_values(entry)]
    reason: str | None = None
    code = 1
    try:
        for step in STEPS:
            step(refresh)
        code = 0
    except Refused as exc:
        print(
            "refused by the run policy (as docker made the containers), nothing started:",
            exc,
            sep="\n",
            file=sys.stderr,
        )
    except (srv.ServerFailed, ClientFailed, CatalogueError) as exc:  # a bad file in the raw folder too
        reason = str(exc).splitlines()[0]
        print(f"\nrefresh failed: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        reason = "interrupted (Ctrl-C)"
        code = 130
        print("\ninterrupted; stopping every server", file=sys.stderr)
    except BaseException as exc:  # a fault of the runner itself: keep what was measured, then let it surface
        reason = f"the runner failed: {type(exc).__name__}: {exc}"
        raise
    finally:
        try:
            unclean = refresh.running.stop(wait_snapshot=code == 0)
        except BaseException as exc:
            unclean = [f"stopping failed ({type(exc).__name__}: {exc})"]
        measured = code == 0
        progress.series = [sampler.aligned(s) for s in refresh.running.samplers]
        read_after(plan, progress)
        for line in unclean:
            print(f"left unclean: {line}", file=sys.stderr)
            progress.note(f"left unclean: {line.split(' (', 1)[0]}", f"left unclean: {line}")
        code = code or (1 if unclean else 0)
        finish_snapshot(plan)
        if (plan.raw_dir / "flags.json").exists():
            progress.snapshot = f"{plan.stamp}/flags.json"
        if progress.done:
            runs = save(plan, entry, progress, complete=measured, reason=reason)
            planned = sum(1 for job in plan.levels if progress.finished(job.name))
            probes = f" and {len(progress.probe_jobs)} capacity probes" if progress.probe_jobs else ""
            also = "".join(f" and {run.file_stem}.json" for run in runs[1:])
            print(f"\nwrote {plan.run_file}{also} ({planned}/{len(plan.levels)} levels{probes})", file=sys.stderr)
            regressed = max(  # each kind of text against its own earlier runs; the report table of the first
                check_regression(entry, run, fail_on_regression, report_table if i == 0 else None)
                for i, run in enumerate(runs)
            )
            code = code or regressed
    return code


def run_refresh(
    roots: list[Path],
    recipe_id: str,
    *,
    dry_run: bool = False,
    resume: bool = False,
    local: bool = False,
    port: int | None = None,
    hosts: str | None = None,
    hosts_file: Path | None = None,
    client: str | None = None,
    router_port: int | None = None,
    allow_shared_host: bool = False,
    allow: list[str] | None = None,
    fail_on_regression: bool = False,
    report_table: Path | None = None,
    reproduce: BenchmarkRun | None = None,
    capacity: bool = False,
    allow_state: list[str] | None = None,
    cpus: frozenset[int] | None = None,
    client_cpus: frozenset[int] | None = None,
    seed_base: int = 0,
) -> int:
    """The `refresh` command; with `reproduce`, the run's own set-up again (`catalogue reproduce --refresh`)."""
    entry = load_catalogue(roots, [recipe_id])[0]
    host_list: list[Host] = parse_hosts(hosts, hosts_file)
    if reproduce is not None:
        entry, port, router_port = reproducing(entry, reproduce, port, router_port, host_list[0], allow or [])

    def plan_for(stamp: str | None = None) -> Plan:
        planned = make_plan(
            entry,
            hosts=host_list,
            local=local,
            port=port,
            stamp=stamp,
            client=client,
            router_port=router_port,
            allow_shared_host=allow_shared_host,
            capacity=capacity,
        )
        jobs = shift_seeds(planned.jobs, seed_base)
        return replace(planned, client_cpus=client_cpus, seed_base=seed_base, jobs=jobs)

    plan = plan_for()
    if client_cpus and plan.client == "image":
        raise CatalogueError(
            entry.folder / "recipe.yaml",
            "--client-cpus places a local benchmark client; this one runs in the recipe's image (--client host runs "
            "it in this Python)",
        )
    if cpus and plan.image:
        raise CatalogueError(
            entry.folder / "recipe.yaml",
            "--cpus places a local run; docker places a container (--cpuset-cpus in serving.container.options)",
        )
    if reproduce is not None:
        same_setup(reproduce, plan)
    found = policy_gate.findings(entry, plan)
    refused = policy_gate.refusals(found, allow or [])
    if dry_run:
        print(
            "\n".join(
                [
                    describe(plan, [f.line() for f in found], refused),
                    *arena_dry_run(plan, entry.folder, entry.recipe),
                    *estimate_lines(estimate(entry, plan)),
                ]
            )
        )
        return 0
    refused += policy_gate.missing_env(entry)
    if refused:
        print("refused by the run policy, nothing started:", *refused, sep="\n", file=sys.stderr)
        return 1
    if plan.missing:
        raise CatalogueError(
            hosts_file or HOSTS_FILE,
            f"not given: {entry.id} runs across machines, so each host needs the interface of the link between "
            "them (e.g. enp1s0f1np1; `ip -br addr` on the host lists them)",
            plan.missing[0],
        )
    if plan.image and shutil.which("docker") is None:
        raise CatalogueError(
            entry.folder / "recipe.yaml", "serving.image needs docker, which is not installed (or pass --local)"
        )
    with refresh_lock(entry.folder):
        try:
            had = cpu_placement.keep_on(cpus) if cpus else None
        except ValueError as exc:
            raise CatalogueError(entry.folder / "recipe.yaml", f"--cpus: {exc}") from None
        try:
            return measure(
                entry,
                plan,
                plan_for,
                found,
                resume=resume,
                allow=allow or [],
                allow_state=allow_state or [],
                fail_on_regression=fail_on_regression,
                report_table=report_table,
                cpus=cpus,
            )
        finally:
            cpu_placement.restore(had)


def measure(
    entry: Entry,
    plan: Plan,
    plan_for: Callable[[str | None], Plan],
    found: list[PolicyFinding],
    *,
    resume: bool,
    allow: list[str],
    allow_state: list[str],
    fail_on_regression: bool,
    report_table: Path | None,
    cpus: frozenset[int] | None,
) -> int:
    """Under the recipe's lock (and on `cpus`): resume, preflight, the state gates, then one boot (`execute`)."""
    progress = Progress()
    previous = resumable(entry) if resume else None
    if previous is not None:
        plan = plan_for(previous.stamp)
        refuse_different(previous, plan, entry)
        progress.levels = finished_jobs(previous)
        progress.rates = finished_rates(previous)
        progress.probe_jobs = finished_probe_jobs(previous, plan)
        progress.notes = list(previous.notes)
        print(f"resuming run {previous.stamp}: {sorted([*progress.levels, *progress.rates])} done", file=sys.stderr)
    if cpus or plan.client_cpus:
        progress.note("CPU placement", cpu_placement.note(cpus, plan.client_cpus))
    started = time.monotonic()
    try:
        checked = run_preflight(plan)
    except PreflightFailed as exc:
        print(f"preflight failed, nothing started:\n{exc}", file=sys.stderr)
        return 1
    progress.preflight, progress.hosts = checked.found, checked.hosts
    if not gate_state(plan, entry, progress, allow_state):
        return 1
    progress.note("preflight", f"preflight and provenance took {time.monotonic() - started:.1f} s")
    resumed_id = (
        previous.provenance.image_id if previous and isinstance(previous.provenance, MeasuredProvenance) else None
    )
    verdicts = policy_gate.verdicts(found, allow, entry, plan)
    return execute(plan, entry, progress, resumed_id, fail_on_regression, verdicts, report_table)
