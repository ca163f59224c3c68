"""Running a recorded run again: `--resume` takes the newest run that stopped early and its finished levels, and
finishes it only if it would measure the same thing; `catalogue reproduce --refresh` measures it again pinned to
what it ran (image digest or id, model revision, its own ports), refusing when the recipe's flags changed since."""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from catalogue.models import texts
from catalogue.models.benchmark import BenchmarkRun, LevelResult, MeasuredProvenance, RateLevel
from catalogue.models.errors import CatalogueError
from catalogue.models.launch import sweep_workload
from catalogue.models.loading import RUNS_DIR, Entry
from catalogue.models.reproduce import foreign_images
from catalogue.models.slo import probe_name, rate_name
from catalogue.stats.run_differences import flag_items
from runner.hosts.containers import image_id
from runner.hosts.hosts import Host
from runner.planning.jobs import Job, rate_job
from runner.planning.plan import Plan
from runner.recording import left_here
from runner.recording.reproduction import run_pin, run_ports, with_pin


def reproducing(
    entry: Entry, run: BenchmarkRun, port: int | None, router_port: int | None, head: Host, allowed: list[str]
) -> tuple[Entry, int | None, int | None]:
    """The recipe pinned as the run ran it (image digest or id, model revision) and the run's own ports.

    The image is the recipe's: a run whose file names another repository (or a digest or id that is none) is
    refused, and so is a digest or revision of the file's that the recipe does not name and the owner has not
    allowed (`allowed`: --allow 'pin ...'). A locally built image has no digest, only an id on the machine that
    built it: where the recipe's image on the head host has another id, it was rebuilt from its recipe, and its
    tag runs (said so)."""
    serving = entry.recipe.serving
    foreign = foreign_images(run, serving.image)
    if foreign:
        raise CatalogueError(
            entry.folder / "runs" / f"{run.stamp}.json", f"not reproducible, nothing started: {'; '.join(foreign)}"
        )
    the_pin = run_pin(entry, run, allowed)
    if the_pin.unpinned:
        raise CatalogueError(Path(the_pin.source), "nothing started: " + "; ".join(the_pin.unpinned))
    local_id = bool(the_pin.image and the_pin.image.startswith("sha256:"))
    if local_id and serving.image and shutil.which("docker"):
        current = image_id(head, serving.image)
        if current != the_pin.image:
            print(
                f"note: the run's image {the_pin.image} is not {serving.image} on host {head.name}: running "
                f"{serving.image} ({current or 'not there either'}), rebuilt from its recipe",
                file=sys.stderr,
            )
            the_pin = replace(the_pin, image=serving.image)
    ran_port, ran_router = run_ports(run)
    for note in the_pin.notes:
        print(f"note: {note}", file=sys.stderr)
    return (
        with_pin(entry, the_pin),
        ran_port if port is None else port,
        ran_router if router_port is None else router_port,
    )


def same_setup(run: BenchmarkRun, plan: Plan) -> None:
    """A reproduction runs the run's own flags: refuse when the recipe changed since."""
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    before = [n.command for n in prov.nodes] or [prov.serve_command]
    for old, new in zip(before, [n.argv for n in plan.nodes]):
        was, now = (flag_items(c[c.index("serve") + 1 :]) if "serve" in c else [] for c in (old, new))
        if was != now:
            diff = sorted(set(was) ^ set(now))
            raise CatalogueError(
                plan.folder / "recipe.yaml",
                f"cannot reproduce run {run.stamp}: the recipe's flags changed since ({', '.join(diff) or 'order'})",
            )


def refuse_different(previous: BenchmarkRun, plan: Plan, entry: Entry) -> None:
    """A resumed run must measure the same thing: the same server commands and the same workload."""
    prov = previous.provenance
    assert isinstance(prov, MeasuredProvenance)
    before = [n.command for n in prov.nodes] or [prov.serve_command]
    now = [n.argv for n in plan.nodes]
    if before != now:
        changed = next(
            (f"{a!r} -> {b!r}" for x, y in zip(before, now) for a, b in zip(x, y) if a != b),
            f"{len(before)} -> {len(now)} servers" if len(before) != len(now) else "the command's length",
        )
        raise CatalogueError(
            plan.run_file, f"cannot resume: the serve command differs from the run's ({changed}); start a new run"
        )
    workload = sweep_workload(entry.recipe, previous.workload.tool_version if previous.workload else None)
    if previous.workload is not None and previous.workload != workload:
        raise CatalogueError(
            plan.run_file,
            "cannot resume: the workload differs from the run's "
            f"({workload.describe()} vs {previous.workload.describe()})",
        )


def resumable(entry: Entry, now: dt.datetime | None = None) -> BenchmarkRun | None:
    """The newest measured run that stopped early and that this machine's runner left so (`left_here`); each newer
    one passed over is said in one line."""
    first = texts.dataset(entry.recipe.sweep.texts[0])  # another kind's levels are measured again on a resume
    runs = [
        r
        for r in entry.runs
        if isinstance(r.provenance, MeasuredProvenance)
        and not r.complete
        and r.workload is not None
        and r.workload.dataset == first
    ]
    for run in sorted(runs, key=lambda r: r.recorded_at, reverse=True):
        why = why_not_resumed(entry, run, now or dt.datetime.now(dt.UTC))
        if why is None:
            return run
        print(f"note: not resuming run {run.stamp}: {why}", file=sys.stderr)
    return None


def why_not_resumed(entry: Entry, run: BenchmarkRun, now: dt.datetime) -> str | None:
    """Why an incomplete run is not this machine's to finish: dated later than now, not left here, or a container
    run with no image id (its levels could not be tied to the image that will run the rest)."""
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    if run.recorded_at > now:
        return f"recorded_at {run.recorded_at:%Y-%m-%d %H:%M} UTC is later than now"
    if prov.image is not None and prov.image_id is None:
        return f"it ran the container {prov.image} but recorded no image id"
    return left_here.why_not_here(entry.folder / RUNS_DIR / f"{run.file_stem}.json")


def finished_jobs(run: BenchmarkRun) -> dict[str, LevelResult]:
    """A run's finished closed-loop levels by job name."""
    done = {f"c{lv.concurrency}": lv for lv in run.levels}
    done.update({f"ctx{lv.prompt_tokens}": lv for lv in run.long_context if lv.prompt_tokens})
    return done


def finished_rates(run: BenchmarkRun) -> dict[str, RateLevel]:
    """A run's finished open-loop levels by job name: planned rates and the search's probes."""
    return {
        probe_name(lv.probe) if lv.probe is not None else rate_name(lv.offered_rps or 0): lv
        for lv in run.rates
        if lv.offered_rps is not None
    }


def finished_probe_jobs(run: BenchmarkRun, plan: Plan) -> dict[str, Job]:
    """The kept probes' commands, rebuilt from the plan's probe template and each probe's recorded rate and number
    (the same `--seed`; `--num-prompts` is read back from its raw result when the run file is written), so a resumed
    run's file keeps the exact command of every probe it holds."""
    if plan.probe_template is None:
        return {}
    return {
        probe_name(lv.probe): rate_job(
            plan.probe_template,
            probe_name(lv.probe),
            lv.offered_rps,
            lv.completed or 0,
            probe=lv.probe,
            seed_base=plan.seed_base,
        )
        for lv in run.rates
        if lv.probe is not None and lv.offered_rps is not None
    }
