"""The Arena step of a refresh: after the quality checks, against the same server in the same boot, the recipe's
Spark Arena profile (`sweep.arena`) with the pinned llama-benchy. Its figures become run files of their own beside
the refresh's run, one per (pp, tg, depth) workload (catalogue.imports.llama_benchy.read_report groups them). A
failing Arena run records why in the refresh's notes and never fails the refresh."""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from catalogue.imports import llama_benchy
from catalogue.imports.source import ImportedLevels
from catalogue.models.arena import ArenaSetting
from catalogue.models.benchmark import RUN_STAMP_FORMAT, BenchmarkRun
from catalogue.models.errors import CatalogueError
from catalogue.models.launch import shell_command
from catalogue.models.loading import RUNS_DIR
from catalogue.models.recipe import Recipe
from catalogue.models.workload import Workload
from catalogue.policy.secret_scan import mask
from catalogue.stats import regression
from runner.hosts.raw_files import keep_file
from runner.measuring.arena_corpus import served_corpus
from runner.measuring.quality import served_model
from runner.measuring.tool_command import interpreter, key_launcher, run_to_end, tool_command
from runner.recording.record import build_run, provenance, write_run

if TYPE_CHECKING:
    from runner.planning.plan import Plan
    from runner.state import Boot

ARENA_TIMEOUT_S = 6 * 3600
"""The whole Arena run (the full profile reaches 100,000 tokens of context at 10 in flight); a stalled one is ended."""
KEY_VARIABLE = "LLAMA_BENCHY_API_KEY"
"""llama-benchy takes its key only as --api-key: the launcher below adds it inside the process, read from here."""
LAUNCHER = key_launcher(KEY_VARIABLE)
"""llama-benchy's entry script with the key appended to its own sys.argv, never on its command line."""
REPORT, LOG = "arena.json", "arena.log"
EXACT_TG = "answers forced to --tg tokens"
"""What the workload's prompt source adds under --exact-tg: such figures never compare with the Arena's own."""


def benchy_command() -> str | None:
    """llama-benchy: $CATALOGUE_LLAMA_BENCHY, else on PATH or beside this Python; None when not installed."""
    return tool_command("CATALOGUE_LLAMA_BENCHY", "llama-benchy")


def tokenizer(entry_folder: Path, recipe: Recipe) -> str:
    """What llama-benchy tokenizes with: the recipe's model folder when it is on this machine, else the model id."""
    path = recipe.serving.model_path
    if path and (entry_folder / path).is_dir():
        return str((entry_folder / path).resolve())
    return recipe.model


def arena_argv(
    command: str,
    endpoint: str,
    recipe: Recipe,
    served: str,
    tokenizer_name: str,
    setting: ArenaSetting,
    book_url: str,
    report: Path,
) -> list[str]:
    """llama-benchy with the setting's values against the endpoint's /v1 (chat completions), its corpus from
    `book_url`, its JSON report in `report`; without the API key (the launcher adds it)."""
    values = setting.values
    return [
        command, "--base-url", f"{endpoint}/v1", "--model", recipe.model, "--served-model-name", served,
        "--tokenizer", tokenizer_name,
        "--pp", *map(str, values.pp), "--tg", *map(str, values.tg), "--depth", *map(str, values.depths),
        "--concurrency", *map(str, values.concurrency), "--runs", str(values.runs),
        *(["--enable-prefix-caching"] if values.prefix_caching else []), *(["--exact-tg"] if setting.exact_tg else []),
        "--book-url", book_url, "--skip-coherence", "--format", "json", "--save-result", str(report),
    ]  # fmt: skip


def recorded(argv: list[str], key: str) -> list[str]:
    """The command as the run file keeps it: `llama-benchy` by name, the key the launcher added, masked."""
    return ["llama-benchy", *argv[1:], "--api-key", mask(key)]


def run_benchy(r: Boot, setting: ArenaSetting) -> tuple[list[ImportedLevels], list[str], float]:
    """Run llama-benchy once over the whole profile; its report read into workloads, its recorded command, its
    time. Raises ValueError with the reason when there are no figures."""
    command = benchy_command()
    if command is None:
        raise ValueError("llama-benchy is not installed (set CATALOGUE_LLAMA_BENCHY)")
    python = interpreter(command)
    if python is None:
        raise ValueError(f"{command} is not a Python entry script: its API key could only go on its command line")
    raw = r.plan.raw_dir.resolve()
    log = raw / LOG
    recipe = r.entry.recipe
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="arena-") as scratch, served_corpus(Path(scratch)) as url:
        report = (
            Path(scratch) / "report" / REPORT
        )  # written here, then copied in (the raw folder is container-writable)
        report.parent.mkdir()
        argv = arena_argv(
            command, r.plan.endpoint, recipe, served_model(r.plan, recipe), tokenizer(r.entry.folder, recipe),
            setting, url, report,
        )  # fmt: skip
        env = {
            KEY_VARIABLE: r.key,
            "HOME": scratch,  # its book cache (~/.cache/llama-benchy) stays in the scratch folder
            "HF_HOME": os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface"),
        }
        code = run_to_end("llama-benchy", python, LAUNCHER, argv, env, log, r.running.redact, ARENA_TIMEOUT_S)
        took = time.monotonic() - started
        if code != 0:
            raise ValueError(f"llama-benchy exited with code {code} (see {RUNS_DIR}/{r.plan.stamp}/{LOG})")
        try:
            parts = llama_benchy.read_report(report)
            keep_file(report, raw / REPORT)
        except CatalogueError as exc:
            raise ValueError(str(exc)) from None
        shown = [str(raw / REPORT) if word == str(report) else word for word in argv]  # the kept copy, as before
    return parts, recorded(shown, r.key), took


def arena_workload(part: ImportedLevels, setting: ArenaSetting) -> Workload:
    """The workload of one (pp, tg, depth) group: llama-benchy's, named as the Arena profile."""
    return Workload(
        tool=part.tool,
        tool_version=part.tool_version,
        dataset=f"{part.dataset}, {EXACT_TG}" if setting.exact_tg else part.dataset,
        input_len=int(part.input_tokens) if part.input_tokens else None,
        output_len=int(part.output_tokens) if part.output_tokens else None,
        context_depth=part.context_depth,
        repetitions=part.repetitions,
        profile=setting.profile,
        profile_scaling=setting.scaling(),
    )


def free_stamps(plan: Plan, count: int) -> list[str]:
    """Stamps for the Arena's run files: the seconds after the refresh's own run that no file holds yet."""
    start = dt.datetime.strptime(plan.stamp, RUN_STAMP_FORMAT).replace(tzinfo=dt.UTC)
    runs = plan.folder / RUNS_DIR
    out: list[str] = []
    second = 1
    while len(out) < count:
        stamp = (start + dt.timedelta(seconds=second)).strftime(RUN_STAMP_FORMAT)
        if not (runs / f"{stamp}.json").exists() and not (runs / stamp).exists():
            out.append(stamp)
        second += 1
    return out


def arena_runs(r: Boot, setting: ArenaSetting, parts: list[ImportedLevels], command: list[str]) -> list[Path]:
    """One run file per workload of the report, with the refresh's measured provenance and the Arena's command; each
    against the earlier runs of its workload (printed, as the refresh's own run is)."""
    p = r.progress
    base = provenance(
        r.plan,
        vllm_version=p.vllm_version,
        client_vllm_version=None,
        flag_snapshot=p.snapshot
        or (f"{r.plan.stamp}/flags.json" if (r.plan.raw_dir / "flags.json").exists() else None),
        image_id=p.image_id,
        done=[],
        preflight=p.preflight,
        hosts=p.hosts,
    )
    prov = base.model_copy(
        update={
            "bench_commands": [command],
            "prefill_derivation": parts[0].definitions,
            "client": f"llama-benchy {parts[0].tool_version} on this machine (its own venv), one process for the "
            f"whole profile; the Arena's raw report and log: {r.plan.stamp}/{REPORT}, {r.plan.stamp}/{LOG}",
        }
    )
    written = []
    for stamp, part in zip(free_stamps(r.plan, len(parts)), sorted(parts, key=lambda x: x.context_depth), strict=True):
        levels = [lv.model_copy(update={"raw": [f"{r.plan.stamp}/{REPORT}"]}) for lv in part.levels]
        notes = [
            f"Spark Arena profile {setting.profile} ({setting.base.title}) run by the catalogue runner after the "
            f"quality checks of run {r.plan.stamp}, against the same server in the same boot.",
            "Prompts cut from a fixed local text served on 127.0.0.1 (llama-benchy's --book-url), not its default "
            "book; one llama-benchy process in its own order of tests, not the Arena's heat-aware schedule.",
            *part.notes,
        ]
        run: BenchmarkRun = build_run(
            stamp=stamp,
            provenance=prov,
            levels=levels,
            long_context=[],
            workload=arena_workload(part, setting),
            complete=True,
            reason=None,
            notes=notes,
        )
        path = r.plan.folder / RUNS_DIR / f"{stamp}.json"
        write_run(run, path)
        written.append(path)
        print(regression.report(r.entry.runs, run, r.entry.recipe.sweep.regression).text(), file=sys.stderr)
    return written


def step_arena(r: Boot) -> None:
    """The refresh step after the quality checks: the recipe's Arena profile, then a note of what it wrote."""
    setting = r.entry.recipe.sweep.arena
    if setting is None:
        return
    r.bar.show(len(r.progress.levels), f"Arena profile {setting.profile}")
    prefix = f"arena {setting.profile}"
    started = time.monotonic()
    try:
        parts, command, took = run_benchy(r, setting)
        written = arena_runs(r, setting, parts, command)
    except (OSError, ValueError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        r.progress.note(prefix, f"{prefix}: no figures ({why}) after {time.monotonic() - started:.1f} s")
        print(f"\nArena profile gave no figures: {why}", file=sys.stderr)
        return
    depths = ", ".join(str(p.context_depth) for p in sorted(parts, key=lambda x: x.context_depth))
    names = ", ".join(path.name for path in written)
    r.progress.note(prefix, f"{prefix}: {len(written)} run file(s) ({names}; depths {depths}) in {took:.1f} s")
    print(f"\nArena profile {setting.profile}: wrote {names}", file=sys.stderr)


def dry_run_lines(plan: Plan, entry_folder: Path, recipe: Recipe) -> list[str]:
    """What the dry run prints for the Arena step: nothing when the recipe asks for none."""
    setting = recipe.sweep.arena
    if setting is None:
        return []
    argv = arena_argv(
        benchy_command() or "llama-benchy", plan.endpoint, recipe, served_model(plan, recipe),
        tokenizer(entry_folder, recipe), setting, "http://127.0.0.1:<port>/book.txt", plan.raw_dir / REPORT,
    )  # fmt: skip
    scaled = setting.scaling()
    return [
        "",
        f"Arena profile {setting.profile} ({setting.base.title}"
        + (f", scaled down for {scaled}" if scaled else "")
        + "), after the quality checks, llama-benchy on this machine; the run's API key is added inside its process "
        f"({KEY_VARIABLE}), a fixed text is served on 127.0.0.1 as its book; one run file per depth:",
        "\n".join("    " + line for line in shell_command(argv).splitlines()),
    ]
