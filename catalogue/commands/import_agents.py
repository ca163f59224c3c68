"""`catalogue import` of an agent run: AIPerf artifact folders (one per level of concurrent sessions) that replayed a
mooncake trace, with the trace itself (catalogue.imports.aiperf_agents). One run file whose `agents` part holds the
levels, under the trace's workload key; the AIPerf files and the trace are kept beside it."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any, Protocol

from catalogue.imports.aiperf_agents import SUMMARY, is_agent_export, read_agent_exports
from catalogue.imports.source import read_json, regular_file
from catalogue.models.benchmark import RUN_STAMP_FORMAT, BenchmarkRun, ImportedProvenance
from catalogue.models.bounded import MAX_IMPORT_BYTES, read_regular
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import RUNS_DIR
from catalogue.policy.file_secrets import file_secret_errors
from catalogue.stats.agents import AgentRun


class Source(Protocol):
    """What the owner stated about the files (catalogue.commands.import_runs.Source), read only."""

    @property
    def title(self) -> str | None: ...
    @property
    def source(self) -> str | None: ...
    @property
    def date(self) -> dt.date | None: ...
    @property
    def label(self) -> str | None: ...
    @property
    def image(self) -> str | None: ...
    @property
    def vllm_version(self) -> str | None: ...
    @property
    def command(self) -> str | None: ...


DEFINITIONS = (
    "As AIPerf records each turn (profile_export.jsonl): TTFT = time_to_first_token, first turns (turn_index 0) "
    "apart from later ones; TPOT = (request_latency − TTFT) ÷ (the server's completion tokens − 1); tok/s = the "
    "server's token counts ÷ first send to last answer. A level's sessions = the phase's --concurrency."
)


def agent_exports(paths: list[Path]) -> list[tuple[Path, dict[str, Any]]] | None:
    """Every AIPerf summary export under the paths when all of them replayed a mooncake trace; None otherwise."""
    found = []
    for path in paths:
        summaries = sorted(path.rglob(SUMMARY)) if path.is_dir() else [path] if path.name == SUMMARY else []
        if not summaries:
            return None
        found += [(s, read_json(s)) for s in summaries]
    return found if found and all(is_agent_export(data) for _, data in found) else None


def agent_run(
    folder: Path, paths: list[Path], exports: list[tuple[Path, dict[str, Any]]], source: Source, now: dt.datetime | None
) -> tuple[BenchmarkRun, dict[str, Path]]:
    """The agent run file and the files to keep beside it (kept name -> path); one line on any bad file."""
    folders = [p if p.is_dir() else p.parent for p in paths]
    found = read_agent_exports(folders, exports)
    runs_dir = folder / RUNS_DIR
    check_files(found.files, runs_dir)
    recorded = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    stamp = recorded.strftime(RUN_STAMP_FORMAT)
    kept = {f"{p.parent.name}/{p.name}" if p != found.trace else p.name: p for p in found.files}
    levels = [
        lv.model_copy(update={"raw": [f"{stamp}/{name}" for name, p in kept.items() if p.parent == src.parent]})
        for lv, (src, _) in zip(found.levels, sorted(exports, key=lambda e: _sessions(e[1])), strict=True)
    ]
    tool = " ".join(x for x in (found.workload.tool, found.workload.tool_version) if x)
    run = BenchmarkRun(
        recorded_at=recorded,
        label=source.label,
        provenance=ImportedProvenance(
            method="imported", source_title=source.title or f"{tool} agent sessions ({found.trace.name})",
            source=source.source or f"files kept in {RUNS_DIR}/{stamp}/", source_date=source.date, tool=tool,
            image=source.image, vllm_version=source.vllm_version, imported_with="AIPerf agent exports (mooncake trace)",
            raw_files=[f"{stamp}/{name}" for name in kept], command=source.command, definitions=DEFINITIONS,
        ),
        workload=found.workload,
        agents=AgentRun(trace_file=f"{stamp}/{found.trace.name}", levels=levels),
        notes=["Imported: vLLM's prefix-cache counters were not read around these levels, so no hit rate is known."],
    )  # fmt: skip
    return run, kept


def check_files(files: list[Path], runs_dir: Path) -> None:
    """No kept file holds a credential, and none was imported before (the same bytes kept beside a run)."""
    for path in files:
        regular_file(path)
        errors = file_secret_errors(path, regular=True)
        if errors:
            raise errors[0]
    if runs_dir.is_dir():
        kept = {
            hashlib.sha256(p.read_bytes()).digest(): p
            for p in runs_dir.glob("*/**/*")
            if not p.is_symlink() and p.is_file()
        }
        for path in files:
            twin = kept.get(hashlib.sha256(read_regular(path, MAX_IMPORT_BYTES)).digest())
            if twin is not None:
                raise CatalogueError(path, f"already imported: the same file is kept as {twin.relative_to(runs_dir)}")


def _sessions(data: dict[str, Any]) -> int:
    phases = data["input_config"]["phases"]
    return next(p["concurrency"] for p in phases if isinstance(p, dict) and p.get("type") == "concurrency")
