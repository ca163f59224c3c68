"""Typed shapes of the tools' raw documents, checked before an importer reads a figure: each field an importer reads
has a type and a plausible range, and the first field that breaks its shape is one line naming the file and the
field path (`c1.json: p90_tpot_ms: not a number`). The tools add fields freely, so unread ones are allowed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from catalogue.models.errors import CatalogueError, field_path

MAX_FIGURE = 1e12
"""Largest figure (tok/s, ms, s, req/s) a tool's file may hold: far past any real one, well inside a float."""
MAX_COUNT = 10**9
"""Largest count (requests, tokens, streams) a tool's file may hold."""
MAX_SAMPLES = 10**7
"""Most per-request samples in one list (the file itself is capped in bytes before it is parsed)."""

Figure = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0, le=MAX_FIGURE)]
"""A non-negative finite figure: a rate, a latency, a duration (an int is one too; a bool or a string never)."""
Signed = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_FIGURE, le=MAX_FIGURE)]
"""A finite figure that may be negative (a clock reading)."""
Count = Annotated[int, Field(strict=True, ge=0, le=MAX_COUNT)]
"""A non-negative whole count."""
Tokens = Annotated[int, Field(strict=True, ge=0, le=10**12)]
"""A non-negative whole number of tokens over a whole run (may pass MAX_COUNT on a long benchmark)."""
Positive = Annotated[int, Field(strict=True, ge=1, le=MAX_COUNT)]
"""A whole count of at least one (streams, tokens of a fixed length)."""
Text = Annotated[str, Field(strict=True, max_length=10_000)]
"""A string (never a number or a list)."""

M = TypeVar("M", bound=BaseModel)

_MESSAGES = {
    "missing": "required field is missing",
    "float_type": "not a number",
    "int_type": "not a whole number",
    "string_type": "not a string",
    "list_type": "not a list",
    "dict_type": "not an object",
    "model_type": "not an object",
    "model_attributes_type": "not an object",
    "finite_number": "not a finite number",
    "bool_type": "not true or false",
}


class Raw(BaseModel):
    """Base of a tool document's shape: the fields the importer reads are typed, the tool's others pass."""

    model_config = ConfigDict(extra="allow", strict=True)


def _message(error: ErrorDetails) -> str:
    """One line for one pydantic error, with the offending value cut short."""
    kind = error["type"]
    if kind == "missing":
        return _MESSAGES[kind]
    bound = (error.get("ctx") or {}).get("ge", (error.get("ctx") or {}).get("le"))
    if kind in ("greater_than_equal", "less_than_equal"):
        text = f"{'below the least' if kind == 'greater_than_equal' else 'above the largest'} plausible value {bound:g}"
    else:
        text = _MESSAGES.get(kind) or error["msg"].splitlines()[0]
    return f"{text}, got {repr(error.get('input'))[:40]}"


def checked(path: Path, shape: type[M], data: Any, where: str = "") -> M:
    """`data` read as `shape`, or one CatalogueError naming `path` and the first bad field (under `where`)."""
    try:
        return shape.model_validate(data)
    except ValidationError as exc:
        raise one_line(path, exc, where) from None


def one_line(path: Path, exc: ValidationError, where: str = "") -> CatalogueError:
    """The first error of a pydantic validation as one line naming `path` and the field (under `where`)."""
    error = exc.errors(include_url=False)[0]
    loc = tuple(part for part in error["loc"] if not (isinstance(part, str) and part.startswith("function-")))
    inner = field_path(loc)
    name = f"{where}.{inner}" if where and inner and not inner.startswith("[") else f"{where}{inner}"
    return CatalogueError(path, _message(error), name or None)
