"""`vllm serve` words -> the model and `serving.flags`, read with a vLLM flag snapshot (the installed parser's,
or a committed one): which words are switches, which take a value, which values are JSON, ints or floats."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from catalogue.flags.checkers import is_switch, value_kind
from catalogue.flags.snapshot import FlagSnapshot, OptionSpec
from catalogue.flags.validate import suggest
from catalogue.models.bounded import JsonTooDeep, json_value
from catalogue.models.errors import CatalogueError


@dataclass
class ServeFlags:
    """The model and flags of one `vllm serve` command."""

    model: str
    flags: dict[str, Any] = field(default_factory=dict)
    not_upstream: list[str] = field(default_factory=list)
    """Flags the upstream snapshot lacks (the image provides them)."""
    notes: list[str] = field(default_factory=list)


def _is_value(word: str) -> bool:
    return not word.startswith("-") or _number(word) is not None


def _number(word: str) -> int | float | None:
    for kind in (int, float):
        try:
            return kind(word)
        except ValueError:
            continue
    return None


def _resolve(snapshot: FlagSnapshot | None, name: str) -> tuple[str, OptionSpec] | None:
    """(full long spelling, option) for a name or an unambiguous abbreviation, as argparse resolves them."""
    if snapshot is None:
        return None
    spec = snapshot.option(name)
    if spec is not None:
        return name, spec
    full = snapshot.expand(name)
    found = snapshot.option(full) if full else None
    return (full, found) if full and found else None


def _typed(spec: OptionSpec | None, text: str, flag: str, label: str, line: int) -> Any:
    kind = value_kind(spec) if spec is not None else "guess"
    if kind == "json":
        try:
            value = json_value(text)
        except ValueError as exc:  # JSONDecodeError, too deep, or a whole number past Python's 4,300 digits
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc) if isinstance(exc, JsonTooDeep) else ""
            why = why or "a whole number too long to read"
            raise CatalogueError(label, f"--{flag}: not valid JSON ({why})", line=line) from None
        return text if isinstance(value, list) else value  # a recipe's list is several words, not one JSON array
    if kind in ("int", "float", "guess") or (kind == "human_int" and text.isdigit()):
        number = _number(text)
        if number is not None and (kind != "int" or isinstance(number, int)):
            return number
    return text


def read_serve(
    words: list[str], upstream: FlagSnapshot, image: FlagSnapshot | None, has_image: bool, label: str, line: int
) -> ServeFlags:
    """Walk the words after `vllm serve`: the model first (or --model), then every flag with its value(s)."""
    model: str | None = None
    flags: dict[str, Any] = {}
    not_upstream: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            if model is None and not flags:
                model = word
                i += 1
                continue
            raise CatalogueError(label, f"unexpected word {word!r} after the flags of `vllm serve`", line=line)
        if not word.startswith("--"):
            short, _, rest = word.partition("=")
            spec_of = next((o for o in upstream.options if short in o.spellings), None)
            longs = [s for s in spec_of.spellings if s.startswith("--")] if spec_of else []
            if not longs:
                raise CatalogueError(label, f"{short} is not an option of vLLM {upstream.vllm_version}", line=line)
            word = longs[0] + ("=" + rest if rest else "")
        raw_name, has_eq, inline = word[2:].partition("=")
        name = raw_name.replace("_", "-")
        base, dot, key = name.partition(".")
        found = _resolve(upstream, base)
        spec = found[1] if found else None
        if found is None:
            in_image = _resolve(image, base)
            if in_image is None and not has_image:
                close = suggest(base, upstream.long_names)
                hint = f" (did you mean --{close}?)" if close else ""
                raise CatalogueError(
                    label,
                    f"--{base} is not a flag of vLLM {upstream.vllm_version}{hint}, and no image provides it",
                    line=line,
                )
            spec = in_image[1] if in_image else None
            base = in_image[0] if in_image else base
            not_upstream.append(base + dot + key)
        else:
            if found[0] != base:
                notes.append(f"--{base} read as --{found[0]}: an abbreviation vLLM accepts, spelled in full")
            base = found[0]
        name = base + dot + key
        i += 1
        if spec is not None and is_switch(spec) and not dot:
            if has_eq:
                raise CatalogueError(label, f"--{name} is a switch and takes no value", line=line)
            value: Any = True
        else:
            values = [inline] if has_eq else []
            many = spec is not None and (spec.nargs in ("+", "*") or isinstance(spec.nargs, int))
            while not has_eq and i < len(words) and _is_value(words[i]) and (many or not values):
                values.append(words[i])
                i += 1
            if not values:
                if spec is None:
                    value = True
                else:
                    raise CatalogueError(label, f"--{name} needs a value", line=line)
            elif len(values) > 1:  # only an option that takes several (nargs) reads more than one
                value = [_typed(spec, text, name, label, line) for text in values]
            else:
                value = _typed(spec if not dot else None, values[0], name, label, line)
        if name in flags:
            notes.append(f"--{name} is given twice; vLLM uses the last ({value!r}), and so does the recipe")
            del flags[name]
        flags[name] = value
    if "model" in flags:
        model = str(flags.pop("model"))
    if model is None:
        raise CatalogueError(label, "`vllm serve` names no model", line=line)
    return ServeFlags(model, flags, [n for n in not_upstream if n in flags], notes)
