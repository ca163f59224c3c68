"""Read the flag snapshot out of the installed vLLM (imports vLLM; ~5 s)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any

from catalogue.flags.checkers import LiveChecker, RaiseOnError
from catalogue.flags.snapshot import (
    FlagSnapshot,
    OptionSpec,
    cache_path,
    installed_vllm_version,
    read_snapshot,
    write_snapshot,
)

JSON_CONFIG_TYPES = "parse_dataclass"
REGISTRY_FLAGS = (
    "quantization",
    "attention-backend",
    "load-format",
    "reasoning-parser",
    "tool-call-parser",
    "kv-cache-dtype",
)


def vllm_parser(raising: bool = True) -> argparse.ArgumentParser:
    """The real `vllm serve` parser of the installed vLLM; `raising` makes errors exceptions."""
    import vllm.engine.arg_utils as arg_utils

    arg_utils.NEEDS_HELP = True
    try:
        from vllm.entrypoints.launchers.cli_args import make_arg_parser
    except ImportError:
        try:
            from vllm.entrypoints.common.cli_args import make_arg_parser
        except ImportError:
            from vllm.entrypoints.openai.cli_args import make_arg_parser
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser

    class RaisingParser(RaiseOnError, FlexibleArgumentParser):
        pass

    return make_arg_parser(RaisingParser() if raising else FlexibleArgumentParser())


def cross_flag_check() -> Any:
    """vLLM's own post-parse checks (`validate_parsed_serve_args`)."""
    for module in (
        "vllm.entrypoints.launchers.cli_args",
        "vllm.entrypoints.common.cli_args",
        "vllm.entrypoints.openai.cli_args",
    ):
        try:
            mod = __import__(module, fromlist=["validate_parsed_serve_args"])
            return mod.validate_parsed_serve_args
        except (ImportError, AttributeError):
            continue
    return None


def registries() -> dict[str, list[str]]:
    """Valid values of the flags the parser leaves free-text, from vLLM's registries."""
    out: dict[str, list[str]] = {}
    from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS

    out["quantization"] = sorted(QUANTIZATION_METHODS)
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    out["attention-backend"] = sorted(e.name for e in AttentionBackendEnum)
    from vllm.model_executor import model_loader

    table = getattr(model_loader, "_LOAD_FORMAT_TO_MODEL_LOADER", {})
    out["load-format"] = sorted(table)
    from vllm.reasoning import ReasoningParserManager

    out["reasoning-parser"] = sorted(ReasoningParserManager.list_registered())
    try:
        from vllm.tool_parsers import ToolParserManager
    except ImportError:
        from vllm.entrypoints.openai.tool_parsers import ToolParserManager
    out["tool-call-parser"] = sorted(ToolParserManager.list_registered())
    return out


def _type_name(action: argparse.Action) -> tuple[str | None, list[str] | None]:
    kind = action.type
    if kind is None:
        return None, None
    if kind in (int, float, str):
        return kind.__name__, None
    qualname = getattr(kind, "__qualname__", "")
    bound = [cell.cell_contents for cell in getattr(kind, "__closure__", None) or ()]
    for inner in [*bound, *(getattr(kind, "__defaults__", None) or ())]:
        if JSON_CONFIG_TYPES in qualname and isinstance(inner, type):
            fields = getattr(inner, "__dataclass_fields__", None) or getattr(inner, "model_fields", {})
            return "json", sorted(fields)
        if "optional_type" in qualname and inner in (int, float, str):
            return inner.__name__, None
    if JSON_CONFIG_TYPES in qualname or "json" in qualname.lower():
        return "json", None
    if "human_readable_int" in qualname:
        return "human_readable_int", None
    return "text", None


def _action_kind(action: argparse.Action) -> str:
    name = type(action).__name__
    return {
        "_StoreAction": "store",
        "_StoreTrueAction": "store_true",
        "_StoreFalseAction": "store_false",
        "BooleanOptionalAction": "boolean_optional",
        "_AppendAction": "append",
        "_CountAction": "count",
        "_StoreConstAction": "store_const",
    }.get(name, "other")


def _spec(action: argparse.Action, deprecated: set[argparse.Action]) -> OptionSpec:
    type_name, keys = _type_name(action)
    help_text = action.help if isinstance(action.help, str) else ""
    is_deprecated = (
        action in deprecated
        or bool(getattr(action, "deprecated", False))
        or type(action).__name__.startswith("Deprecated")
        or "is deprecated" in help_text.lower()
    )
    default = action.default if action.default is None else json.dumps(action.default, default=str)
    return OptionSpec(
        dest=action.dest,
        spellings=list(action.option_strings),
        action=_action_kind(action),
        type=type_name,
        json_keys=keys,
        choices=[str(c) for c in action.choices] if action.choices else None,
        nargs=action.nargs,
        default=default,
        help=help_text,
        deprecated=is_deprecated,
    )


def extract_snapshot(image: str | None = None) -> FlagSnapshot:
    """Build the snapshot from the installed vLLM (imports it)."""
    import vllm

    parser = vllm_parser()
    deprecated = set(getattr(parser, "_deprecated", set()))
    options = [_spec(a, deprecated) for a in parser._actions if a.option_strings and a.dest != "help"]
    regs = registries()
    kv = next((o for o in options if "--kv-cache-dtype" in o.spellings), None)
    if kv is not None and kv.choices:
        regs["kv-cache-dtype"] = kv.choices
    elif kv is not None:
        # Since vLLM 0.33 the option is free text, checked after parsing against this list (which platform
        # backends may extend): it is the registry of valid values.
        try:
            from vllm.config.cache import KV_CACHE_DTYPES

            regs["kv-cache-dtype"] = [str(v) for v in KV_CACHE_DTYPES]
        except ImportError:
            pass
    return FlagSnapshot(
        vllm_version=str(getattr(vllm, "__version__", installed_vllm_version() or "unknown")),
        image=image,
        taken_at=dt.datetime.now(dt.UTC).replace(microsecond=0),
        options=options,
        registries=regs,
    )


def installed_snapshot() -> FlagSnapshot | None:
    """The installed vLLM's snapshot, from the per-version cache or extracted once and cached."""
    version = installed_vllm_version()
    if version is None:
        return None
    path = cache_path(version)
    if path.exists():
        return read_snapshot(path)
    snapshot = extract_snapshot()
    write_snapshot(snapshot, path)
    return snapshot


def live_checker() -> LiveChecker | None:
    """A checker with the installed vLLM's own parser and cross-flag check, or None without vLLM."""
    snapshot = installed_snapshot()
    if snapshot is None:
        return None
    return LiveChecker(snapshot, vllm_parser(raising=True), cross_flag_check())
