"""Two ways to parse a recipe's argv: vLLM's own parser (live) or one rebuilt from a snapshot."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from catalogue.flags.snapshot import FlagSnapshot, OptionSpec
from catalogue.models.bounded import JsonTooDeep, json_value

HUMAN_INT = re.compile(r"^\d+(\.\d+)?[kKmMgGtT]?$")


class ArgvChecker(Protocol):
    """Parses `vllm serve` argv (without `vllm serve`) and runs post-parse checks."""

    snapshot: FlagSnapshot
    source: str

    def parse(self, argv: list[str]) -> tuple[argparse.Namespace | None, str | None]:
        """(namespace, None) when argv parses, else (None, the parser's message)."""

    def cross_check(self, namespace: argparse.Namespace) -> str | None:
        """The first cross-flag problem, or None."""


class LiveChecker:
    """The installed vLLM's parser and `validate_parsed_serve_args`, both built by catalogue.flags.extract
    (`live_checker()`) and handed in here."""

    def __init__(
        self, snapshot: FlagSnapshot, parser: argparse.ArgumentParser, cross: Callable[[argparse.Namespace], Any] | None
    ) -> None:
        self.snapshot = snapshot
        self.source = f"installed vLLM {snapshot.vllm_version}"
        self._parser = parser
        self._cross = cross

    def parse(self, argv: list[str]) -> tuple[argparse.Namespace | None, str | None]:
        try:
            return self._parser.parse_args(argv), None
        except (argparse.ArgumentError, argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            return None, str(exc)

    def cross_check(self, namespace: argparse.Namespace) -> str | None:
        if self._cross is None:
            return None
        try:
            self._cross(namespace)
        except Exception as exc:  # whatever vLLM's own check raises (VLLMValidationError, ...) is its verdict
            return str(exc).removeprefix("Error: ") or type(exc).__name__
        return None


class RaiseOnError:
    """Mixin for an argparse parser: an error raises ArgumentError instead of printing and exiting."""

    def error(self, message: str):
        raise argparse.ArgumentError(None, message)


class _RaisingArgumentParser(RaiseOnError, argparse.ArgumentParser):
    pass


def _json_type(keys: list[str] | None) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = json_value(text)
        except JsonTooDeep as exc:
            raise argparse.ArgumentTypeError(f"invalid JSON: {exc}") from None
        except json.JSONDecodeError as exc:
            raise argparse.ArgumentTypeError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
        if keys is not None and isinstance(value, dict):
            for key in value:
                if key not in keys:
                    raise argparse.ArgumentTypeError(f"{key}: unknown key")
        return value

    return parse


def _human_int(text: str) -> str:
    if not HUMAN_INT.match(text):
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}")
    return text


def is_switch(spec: OptionSpec) -> bool:
    """A flag taking no value, whatever its action class (nargs 0: vLLM 0.33's paired --enable-X/--disable-X)."""
    return spec.action in ("store_true", "store_false", "boolean_optional", "count", "store_const") or spec.nargs == 0


def value_kind(spec: OptionSpec) -> str:
    """How a value is read: 'json', 'human_int', 'int', 'float' or 'str'."""
    if spec.type == "json":
        return "json"
    if spec.type == "human_readable_int":
        return "human_int"
    if spec.type in ("int", "float") and not spec.choices:
        return spec.type
    return "str"


def parse_shape(spec: OptionSpec) -> tuple:
    """Everything about an option, besides its allowed values, that decides whether a given value parses."""
    return ("switch",) if is_switch(spec) else (value_kind(spec), spec.nargs, spec.action == "append")


def _value_type(spec: OptionSpec) -> Callable[[str], Any]:
    kind = value_kind(spec)
    if kind == "json":
        return _json_type(spec.json_keys)
    if kind == "human_int":
        return _human_int
    return {"int": int, "float": float}.get(kind, str)


class OptionFacts(NamedTuple):
    """One option of a snapshot as a verdict on its value sees it (catalogue.flags.drift.verdict_key)."""

    shape: tuple
    """How its value parses (`parse_shape`)."""
    choices: frozenset[str] | None
    """The parser's choices, if it restricts the value."""
    registry: frozenset[str] | None
    """Its registry's values (catalogue.flags.snapshot), if it has one."""
    json_keys: frozenset[str] | None
    """The allowed top-level keys of a JSON config, if any."""


def _as_set(values: list[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(values)


class SnapshotChecker:
    """An argparse parser rebuilt from a snapshot: spellings, types, choices, nargs; no cross checks.

    argparse's cost grows with the options a parser has, and vLLM has ~300. A recipe names ~15, so each
    set of names gets a parser of just the options that those names can reach (exactly, or as an
    abbreviation): the same verdicts, several times faster, kept per name set on this checker.
    """

    def __init__(self, snapshot: FlagSnapshot, label: str) -> None:
        self.snapshot = snapshot
        self.source = label
        self._parsers: dict[frozenset[str], argparse.ArgumentParser] = {}
        self._facts: dict[str, OptionFacts | None] = {}

    def option_facts(self, name: str) -> OptionFacts | None:
        """What this snapshot's verdict on a value of flag `name` depends on besides the value; None when it lacks
        the option. Kept per name: the drift row asks it for every recipe (catalogue.flags.drift.verdict_key)."""
        if name not in self._facts:
            option = self.snapshot.option(name)
            if option is None:
                self._facts[name] = None
            else:
                long_name = next(s[2:] for s in option.spellings if s.startswith("--"))
                registry = self.snapshot.registries.get(long_name)
                self._facts[name] = OptionFacts(
                    parse_shape(option), _as_set(option.choices), _as_set(registry), _as_set(option.json_keys)
                )
        return self._facts[name]

    def _parser_for(self, names: frozenset[str]) -> argparse.ArgumentParser:
        parser = self._parsers.get(names)
        if parser is None:
            reachable: dict[str, OptionSpec] = {}
            for name in names:
                exact = self.snapshot.option(name)
                candidates = (
                    [exact]
                    if exact is not None
                    else [o for o in self.snapshot.options if any(s.startswith(name) for s in o.spellings)]
                )
                reachable.update((o.dest + " ".join(o.spellings), o) for o in candidates)
            parser = _RaisingArgumentParser(add_help=False)
            parser.add_argument("model_tag", nargs="?")
            for spec in reachable.values():
                self._add(parser, spec)
            self._parsers[names] = parser
        return parser

    @staticmethod
    def _add(parser: argparse.ArgumentParser, spec: OptionSpec) -> None:
        if is_switch(spec):
            for i, spelling in enumerate(spec.spellings):
                parser.add_argument(spelling, dest=f"{spec.dest}__{i}", action="store_true")
            return
        kwargs: dict[str, Any] = {"dest": spec.dest, "type": _value_type(spec)}
        if spec.choices:
            kwargs["choices"] = spec.choices
        if spec.nargs is not None:
            kwargs["nargs"] = spec.nargs
        if spec.action == "append":
            kwargs["action"] = "append"
        parser.add_argument(*spec.spellings, **kwargs)

    def parse(self, argv: list[str]) -> tuple[argparse.Namespace | None, str | None]:
        normalised = [_dashes(word) for word in argv]
        names = frozenset(
            w.split("=", 1)[0] for w in normalised if (w.startswith("-") and w[1:2].isalpha()) or w.startswith("--")
        )
        try:
            return self._parser_for(names).parse_args(normalised), None
        except (argparse.ArgumentError, argparse.ArgumentTypeError) as exc:
            return None, str(exc)

    def cross_check(self, namespace: argparse.Namespace) -> str | None:
        return None


def _dashes(word: str) -> str:
    """`--max_num_seqs=4` -> `--max-num-seqs=4`, as vLLM's FlexibleArgumentParser spells it."""
    if not word.startswith("--"):
        return word
    name, sep, value = word.partition("=")
    return name.replace("_", "-") + sep + value
