"""The run file of a measured refresh: provenance, levels, written atomically (raw results are mapped by
`catalogue.imports.vllm_bench.level_from_raw`, which `catalogue import` uses too)."""

from __future__ import annotations

import datetime as dt
import json
import platform
import shutil
import subprocess
from pathlib import Path

import runner
from catalogue.imports.vllm_bench import PREFILL_DERIVATION
from catalogue.models.atomic import write_text
from catalogue.models.benchmark import (
    RUN_STAMP_FORMAT,
    BenchmarkRun,
    Capacity,
    HostFacts,
    LevelResult,
    MeasuredProvenance,
    NodeCommand,
    RateLevel,
    Workload,
)
from catalogue.models.quality import Quality
from catalogue.models.slo import Slo
from catalogue.models.topology import LITELLM_VERSION
from catalogue.policy.secret_scan import value_is_secret
from runner.hosts.child_env import child_env
from runner.hosts.raw_files import read_json
from runner.planning.jobs import Job
from runner.planning.plan import Plan
from runner.recording import left_here


def gpu_description() -> str | None:
    """GPU names and driver from nvidia-smi, when there is one."""
    if shutil.which("nvidia-smi") is None:
        return None
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
        env=child_env(),
    )
    lines = sorted({line.strip() for line in out.stdout.splitlines() if line.strip()})
    return "; ".join(f"{line.split(',')[0]} (driver {line.split(',')[-1].strip()})" for line in lines) or None


def ran_argv(plan: Plan, name: str, jobs: dict[str, Job] | None = None) -> list[str]:
    """The job's argv as it last ran: `--num-prompts` from its raw result (a short level runs again with more);
    `jobs`: the capacity search's probes, which the plan does not hold."""
    job = (jobs or {}).get(name) or plan.job(name)
    argv = list(job.argv)
    raw = plan.raw_dir / f"{name}.json"
    if "--num-prompts" in argv and (raw.exists() or raw.is_symlink()):
        found = read_json(raw)  # the client's container wrote it: regular, no link, within the limits
        ran = found.get("num_prompts") if isinstance(found, dict) else None
        if isinstance(ran, int) and not isinstance(ran, bool):
            argv[argv.index("--num-prompts") + 1] = str(ran)
    return argv


def local_env(env: dict[str, str]) -> dict[str, str]:
    """A local process's variables as a run file may keep them: the home folder as ~, a credential never."""
    home = str(Path.home())
    return {
        name: "~" + value[len(home) :] if value.startswith(home + "/") else value
        for name, value in env.items()
        if not value_is_secret(name, value)
    }


def provenance(
    plan: Plan,
    *,
    vllm_version: str,
    client_vllm_version: str | None,
    flag_snapshot: str | None,
    image_id: str | None,
    done: list[str],
    jobs: dict[str, Job] | None = None,
    preflight: list[str] | None = None,
    hosts: list[HostFacts] | None = None,
) -> MeasuredProvenance:
    """Where the figures come from: every server's command and host, the router, the client, the exact bench argv."""
    head = plan.nodes[0]
    nodes = (
        [NodeCommand(role=n.role, host=n.host.name, command=n.argv) for n in plan.nodes] if len(plan.nodes) > 1 else []
    )
    return MeasuredProvenance(
        method="measured",
        runner_version=runner.__version__,
        vllm_version=vllm_version,
        image=plan.image,
        gpu=gpu_description() if head.host.is_local else None,
        host=platform.node() if head.host.is_local else head.host.name,
        serve_command=head.argv,
        serve_env=local_env(head.env) if head.container is None else {},
        bench_commands=[ran_argv(plan, name, jobs) for name in done],
        prefill_derivation=PREFILL_DERIVATION,
        flag_snapshot=flag_snapshot,
        topology=plan.kind,
        nodes=nodes,
        router=plan.router.config if plan.router else None,
        router_version=f"LiteLLM {LITELLM_VERSION}" if plan.router else None,
        image_id=image_id,
        client=(
            f"vLLM's benchmark client inside {plan.image}"
            if plan.client == "image"
            else "vLLM's benchmark client in the host's Python"
        ),
        client_vllm_version=client_vllm_version,
        preflight=preflight or [],
        hosts=hosts or [],
    )


def build_run(
    *,
    stamp: str,
    provenance: MeasuredProvenance,
    levels: list[LevelResult],
    long_context: list[LevelResult],
    workload: Workload,
    rates: list[RateLevel] | None = None,
    slo: Slo | None = None,
    capacity: Capacity | None = None,
    quality: Quality | None = None,
    complete: bool,
    reason: str | None,
    notes: list[str],
    part: str | None = None,
) -> BenchmarkRun:
    """The run file's content; `part` names another workload of the same refresh (its file `<stamp>-<part>.json`)."""
    recorded = dt.datetime.strptime(stamp, RUN_STAMP_FORMAT).replace(tzinfo=dt.UTC)
    return BenchmarkRun(
        recorded_at=recorded,
        part=part,
        provenance=provenance,
        workload=workload,
        levels=sorted(levels, key=lambda lv: lv.concurrency),
        long_context=sorted(long_context, key=lambda lv: lv.prompt_tokens or 0),
        rates=sorted(rates or [], key=lambda lv: (lv.probe is not None, lv.probe or 0, lv.offered_rps or 0)),
        slo=slo,
        capacity=capacity,
        quality=quality,
        complete=complete,
        incomplete_reason=reason,
        notes=notes,
    )


def write_run(run: BenchmarkRun, path: Path) -> None:
    """Write the run file atomically (temp file + rename); one that stopped early is marked as left here (the only
    kind `--resume` finishes)."""
    text = json.dumps(run.model_dump(mode="json", exclude_none=True), indent=2) + "\n"
    write_text(path, text)
    left_here.remember(path, text, run.complete)
