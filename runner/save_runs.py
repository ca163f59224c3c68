"""What a refresh writes: one run file per kind of text the sweep sent (catalogue.models.texts). The first kind's file
(`<stamp>.json`) also carries the long-context and open-loop levels, the capacity and the quality checks; each
other kind's (`<stamp>-<kind>.json`) its closed-loop levels, under a workload of its own."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from catalogue.models.benchmark import BenchmarkRun, LevelResult, RateLevel
from catalogue.models.errors import CatalogueError
from catalogue.models.launch import sweep_workload
from catalogue.models.loading import Entry
from catalogue.models.texts import TextKind
from catalogue.stats.sampling import level_machine
from runner.hosts.raw_files import read_json
from runner.measuring import capacity_search
from runner.measuring.state_gate import with_passports
from runner.planning.plan import Plan
from runner.recording.record import build_run, provenance, write_run
from runner.state import Progress

Level = TypeVar("Level", LevelResult, RateLevel)


def with_machine(progress: Progress, name: str, level: Level) -> Level:
    """The level with what the sampler read over its window (a level of an earlier boot keeps its own)."""
    window = progress.windows.get(name)
    if window is None or not progress.series:
        return level
    machine = level_machine(progress.series, window.start, window.end, window.output_tokens)
    return level.model_copy(update={"machine": machine})


def run_file(plan: Plan, text: TextKind, first: TextKind) -> Path:
    """`<stamp>.json` for the first kind of text, `<stamp>-<kind>.json` for another."""
    return plan.run_file if text == first else plan.run_file.with_name(f"{plan.stamp}-{text}.json")


def mean_prompt_tokens(raw_dir: Path, names: list[str]) -> int | None:
    """Prompt tokens per request over the named levels' raw results, as vLLM's client counted them."""
    tokens = requests = 0
    for name in names:
        try:
            raw = read_json(raw_dir / f"{name}.json")  # regular, no link, within the limits
            tokens, requests = tokens + int(raw["total_input_tokens"]), requests + int(raw["completed"])
        except (OSError, ValueError, KeyError, TypeError, CatalogueError):
            continue
    return round(tokens / requests) if requests else None


def save(plan: Plan, entry: Entry, progress: Progress, complete: bool, reason: str | None) -> list[BenchmarkRun]:
    """Write every kind of text's run file with the jobs finished so far; return the runs written, the first kind's
    first. Another kind with no finished level writes no file."""
    texts = entry.recipe.sweep.texts
    done = [job.name for job in plan.levels if progress.finished(job.name)]
    by_text = {text: [n for n in done if plan.job(n).text == text] for text in texts}
    by_text[texts[0]] += [name for name in progress.probe_jobs if name in progress.rates]
    runs = [_one_run(plan, entry, progress, complete, reason, texts[0], by_text[texts[0]], main=True)]
    runs += [
        _one_run(plan, entry, progress, complete, reason, text, by_text[text], main=False)
        for text in texts[1:]
        if by_text[text]
    ]
    return runs


def _one_run(
    plan: Plan,
    entry: Entry,
    progress: Progress,
    complete: bool,
    reason: str | None,
    text: TextKind,
    done: list[str],
    *,
    main: bool,
) -> BenchmarkRun:
    recipe = entry.recipe
    prov = provenance(
        plan,
        vllm_version=progress.vllm_version,
        client_vllm_version=progress.client_vllm_version,
        flag_snapshot=progress.snapshot,
        image_id=progress.image_id,
        done=done,
        jobs=progress.probe_jobs,
        preflight=progress.preflight,
        hosts=progress.hosts,
    )
    prov = prov.model_copy(
        update={
            "hosts": with_passports(prov.hosts, progress.passports_before, progress.passports_after),
            "allowed_state": progress.allowed_state,
        }
    )
    closed = [with_machine(progress, n, progress.levels[n]) for n in done if n in progress.levels]
    slo = recipe.sweep.slo if main else None
    verdicts = capacity_search.rate_verdicts(progress, slo) if slo else {}
    rates = (
        [
            with_machine(progress, n, lv.model_copy(update={"verdict": verdicts[lv.offered_rps]}) if slo else lv)
            for n, lv in progress.rates.items()
        ]
        if main
        else []
    )
    closed_names = [n for n in done if n in progress.levels and progress.levels[n].prompt_tokens is None]
    prompt_tokens = None if text == "random" else mean_prompt_tokens(plan.raw_dir, closed_names)
    run = build_run(
        stamp=plan.stamp,
        provenance=prov,
        levels=[lv for lv in closed if lv.prompt_tokens is None],
        long_context=[lv for lv in closed if lv.prompt_tokens is not None],
        rates=rates,
        slo=slo if rates else None,
        capacity=progress.capacity if main else None,
        quality=progress.quality if main else None,
        workload=sweep_workload(recipe, progress.client_vllm_version, text, prompt_tokens),
        complete=complete,
        reason=reason,
        notes=progress.notes,
        part=None if main else text,
    )
    write_run(run, run_file(plan, text, recipe.sweep.texts[0]))
    return run
