"""`catalogue import ID FILE...`: read -> group by workload -> build runs -> write (raw files beside each run).

Imported files are untrusted: every string of every file to be kept passes the secret scanner (a credential is
an error), and the owner's --command and other texts are masked before writing. Everything is read and checked
before anything is written; each run's folder of raw files is staged and renamed
into place, then its run file is written atomically."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from catalogue.commands.import_agents import agent_exports, agent_run
from catalogue.imports import aiperf, guidellm, llama_benchy, vllm_bench
from catalogue.imports.source import ImportedLevels, read_json, regular_file
from catalogue.imports.workloads import Group, Stated, describe_rate, group_parts
from catalogue.models.atomic import write_text
from catalogue.models.benchmark import RUN_STAMP_FORMAT, BenchmarkRun, ImportedProvenance
from catalogue.models.bounded import MAX_IMPORT_BYTES, read_regular
from catalogue.models.errors import CatalogueError, from_validation
from catalogue.models.loading import RECIPE_FILE, RUNS_DIR, load_entry, parse_run, recipe_folders
from catalogue.policy.file_secrets import check_json, file_secret_errors, mask_text
from catalogue.stats.capacity import judge

FORMATS = {
    vllm_bench.TOOL: "`vllm bench serve --save-result` JSON",
    vllm_bench.SWEEP: "`vllm bench sweep serve` output folder",
    vllm_bench.WORKLOAD_SWEEP: "`vllm bench sweep serve_workload` output folder",
    llama_benchy.TOOL: "llama-benchy JSON report (--format json)",
    guidellm.TOOL: "GuideLLM JSON report (benchmarks.json, report version 2)",
    aiperf.TOOL: "AIPerf profile_export_aiperf.json (schema 1.4 / 1.5)",
}
KNOWN = (
    "a `vllm bench serve` result, a `vllm bench sweep serve` / `serve_workload` folder, a llama-benchy JSON report, "
    "a GuideLLM benchmarks.json or an AIPerf profile_export_aiperf.json"
)


@dataclass(frozen=True)
class Source:
    """What the person importing knows about the files' origin."""

    title: str | None = None
    source: str | None = None
    date: dt.date | None = None
    label: str | None = None
    image: str | None = None
    vllm_version: str | None = None
    command: str | None = None


def masked_source(source: Source) -> Source:
    """The owner's texts with every credential masked (one line says which flag held what, masked), so that no
    token reaches the run file, the page or api/v1."""
    masked: dict[str, Any] = {}
    for name in ("title", "source", "label", "image", "vllm_version", "command"):
        text = getattr(source, name)
        if text:
            masked[name], found = mask_text(text)
            if found:
                what = ", ".join(dict.fromkeys(f"{s.kind}: {s.masked}" for s in found))
                flag = "--" + name.replace("_", "-")
                print(f"masked {len(found)} secret(s) in {flag} before writing ({what})")
    return replace(source, **masked)


def check_kept_files(parts: list[ImportedLevels]) -> None:
    """Every file to be kept beside a run (read or not) holds no credential: the first is a one-line error."""
    for part in parts:
        for path in part.files:
            regular_file(path, part.relative_to)
            errors = file_secret_errors(path, regular=True)
            if errors:
                raise errors[0]


def check_run_text(path: Path, run: BenchmarkRun) -> str:
    """The run file's text, refused (one line) if any string of it still holds a credential."""
    data = run.model_dump(mode="json", exclude_none=True)
    text = json.dumps(data, indent=2) + "\n"
    check_json(path, text, data)
    return text


def read_sources(paths: list[Path]) -> list[ImportedLevels]:
    """Every file or folder, read by the reader of its format."""
    out: list[ImportedLevels] = []
    for path in paths:
        try:
            out += _read(path)
        except ValidationError as exc:  # a figure out of its range (a negative latency, a share above 1)
            raise from_validation(path, exc) from None
    return out


def _read(path: Path) -> list[ImportedLevels]:
    if path.is_dir():
        if not vllm_bench.looks_like_sweep(path):
            raise CatalogueError(
                path, "a folder, but not a `vllm bench sweep serve` / `serve_workload` output (no run=N.json in it)"
            )
        return _named(vllm_bench.sweep_kind(path), vllm_bench.read_sweep(path))
    data = read_json(path)
    if llama_benchy.looks_like(data):
        return _named(llama_benchy.TOOL, llama_benchy.read_report(path))
    if guidellm.looks_like(data):
        return _named(guidellm.TOOL, [guidellm.read_report(path, data)])
    if aiperf.looks_like(data):
        return _named(aiperf.TOOL, [aiperf.read_export(path, data)])
    if vllm_bench.looks_like(data):
        return _named(vllm_bench.TOOL, [vllm_bench.read_result(path)])
    raise CatalogueError(path, f"unknown format: not {KNOWN}")


def _named(format_name: str, parts: list[ImportedLevels]) -> list[ImportedLevels]:
    for part in parts:
        part.format_name = format_name
    return parts


def _kept_name(path: Path, part: ImportedLevels, taken: set[str]) -> str:
    name = (
        f"{part.relative_to.name}/{path.relative_to(part.relative_to)}" if part.relative_to is not None else path.name
    )
    base, n = name, 1
    while name in taken:
        n += 1
        name = f"{n}-{base}"
    taken.add(name)
    return name


def build_run(group: Group, source: Source, recorded: dt.datetime) -> tuple[BenchmarkRun, dict]:
    """A run file for one workload, and the raw files to copy (kept name -> path)."""
    stamp = recorded.strftime(RUN_STAMP_FORMAT)
    kept: dict[str, Path] = {}
    levels, rates = [], []
    for part in group.parts:
        names = {path: _kept_name(path, part, set(kept)) for path in part.files}
        kept.update({name: path for path, name in names.items()})
        by_name = {
            (path.relative_to(part.relative_to) if part.relative_to else Path(path.name)): n
            for path, n in names.items()
        }

        def renamed(level, by_name=by_name):
            return level.model_copy(update={"raw": [f"{stamp}/{by_name.get(Path(r), r)}" for r in level.raw]})

        levels += [renamed(level) for level in part.levels]
        rates += [renamed(level) for level in part.rates]
    if group.slo is not None:
        rates = [rate.model_copy(update={"verdict": judge(rate, group.slo).why}) for rate in rates]
    tool = " ".join(x for x in (group.workload.tool, group.workload.tool_version) if x)
    dates = sorted(p.date for p in group.parts if p.date)
    files = ", ".join(
        dict.fromkeys(f"{p.relative_to.name}/" if p.relative_to else p.files[0].name for p in group.parts)
    )
    provenance = ImportedProvenance(
        method="imported",
        source_title=source.title or f"{tool} results ({files})",
        source=source.source or f"files {files}, kept in {RUNS_DIR}/{stamp}/",
        source_date=source.date or (dates[0] if dates else None),
        tool=tool,
        image=source.image,
        vllm_version=source.vllm_version,
        imported_with=" + ".join(FORMATS[f] for f in sorted({p.format_name for p in group.parts})),
        raw_files=[f"{stamp}/{name}" for name in kept],
        command=source.command,
        definitions=_definitions(group.parts),
    )
    notes = [note for part in group.parts for note in part.notes] + group.notes
    if not group.workload.known:
        notes.append(
            "The files do not record the prompt source and lengths, and the import did not state them "
            "(--dataset, --input-len, --output-len): these figures are compared with no other run."
        )
    run = BenchmarkRun(
        recorded_at=recorded,
        label=source.label,
        provenance=provenance,
        workload=group.workload,
        levels=sorted(levels, key=lambda lv: lv.concurrency),
        rates=sorted(rates, key=_rate_order),
        slo=group.slo,
        notes=list(dict.fromkeys(notes)),
    )
    return run, kept


def _definitions(parts: list[ImportedLevels]) -> str:
    """Each file's definitions once (a concurrency file's words are part of a rate file's: the longer is kept)."""
    texts = list(dict.fromkeys(p.definitions for p in parts))
    return " ".join(t for t in texts if not any(t != other and t in other for other in texts))


def _rate_order(level) -> tuple:
    """Ascending offered rate; 'as fast as possible' last."""
    return (level.offered_rps is None, level.offered_rps or 0.0, level.max_concurrency or 0, level.label or "")


def describe_levels(run: BenchmarkRun) -> str:
    """'c=1, 2; rates 4 req/s (poisson), as fast as possible' for the line `catalogue import` prints."""
    parts = []
    if run.levels:
        parts.append("c=" + ", ".join(str(lv.concurrency) for lv in run.levels))
    if run.rates:
        parts.append("rates " + ", ".join(describe_rate(lv) for lv in run.rates))
    return "; ".join(parts)


def write_run(runs_dir: Path, run: BenchmarkRun, kept: dict[str, Path]) -> Path:
    """Raw files into runs/<stamp>/ (staged, then renamed), then runs/<stamp>.json atomically."""
    target = runs_dir / run.stamp
    path = runs_dir / f"{run.stamp}.json"
    if target.exists() or path.exists():
        raise CatalogueError(path, "a run with this stamp exists already")
    text = check_run_text(path, run)
    runs_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=runs_dir, prefix=f".{run.stamp}."))
    try:
        for name, source in kept.items():
            dest = staging / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(kept_bytes(source))
        os.replace(staging, target)
        write_text(path, text)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if not path.exists():
            shutil.rmtree(target, ignore_errors=True)
        raise
    return path


def kept_bytes(path: Path) -> bytes:
    """A file to keep, read as a regular file without following a link (never copied through one)."""
    data = read_regular(path, MAX_IMPORT_BYTES)
    if len(data) > MAX_IMPORT_BYTES:
        raise CatalogueError(path, f"larger than {MAX_IMPORT_BYTES // 1024} KB: refused unread")
    return data


def _plain(path: Path) -> bool:
    """A regular file that is no link (a link or FIFO among a recipe's raw files is never read)."""
    return not path.is_symlink() and path.is_file()


def check_not_imported(parts: list[ImportedLevels], runs_dir: Path) -> None:
    """A file already kept beside a run (same bytes) was imported before: importing it again would double it."""
    if not runs_dir.is_dir():
        return
    kept = {hashlib.sha256(p.read_bytes()).digest(): p for p in runs_dir.glob("*/**/*") if _plain(p)}
    for part in parts:
        for path in part.files:
            twin = kept.get(hashlib.sha256(kept_bytes(path)).digest())
            if twin is not None:
                raise CatalogueError(path, f"already imported: the same file is kept as {twin.relative_to(runs_dir)}")


def _taken(runs_dir: Path, when: dt.datetime) -> bool:
    stamp = when.strftime(RUN_STAMP_FORMAT)
    return (runs_dir / f"{stamp}.json").exists() or (runs_dir / stamp).exists()


def run_import(
    roots: list[Path],
    recipe_id: str,
    paths: list[Path],
    stated: Stated,
    source: Source,
    now: dt.datetime | None = None,
) -> int:
    """Import the files as one run per workload; nothing is written when any file is bad."""
    folder = recipe_folders(roots).get(recipe_id)
    if folder is None:
        raise CatalogueError(recipe_id, f"no recipe with this id under {', '.join(map(str, roots))}")
    load_entry(folder)
    agent = agent_exports(paths)
    if agent is not None:
        run, kept = agent_run(folder, paths, agent, masked_source(source), now)
        path = write_run(folder / RUNS_DIR, run, kept)
        parse_run(path)
        sessions = ", ".join(str(lv.sessions) for lv in run.agents.levels) if run.agents else ""
        print(f"wrote {path} (agent sessions {sessions}; {run.workload.describe() if run.workload else ''})")
        return 0
    parts = read_sources(paths)
    check_kept_files(parts)
    runs_dir = folder / RUNS_DIR
    check_not_imported(parts, runs_dir)
    source = masked_source(source)
    groups = group_parts(parts, stated)
    start = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    while any(_taken(runs_dir, start + dt.timedelta(seconds=i)) for i in range(len(groups))):
        start += dt.timedelta(seconds=1)  # an import in the same second: the next free stamps
    built = [build_run(group, source, start + dt.timedelta(seconds=i)) for i, group in enumerate(groups)]
    for run, _ in built:
        check_run_text(runs_dir / f"{run.stamp}.json", run)
    for run, kept in built:
        path = write_run(runs_dir, run, kept)
        parse_run(path)
        print(f"wrote {path} ({describe_levels(run)}; {run.workload.describe() if run.workload else ''})")
    print(f"imported {len(built)} run(s) into {folder / RECIPE_FILE}'s folder")
    return 0
