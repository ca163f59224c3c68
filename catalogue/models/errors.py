"""One error type for every bad input: a file, a field path, an optional line, a message."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError


@dataclass
class CatalogueError(Exception):
    """A bad input, reported as one line: `file:line: field: message`."""

    path: Path | str
    message: str
    field: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else f"{self.path}"
        what = f"{self.field}: " if self.field else ""
        return f"{where}: {what}{self.message}"

    def __reduce__(self) -> tuple:
        """Pickle by fields (the error crosses from a forked worker to the parent)."""
        return (type(self), (self.path, self.message, self.field, self.line))


def field_path(loc: tuple[Any, ...]) -> str:
    """Render a pydantic location as `a.b[0].c`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def yaml_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the YAML node at `loc`, or of its nearest existing parent."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if k.value == str(part)), None)
            if child is not None:
                key = next(k for k, v in node.value if v is child)
                line = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is not None:
            node = child
    return line


def from_validation(path: Path, exc: ValidationError, text: str | None = None) -> CatalogueError:
    """The first pydantic error as a CatalogueError (with the YAML line when the text is YAML)."""
    first = exc.errors()[0]
    loc = tuple(first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    elif first["type"] == "missing":
        message = "required field is missing"
    if (
        "input" in first
        and first["type"] not in ("missing", "extra_forbidden")
        and not isinstance(first["input"], (dict, list))
    ):
        message += f" (got {first['input']!r})"
    line = yaml_line(text, loc) if text is not None else None
    return CatalogueError(path, message, field_path(loc) or None, line)
