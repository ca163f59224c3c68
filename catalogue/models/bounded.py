"""The limits every reader of untrusted text holds to, in one place: recipes, platform and hosts files and sparkrun
recipes (YAML), run files, imported and raw result files (JSON), and sparkrun's command template.

A stranger's file must fail in one line naming it, within a second and in well under 200 MB, however it was made:
a YAML alias bomb (each alias repeats the anchored node: five levels of ten aliases of a 20 KB string make 2 GB
from 23 KB), a
JSON document nested thousands deep (the parser and every recursive reader after it run out of stack), or a
template whose values name themselves. So the text is measured before it is parsed: its size, its nesting depth,
and for YAML the node count with every alias expanded (counted over libyaml's event stream, which keeps no tree and
recurses nowhere); then parsing cannot grow past what was counted."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from catalogue.models.errors import CatalogueError

MAX_YAML_BYTES = 1 << 20
"""A recipe, platform profile, hosts file or sparkrun recipe: the largest committed one is under 20 KB."""
MAX_RUN_BYTES = 8 << 20
"""A run file: the largest committed one (a capacity search's 21 probes) is 92 KB."""
MAX_IMPORT_BYTES = 64 << 20
"""An imported or raw result file: a GuideLLM report keeps every request, a few MB per thousand."""
MAX_DEPTH = 64
"""Nesting of mappings and lists in any of them: a run file nests 7 deep, a GuideLLM report 9."""
MAX_YAML_NODES = 200_000
"""Scalars and collections of a YAML file with every alias expanded (a recipe has about 300)."""
MAX_RUN_WHOLE_DIGITS = 15
"""Digits of a whole number in a run file (counts and ids: far below 10^15). Python reads any number of digits:
`completed: 10**400` loaded, then overflowed a float in the regression check."""
MAX_YAML_CHARS = 8 << 20
"""Characters of its scalars with every alias expanded (a 20 KB string under five levels of ten aliases: 2 GB)."""
MAX_WHOLE_DIGITS = 40
"""Digits of a whole number in an imported file (timestamps in ns have 19); far below Python's own 4,300."""
MAX_TEMPLATE_CHARS = 64 << 10
"""A sparkrun command with its `{name}` fields filled in (a real one is under 2 KB)."""

_WHOLE = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F_]+|0[oObB][0-7_]+|[0-9][0-9_:]*)")
"""A YAML scalar that a YAML 1.1 or 1.2 reader may make a whole number of (decimal, hex, octal, binary, base 60)."""
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")


def read_bounded(path: Path, limit: int, regular: bool = False) -> str:
    """The file's UTF-8 text, refused in one line when it is longer than `limit` bytes (nothing more is read);
    `regular`: only a regular file, never through a link (read_regular)."""
    if regular:
        data = read_regular(path, limit)
    else:
        try:
            with path.open("rb") as f:
                data = f.read(limit + 1)
        except OSError as exc:
            raise CatalogueError(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise CatalogueError(path, f"larger than {limit // 1024} KB: refused unread")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogueError(path, f"cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_regular(path: Path, limit: int) -> bytes:
    """At most `limit` + 1 bytes of a regular file opened without following a link (O_NOFOLLOW) and without waiting
    on a FIFO (O_NONBLOCK); a link, FIFO, device or socket is one line naming the file, its bytes never read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CatalogueError(path, "a symbolic link: only regular files are read, never a link") from None
        raise CatalogueError(path, f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise CatalogueError(path, "not a regular file (a FIFO, device or socket): refused unread")
        return f.read(limit + 1)


def check_size(text: str, path: Path | str, limit: int) -> None:
    """Refuse text longer than `limit` bytes (as UTF-8; a character is at most four)."""
    if len(text) > limit or (len(text) * 4 > limit and len(text.encode("utf-8")) > limit):
        raise CatalogueError(path, f"larger than {limit // 1024} KB: refused unread")


def bracket_depth_exceeds(text: str, limit: int) -> bool:
    """Whether JSON (or YAML flow) text nests `[` and `{` deeper than `limit`: strings dropped, then the innermost
    empty pairs removed `limit` times over (each pass is one regular-expression scan, no recursion)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        if not brackets:
            return False
        brackets, removed = _INNERMOST.subn("", brackets)
        if not removed:
            return False  # unbalanced: the parser reports where
    return bool(brackets)


def nesting_error(text: str, path: Path | str) -> CatalogueError | None:
    """The one-line refusal of JSON text nested deeper than the limit, else None."""
    if bracket_depth_exceeds(text, MAX_DEPTH):
        return CatalogueError(path, f"nested more than {MAX_DEPTH} deep: refused unparsed")
    return None


def json_line(line: str, path: Path | str, number: int) -> Any:
    """One line of an untrusted JSON-lines file: one line naming the file and line when it nests deeper than the
    limit (refused before parsing: Python's parser recurses), else json.loads' value (ValueError: not JSON)."""
    too_deep = CatalogueError(path, f"nested more than {MAX_DEPTH} deep: refused unparsed", line=number)
    if bracket_depth_exceeds(line, MAX_DEPTH):
        raise too_deep
    try:
        return json.loads(line)
    except RecursionError:  # unbalanced brackets, which the count above leaves to the parser
        raise too_deep from None


class JsonTooDeep(ValueError):
    """JSON text nested deeper than MAX_DEPTH (a ValueError, so callers that treat bad JSON as a refusal hold)."""


def json_value(text: str, limit: int = MAX_YAML_BYTES) -> Any:
    """JSON carried inside a string (a flag's value, a pasted config): json.loads' value when the text is at most
    `limit` bytes and nests at most MAX_DEPTH deep; else JsonTooDeep (a ValueError) saying which limit, the text
    unparsed (Python's parser recurses: a few KB of brackets is a RecursionError)."""
    if len(text) > limit:
        raise JsonTooDeep(f"longer than {limit // 1024} KB: refused unparsed")
    if bracket_depth_exceeds(text, MAX_DEPTH):
        raise JsonTooDeep(f"nested more than {MAX_DEPTH} deep: refused unparsed")
    try:
        return json.loads(text)
    except RecursionError:  # unbalanced brackets, which the count above leaves to the parser
        raise JsonTooDeep(f"nested more than {MAX_DEPTH} deep: refused unparsed") from None


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def load_json(
    text: str, path: Path | str, *, whole_digits: int = MAX_WHOLE_DIGITS, syntax: str = "JSON syntax error"
) -> Any:
    """Parse untrusted JSON text within the limits: nesting, whole-number digits, no NaN or Infinity. A syntax
    error names its line (`syntax`: its words); every refusal is a one-line CatalogueError."""

    def whole(digits: str) -> int:
        if len(digits.lstrip("-")) > whole_digits:
            line = text.count("\n", 0, max(text.find(digits), 0)) + 1
            raise CatalogueError(
                path, f"a whole number of {len(digits)} digits ({digits[:12]}…): at most {whole_digits}", line=line
            )
        return int(digits)

    too_deep = nesting_error(text, path)
    if too_deep is not None:
        raise too_deep
    try:
        return json.loads(text, parse_int=whole, parse_constant=_not_a_number)
    except json.JSONDecodeError as exc:
        raise CatalogueError(path, f"{syntax}: {exc.msg}", line=exc.lineno) from None
    except RecursionError:
        raise CatalogueError(path, f"nested more than {MAX_DEPTH} deep: refused unparsed") from None
    except ValueError as exc:
        raise CatalogueError(path, f"not valid JSON: {exc}") from None


def check_yaml(text: str, path: Path | str, *, pyyaml_reads: bool = False) -> None:
    """Refuse YAML text that is too large, nests too deep or expands (aliases) to too many nodes, before a parser
    builds it. Text libyaml cannot read is left to the reader's own error: PyYAML's (`pyyaml_reads`) fails alike;
    the YAML 1.2 reader's only once its flow nesting and the absence of anchors show it cannot grow."""
    check_size(text, path, MAX_YAML_BYTES)
    try:
        _check_events(yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), path)
    except yaml.YAMLError:
        if pyyaml_reads:
            return
        if "&" in text:
            raise CatalogueError(path, "YAML that libyaml cannot read and with anchors: refused unparsed") from None
        if bracket_depth_exceeds(text, MAX_DEPTH):
            raise CatalogueError(path, f"nested more than {MAX_DEPTH} deep: refused unparsed") from None


_STARTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_ENDS = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _check_events(events: Any, path: Path | str) -> None:
    """Count values and scalar characters with aliases expanded (an anchor's subtree counted again per alias), and
    depth, over the events (dispatched on their exact class: a recipe is some 400 events, read on every build).

    The open collection's counts are kept in locals, its parents' on a stack: every event is counted and the limits
    are checked after each, as one list per count did at twice the cost."""
    nodes = chars = 0
    parents: list[tuple[int, int, str | None]] = []
    """(nodes, chars, anchor) of each enclosing collection, innermost last."""
    sizes: dict[str, tuple[int, int]] = {}
    scalar, alias = yaml.ScalarEvent, yaml.AliasEvent
    for event in events:
        kind = type(event)
        if kind is scalar:
            value = event.value
            if len(value) > MAX_WHOLE_DIGITS:
                _check_whole(event, path)
            nodes += 1
            chars += len(value)
            if event.anchor is not None:
                sizes[event.anchor] = (1, len(value))
        elif kind in _STARTS:
            parents.append((nodes, chars, event.anchor))
            nodes = chars = 0
            if len(parents) > MAX_DEPTH:
                raise CatalogueError(path, f"nested more than {MAX_DEPTH} deep: refused unparsed", line=_line(event))
            continue
        elif kind in _ENDS:
            inner_nodes, inner_chars = nodes + 1, chars
            nodes, chars, anchor = parents.pop()
            nodes += inner_nodes
            chars += inner_chars
            if anchor is not None:
                sizes[anchor] = (inner_nodes, inner_chars)
        elif kind is alias:
            size = sizes.get(event.anchor or "", (1, 0))
            nodes += size[0]
            chars += size[1]
        else:
            continue
        if nodes > MAX_YAML_NODES or chars > MAX_YAML_CHARS:
            raise CatalogueError(
                path,
                f"more than {MAX_YAML_NODES:,} values or {MAX_YAML_CHARS >> 20} MB of text once its aliases are "
                "expanded: refused unparsed",
                line=_line(event),
            )


def _check_whole(event: Any, path: Path | str) -> None:
    """Refuse a plain (or `!!int`) scalar that reads as a whole number of more than MAX_WHOLE_DIGITS digits: Python
    makes an int of any length, then cannot print one past 4,300 digits (a traceback wherever it is shown)."""
    value = event.value
    if len(value) <= MAX_WHOLE_DIGITS or not _WHOLE.fullmatch(value.strip()):
        return  # no more digits than characters (_check_events asks only of longer ones); prose fails the pattern
    plain = event.implicit[0] or (event.tag or "").endswith(":int")
    digits = sum(c.isalnum() for c in value)
    if plain and digits > MAX_WHOLE_DIGITS:
        shown = event.value.strip()[:12]
        raise CatalogueError(
            path, f"a whole number of {digits} digits ({shown}…): at most {MAX_WHOLE_DIGITS}", line=_line(event)
        )


def _line(event: Any) -> int | None:
    mark = getattr(event, "start_mark", None)
    return mark.line + 1 if mark is not None else None
