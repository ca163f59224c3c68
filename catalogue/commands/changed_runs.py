"""What `check-changes` reads beside recipes: the run files and raw-result files a pull request adds or changes
(untrusted: secret scan, then the run schema or the file's format), and a `hosts.yaml`, which never belongs in
the repository (it says which docker engines the runner drives). One error per problem, one line each."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path, PurePosixPath

from catalogue.models.bounded import MAX_IMPORT_BYTES, nesting_error, read_bounded
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import RUNS_DIR, parse_run
from catalogue.policy.file_secrets import file_secret_errors

HOSTS_NAMES = ("hosts.yaml", "hosts.yml")
"""The runner's hosts file (runner/hosts/hosts.py): the owner's, in ~/.config/catalogue/, never committed."""


def is_hosts_file(name: str) -> bool:
    """A hosts file, in any folder of the change."""
    return PurePosixPath(name).name.lower() in HOSTS_NAMES


def run_part(name: str) -> tuple[str, str] | None:
    """("run", stamp) for `.../runs/<stamp>.json`, ("raw", stamp) for a file under `.../runs/<stamp>/`."""
    parts = PurePosixPath(name).parts
    if RUNS_DIR not in parts[:-1]:
        return None
    inner = parts[parts.index(RUNS_DIR) + 1 :]
    if len(inner) == 1:
        return ("run", inner[0].removesuffix(".json")) if inner[0].endswith(".json") else ("raw", "")
    return "raw", inner[0]


def format_errors(path: Path) -> list[CatalogueError]:
    """A raw JSON or JSON Lines file that does not parse (the line of the first error)."""
    text = read_bounded(path, MAX_IMPORT_BYTES)
    lines = text.splitlines() if path.suffix == ".jsonl" else [text]
    for number, chunk in enumerate(lines, 1):
        too_deep = nesting_error(chunk, path)
        if too_deep is not None:
            return [replace(too_deep, line=number if path.suffix == ".jsonl" else None)]
        try:
            if chunk.strip():
                json.loads(chunk)
        except json.JSONDecodeError as exc:
            line = number if path.suffix == ".jsonl" else exc.lineno
            what = "JSON Lines" if path.suffix == ".jsonl" else "JSON"
            return [CatalogueError(path, f"not valid {what}: {exc.msg}", None, line)]
        except ValueError as exc:  # a whole number past Python's digit limit
            return [CatalogueError(path, f"not valid JSON: {exc}", None, number if path.suffix == ".jsonl" else None)]
    return []


def raw_errors(path: Path, stamp: str) -> list[CatalogueError]:
    """A raw-result file: no credential in it, it parses as its suffix says, and it belongs to a run file."""
    found = file_secret_errors(path)
    if not found and path.suffix in (".json", ".jsonl"):
        found = format_errors(path)
    parts = path.parts
    runs = Path(*parts[: len(parts) - 1 - parts[-2::-1].index(RUNS_DIR)])
    if not stamp or not (runs / f"{stamp}.json").is_file():
        found.append(CatalogueError(path, f"a result file with no run file for its folder ({RUNS_DIR}/<stamp>.json)"))
    return found


def change_errors(files: list[str], cwd: Path = Path()) -> list[CatalogueError]:
    """Every problem of the changed files that are hosts files, run files or raw-result files (deleted ones are
    gone: nothing to read)."""
    out: list[CatalogueError] = []
    for name in files:
        path = cwd / name
        if is_hosts_file(name) and (path.exists() or path.is_symlink()):
            out.append(
                CatalogueError(
                    name,
                    "a hosts file in the change: it names the docker engines the runner drives, so it is the "
                    "owner's (~/.config/catalogue/hosts.yaml) and never committed",
                )
            )
            continue
        kind = run_part(name)
        if kind is None or not (path.exists() or path.is_symlink()):
            continue
        if path.is_symlink() or not path.is_file():
            out.append(CatalogueError(name, "not a regular file: run and result files are never links"))
        elif kind[0] == "run":
            try:
                parse_run(path)
            except CatalogueError as exc:
                out.append(exc)
        else:
            out += raw_errors(path, kind[1])
    return out
