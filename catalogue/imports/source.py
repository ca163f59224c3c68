"""What a benchmark file gives the catalogue, whatever tool wrote it: levels, lengths, dates, the files."""

from __future__ import annotations

import datetime as dt
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from catalogue.models.benchmark import LevelResult, RateLevel
from catalogue.models.bounded import MAX_IMPORT_BYTES, load_json, read_bounded
from catalogue.models.errors import CatalogueError
from catalogue.policy.file_secrets import check_json


def file_date(path: Path, text: str, where: str) -> dt.date:
    """The calendar day 'YYYY-MM-DD' a file records, or one line naming the file and field (no 2026-13-99)."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise CatalogueError(path, f"not a calendar date (YYYY-MM-DD): {text[:40]!r}", where) from None


@dataclass
class ImportedLevels:
    """Levels read from one tool's output, before they become a run file."""

    tool: str
    """The tool without its version, e.g. 'llama-benchy' (the workload key's tool)."""
    tool_version: str | None
    """Its version when the file records it."""
    model: str
    """Model name the tool sent requests for."""
    date: dt.date | None
    """Day the tool ran, when the file records it (read through file_date: a real calendar day)."""
    input_tokens: float | None
    """Mean prompt tokens per request the tool counted (or configured, for tools that fix it)."""
    output_tokens: float | None
    """Mean output tokens per request."""
    prompts: int | str | None
    """Requests per level: one number, or the tool's rule (e.g. GuideLLM's '4 s of'); None: not one."""
    levels: list[LevelResult]
    """The closed-loop figures (concurrency levels)."""
    files: list[Path]
    """Files these figures come from (copied beside the run)."""
    definitions: str
    """How the tool defines its figures, in words (goes into the provenance)."""
    exact_lengths: bool = False
    """True when the tool fixes the lengths itself (llama-benchy's --pp/--tg), so they are the workload's."""
    dataset: str | None = None
    """Prompt source when the tool fixes it."""
    context_depth: int = 0
    """Tokens of context before each prompt."""
    repetitions: int | None = None
    """Times each level ran, when the tool repeats levels."""
    relative_to: Path | None = None
    """Folder the files' kept names are relative to (a sweep folder), else their bare names."""
    notes: list[str] = field(default_factory=list)
    """Facts about the import that fit no figure."""
    rates: list[RateLevel] = field(default_factory=list)
    """The open-loop figures (request-rate levels)."""
    slo_limits: dict[str, float] | None = None
    """The goodput limits the file records, by vLLM `--goodput` key (ttft, tpot, e2el) in ms."""
    goodput_without_limits: bool = False
    """The file has goodput figures but not the limits they were counted against (vLLM's JSON)."""
    format_name: str = ""
    """Which reader took the file (set by `catalogue import`): a key of its FORMATS."""


def read_json(path: Path) -> Any:
    """A JSON file, or a one-line error naming it (a credential in any of its strings is one, masked); only a
    regular file, never through a link (an imported folder is a stranger's: a link in it may point at any file)."""
    text = read_bounded(path, MAX_IMPORT_BYTES, regular=True)
    data = load_json(text, path, syntax="not valid JSON")
    check_json(path, text, data)
    return data


def regular_file(path: Path, folder: Path | None = None) -> Path:
    """`path` when it is a regular file and neither it nor any folder between `folder` and it is a symbolic link
    (lstat: nothing followed, nothing opened); else one line naming it. Every file an import keeps passes this."""
    try:
        mode = path.lstat().st_mode
    except OSError as exc:
        raise CatalogueError(path, f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        raise CatalogueError(path, "a symbolic link: an import reads and keeps only regular files, never a link")
    if not stat.S_ISREG(mode):
        raise CatalogueError(path, "not a regular file (a FIFO, device or socket): refused unread")
    if folder is not None:
        for parent in path.parents:
            if parent == folder or folder not in parent.parents:
                break
            if parent.is_symlink():
                raise CatalogueError(parent, "a symbolic link: an import reads only the folder it is given, no link")
    return path


def require(path: Path, data: dict[str, Any], name: str, kinds: tuple[type, ...], prefix: str = "") -> Any:
    """`data[name]`, which must exist and be one of `kinds` (bool is never a number)."""
    if name not in data or data[name] is None:
        raise CatalogueError(path, "required field is missing", prefix + name)
    value = data[name]
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise CatalogueError(path, f"expected {' or '.join(k.__name__ for k in kinds)}, got {value!r}", prefix + name)
    return value


def is_number(value: object) -> TypeGuard[int | float]:
    """An int or a float, never a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)
