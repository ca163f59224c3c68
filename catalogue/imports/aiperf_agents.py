"""An AIPerf run that replayed a mooncake trace as multi-turn sessions (an agent run, AIPerf's own or agentx-harness's
fork of it): one artifact folder per level, each with `profile_export_aiperf.json` (its `input_config` names the
dataset format, block size and the phase's concurrency) and `profile_export.jsonl` (every turn). The replayed trace
must lie in one of the folders given, under the file name the export recorded: its sha256 and its shape (sessions,
turns, block size) make the workload key, so an import compares only with runs of the same trace file.

vLLM's /metrics were not read around an imported level, so its hit rate is not known (null)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from catalogue.imports.schema import one_line
from catalogue.imports.source import regular_file
from catalogue.models import agent_trace
from catalogue.models.bounded import MAX_IMPORT_BYTES, json_line, read_regular
from catalogue.models.errors import CatalogueError
from catalogue.models.workload import Workload
from catalogue.stats import agent_levels
from catalogue.stats.agents import AgentLevel

SUMMARY, TURNS = "profile_export_aiperf.json", "profile_export.jsonl"


@dataclass(frozen=True)
class AgentImport:
    """The levels of one trace's replay, its workload key, and the files to keep beside the run."""

    levels: list[AgentLevel]
    workload: Workload
    trace: Path
    files: list[Path]


def is_agent_export(data: Any) -> bool:
    """An AIPerf summary export whose dataset is a mooncake trace replayed at a concurrency (sessions)."""
    config = data.get("input_config") if isinstance(data, dict) else None
    if not isinstance(config, dict):
        return False
    datasets, phases = config.get("datasets"), config.get("phases")
    return (
        isinstance(datasets, list)
        and any(isinstance(d, dict) and d.get("format") == "mooncake_trace" for d in datasets)
        and isinstance(phases, list)
        and any(isinstance(p, dict) and p.get("type") == "concurrency" for p in phases)
    )


def _config(path: Path, data: dict[str, Any]) -> tuple[str, int, int]:
    """(trace file name, block size, sessions) from the export's input_config, or one line naming the field."""
    config = data["input_config"]
    dataset = next(d for d in config["datasets"] if isinstance(d, dict) and d.get("format") == "mooncake_trace")
    phase = next(p for p in config["phases"] if isinstance(p, dict) and p.get("type") == "concurrency")
    name, block, sessions = dataset.get("path"), dataset.get("block_size", 512), phase.get("concurrency")
    if not isinstance(name, str) or not name:
        raise CatalogueError(path, "input_config.datasets[].path: the replayed trace is not named")
    if not isinstance(block, int) or isinstance(block, bool) or block < 1:
        raise CatalogueError(path, "input_config.datasets[].block_size: not a positive whole number")
    if not isinstance(sessions, int) or isinstance(sessions, bool) or sessions < 1:
        raise CatalogueError(path, "input_config.phases[].concurrency: not a positive whole number of sessions")
    return Path(name).name, block, sessions


def trace_shape(path: Path, text: str, block: int) -> str:
    """'trace file t.jsonl: 8 sessions, 32 turns, blocks of 64 tokens' from the file's text."""
    sessions: Counter[str] = Counter()
    for number, line in enumerate(text.splitlines(), 1):
        try:
            record = json_line(line, path, number)
        except ValueError:
            raise CatalogueError(path, f"line {number}: not JSON") from None
        if not isinstance(record, dict) or not isinstance(record.get("session_id"), str):
            raise CatalogueError(path, f"line {number}: session_id: missing (not a multi-turn mooncake trace)")
        sessions[record["session_id"]] += 1
    return f"trace file {path.name}: {len(sessions)} sessions, {sum(sessions.values())} turns, {block}-token blocks"


def read_agent_exports(folders: list[Path], exports: list[tuple[Path, dict[str, Any]]]) -> AgentImport:
    """Every level (one summary export each, its turns beside it) of one trace; one line on any bad file."""
    levels, files, names = [], [], set()
    version, block = None, 0
    for path, data in exports:
        name, block, sessions = _config(path, data)
        names.add(name)
        turns = path.parent / TURNS
        if not turns.is_file() and not turns.is_symlink():
            raise CatalogueError(turns, "missing: an agent level needs AIPerf's per-turn export beside its summary")
        regular_file(turns)
        try:  # figures derived from a stranger's turns (tok/s, latencies) are bounded by the models
            levels.append(agent_levels.level(sessions, agent_levels.read_turns(turns), "", "", {}))
        except ValidationError as exc:
            raise one_line(turns, exc) from None
        files += [path, turns]
        version = data.get("aiperf_version") if isinstance(data.get("aiperf_version"), str) else version
    if len(names) != 1:
        raise CatalogueError(exports[0][0], f"input_config: the levels replayed different traces ({sorted(names)})")
    (name,) = names
    trace = next((f / name for f in folders if (f / name).is_file() or (f / name).is_symlink()), None)
    if trace is None:
        raise CatalogueError(exports[0][0], f"the replayed trace {name} is not in the folders given: add it")
    regular_file(trace)
    raw = read_regular(trace, MAX_IMPORT_BYTES)  # as check_files reads it: within the import limit, never a link
    if len(raw) > MAX_IMPORT_BYTES:
        raise CatalogueError(trace, f"larger than {MAX_IMPORT_BYTES // 1024} KB: refused unread")
    shape = trace_shape(trace, raw.decode("utf-8", "replace"), block)
    first = next(iter(agent_levels.read_turns(files[1])), None)
    try:  # the first turn's lengths are a stranger's numbers: the workload model bounds them
        workload = Workload(
            tool="AIPerf",
            tool_version=version,
            dataset="agent sessions (mooncake trace)",
            input_len=first.prompt_tokens if first and first.prompt_tokens else None,
            output_len=first.output_tokens if first and first.output_tokens else None,
            trace=shape,
            trace_sha256=agent_trace.sha256(raw),
        )
    except ValidationError as exc:
        raise one_line(files[1], exc) from None
    ordered = sorted(levels, key=lambda lv: lv.sessions)
    if len({lv.sessions for lv in ordered}) != len(ordered):
        raise CatalogueError(exports[0][0], "input_config.phases[].concurrency: two levels ran the same sessions")
    return AgentImport(ordered, workload, trace, [*files, trace])
