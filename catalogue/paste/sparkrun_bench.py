"""A sparkrun recipe's `benchmark` block -> the draft's sweep: what maps, and one line for each thing that does not.

sparkrun reads the block as `framework` (default llama-benchy), `args` (and any other key swept into them),
`timeout`, `schedule`, `category`, `metadata` (sparkrun/core/benchmark_profiles.py, BenchmarkSpec.from_recipe).
llama-benchy's `concurrency` levels become the sweep's, one `pp` its prompt length, one `tg` its output length;
the runner measures them with vLLM's client (random prompts), not llama-benchy."""

from __future__ import annotations

from typing import Any

BLOCK_KEYS = ("framework", "args", "metadata", "timeout", "schedule", "category")
"""The keys sparkrun reads in a benchmark block; any other is an argument of the framework."""


def _values(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _ints(value: Any) -> list[int] | None:
    items = _values(value)
    ok = items and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in items)
    return [int(v) for v in items] if ok else None


def _one_length(args: dict[str, Any], key: str, field: str, sweep: dict[str, Any], lines: list[str]) -> None:
    if key not in args:
        return
    values = _ints(args[key])
    if values is None:
        lines.append(f"benchmark.args.{key}: {args[key]!r} is not a token count: the sweep keeps {sweep[field]}")
        return
    sweep[field] = values[0]
    if len(values) > 1:
        lines.append(f"benchmark.args.{key}: {values}: the sweep has one {field}; it takes {values[0]}")


def block_args(block: dict[str, Any]) -> dict[str, Any]:
    """The framework's arguments: `args`, then every other key of the block not already there (as sparkrun)."""
    args = dict(block.get("args") or {}) if isinstance(block.get("args") or {}, dict) else {}
    return args | {k: v for k, v in block.items() if k not in BLOCK_KEYS and k not in args}


def benchmark_sweep(block: dict[str, Any], default: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(the sweep, a line per field of the block the sweep cannot honour, each naming the field). The levels are
    kept; the runner measures them with `vllm bench serve` (random prompts), so its figures are not llama-benchy's."""
    sweep = dict(default)
    lines: list[str] = []
    framework = str(block.get("framework", "llama-benchy"))
    if framework != "llama-benchy":
        return sweep, [f"benchmark.framework: {framework}: only llama-benchy's levels map; the sweep is the default"]
    args = block_args(block)
    if "concurrency" in args:
        levels = _ints(args["concurrency"])
        if levels is None:
            lines.append(f"benchmark.args.concurrency: {args['concurrency']!r} is not a list of levels: left out")
        else:
            sweep["concurrency"] = sorted(set(levels))
    _one_length(args, "pp", "input_len", sweep, lines)
    _one_length(args, "tg", "output_len", sweep, lines)
    depths = [d for d in _values(args.get("depth", 0)) if d != 0]
    if depths:
        lines.append(
            f"benchmark.args.depth: {depths}: context already in the cache before each prompt has no "
            "counterpart in the sweep: those levels are left out"
        )
    mapped = ("concurrency", "pp", "tg", "depth")
    lines += [
        f"benchmark.args.{key}: {value!r}: a llama-benchy setting the sweep has no counterpart for"
        for key, value in args.items()
        if key not in mapped
    ]
    lines += [
        f"benchmark.{key}: sparkrun's own setting: the runner has no counterpart (left out)"
        for key in ("timeout", "schedule", "category")
        if key in block
    ]
    return sweep, lines
