"""Credentials in untrusted files (run files, imported reports, raw results) and in text the owner passes to
`catalogue import`: every string goes through the secret scanner; an error names the file, the JSON path and
the line, and shows the value masked, never whole."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from catalogue.models.bounded import MAX_IMPORT_BYTES, nesting_error, read_bounded
from catalogue.models.errors import CatalogueError, field_path
from catalogue.policy.secret_scan import (
    Secret,
    is_secret_name,
    keyword_hits,
    plugin_hits,
    redact,
    scan_text,
    scan_texts,
)

HOW = "the catalogue never keeps a credential: remove it from the file"
MODEL_TEXT_KEYS = frozenset({"prompt", "prompts", "output", "outputs", "generated_text", "generated_texts"})
"""Fields that hold what a benchmark sent to the model or what the model wrote (GuideLLM's per-request `prompt` and
`output`, vLLM's `--save-detailed` `generated_texts`): prose, searched for credential formats (an `hf_` token, a
cloud key), not for `name: value` pairs, which a random-weight model writes by chance."""


def json_strings(data: Any, loc: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string of parsed JSON with its location; a mapping's string value is given as `key: value`, so a
    credential is also found by the name it is stored under (`HF_TOKEN: ...`)."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*loc, str(key)), str(key)
            if isinstance(value, str) and is_secret_name(str(key)):
                yield (*loc, str(key)), f"{key}: {value}"
            yield from json_strings(value, (*loc, str(key)))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from json_strings(value, (*loc, i))
        for flag, value in pairwise(data):  # an argv: `--api-key` and its value are two words
            if isinstance(flag, str) and flag.startswith("-") and isinstance(value, str):
                yield loc, f"{flag} {value}"
    elif isinstance(data, str):
        yield loc, data


MAX_REPORTED = 20
"""Credentials reported per file: each costs a search of the file's text for its line, so a file of thousands of
distinct ones (a stranger's, 8 MB) would take hours; the first twenty say enough to remove them all."""


def json_secrets(data: Any) -> list[tuple[tuple[str | int, ...], Secret]]:
    """Each credential in the strings of parsed JSON (the first found in a string), once, with the location of
    the first string that holds it; at most MAX_REPORTED."""
    strings = list(json_strings(data))
    generated = (any(part in MODEL_TEXT_KEYS for part in loc if isinstance(part, str)) for loc, _ in strings)
    found = scan_texts((text for _, text in strings), generated=generated)
    out: list[tuple[tuple[str | int, ...], Secret]] = []
    seen: set[str] = set()
    for (loc, _), hits in zip(strings, found):
        if hits and hits[0].value not in seen:
            seen.add(hits[0].value)
            out.append((loc, hits[0]))
            if len(out) == MAX_REPORTED:
                break
    return out


def text_line(text: str, value: str) -> int | None:
    """The 1-based line of a file's text that holds `value` (as written, or JSON-escaped), if any."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    for number, line in enumerate(text.splitlines(), 1):
        if any(form and form in line for form in forms):
            return number
    return None


def secret_error(path: Path | str, secret: Secret, field: str | None, line: int | None) -> CatalogueError:
    """One line naming the file, the field and the line, the value masked."""
    return CatalogueError(path, f"a secret in the file ({secret.kind}: {secret.masked}); {HOW}", field, line)


def json_secret_errors(path: Path | str, text: str, data: Any) -> list[CatalogueError]:
    """An error per string of the parsed JSON `data` (read from `text`) that holds a credential."""
    return [
        secret_error(path, secret, field_path(loc) or None, text_line(text, secret.value))
        for loc, secret in json_secrets(data)
    ]


def check_json(path: Path | str, text: str, data: Any) -> None:
    """Raise the first credential in a parsed JSON file as a one-line error."""
    errors = json_secret_errors(path, text, data)
    if errors:
        raise errors[0]


def file_secret_errors(path: Path, regular: bool = False) -> list[CatalogueError]:
    """An error per credential in a file: each string of a JSON file (or each line of JSON Lines), else each line
    of its text. A file that is not UTF-8 text is an error too (nothing in it could be scanned). `regular`: a
    link or a file that is not regular is the error (read_bounded)."""
    try:
        text = read_bounded(path, MAX_IMPORT_BYTES, regular=regular)
    except CatalogueError as exc:
        return [exc]
    if path.suffix == ".json":
        too_deep = nesting_error(text, path)
        if too_deep is not None:
            return [too_deep]
        try:
            return json_secret_errors(path, text, json.loads(text))
        except (ValueError, RecursionError):
            pass  # scanned as text below; its reader reports the syntax
    if path.suffix == ".jsonl":
        return _json_lines_errors(path, text)
    return [secret_error(path, secret, None, secret.line) for secret in scan_text(text, filename=path.name)]


def _json_lines_errors(path: Path, text: str) -> list[CatalogueError]:
    """Each record of a JSON Lines file scanned as JSON (escapes decoded); a line that is no JSON, as text."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        too_deep = nesting_error(line, path)
        if too_deep is not None:
            return [replace(too_deep, line=number)]
        try:
            found = json_secret_errors(path, line, json.loads(line)) if line.strip() else []
        except (ValueError, RecursionError):
            found = [secret_error(path, secret, None, None) for secret in scan_text(line, filename=path.name)]
        out += [replace(error, line=number) for error in found]
    return out


def mask_text(text: str) -> tuple[str, list[Secret]]:
    """The text with every credential found masked (all of them, not one per line), and each value masked once."""
    found: list[Secret] = []
    for _ in range(8):  # masking one value can expose another the first pass read as part of it
        hits = [hit for line in text.splitlines() for hit in (*keyword_hits(line), *plugin_hits(line))]
        if not hits:
            break
        for hit in hits:
            if all(hit.value != seen.value for seen in found):
                found.append(hit)
        text = redact(text, [hit.value for hit in hits])
    return text, found
