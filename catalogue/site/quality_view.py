"""The Quality box beside a run's performance table, and quality side by side on a comparison page: a quantised
recipe's score beside the reference precision's, with the difference, or "not measured"."""

from __future__ import annotations

import re
from dataclasses import dataclass

from catalogue.models.benchmark import BenchmarkRun
from catalogue.models.loading import Entry
from catalogue.models.quality import QualityCheck

KINDS = (("accuracy", "Accuracy"), ("tool-calling", "Tool calling"))
NOT_MEASURED = "not measured"
_QUANTISED = re.compile(r"fp8|fp4|int4|int8|awq|gptq|gguf|mxfp|nvfp|q[2-8]_|w[48]a(8|16)|bitsandbytes", re.I)
_REFERENCE = re.compile(r"\b(none|bf16|bfloat16|fp16|float16|fp32|float32)\b", re.I)


def is_reference(quantization: str) -> bool:
    """Whether a recipe's weight format is a reference precision (BF16/FP16/FP32, unquantised), read from the
    start of its `quantization` text: 'none (BF16 weights)' is, 'NVFP4 (...), BF16 KV cache' is not."""
    head = quantization.split("(", 1)[0].split(",", 1)[0]
    return bool(_REFERENCE.search(head)) and not _QUANTISED.search(head)


def score_text(check: QualityCheck | None) -> str:
    """A check's score as a page shows it."""
    if check is None:
        return NOT_MEASURED
    if check.score is None:
        return f"no score ({check.error})"
    return f"{check.score:g} ({check.passed}/{check.items})"


@dataclass(frozen=True)
class Box:
    """What the Quality box of one run says."""

    rows: list[tuple[str, str, str, str, str]]
    """(check, tool and version, items, score, time) per check."""
    notes: list[str]


def quality_box(run: BenchmarkRun) -> Box:
    """The Quality box: each check's figures, or why there are none."""
    quality = run.quality
    if quality is None:
        return Box(
            [],
            [
                f"Quality: {NOT_MEASURED} in this run (no tool-calling or accuracy check ran), "
                "so it claims no quality figure."
            ],
        )
    notes = []
    if quality.skipped:
        notes.append(f"The recipe turns the quality checks off: {quality.skipped}")
    if quality.random_weights:
        notes.append(
            "The model has random weights (`--load-format dummy`): these scores say nothing about any real model."
        )
    rows = [
        (label, f"{c.tool} {c.version}", str(c.items), score_text(c), f"{c.took_s:.1f} s")
        for kind, label in KINDS
        if (c := quality.check(kind)) is not None
    ]
    return Box(rows, notes)


@dataclass(frozen=True)
class Row:
    """One recipe on a comparison page's quality table."""

    short: str
    quantization: str
    reference: bool
    scores: list[str]
    """Per kind in KINDS: the score, or "not measured"."""
    deltas: list[str]
    """Per kind: the difference from the reference precision's score in points, or why there is none."""


def _check(entry: Entry, kind: str) -> QualityCheck | None:
    """The newest scored check of that kind among the recipe's runs."""
    for run in sorted(entry.runs, key=lambda r: r.recorded_at, reverse=True):
        if run.quality and (c := run.quality.check(kind)) is not None and c.score is not None:
            return c
    return None


def compare_rows(members: list[tuple[str, Entry]]) -> list[Row]:
    """Each recipe's newest scores; a quantised one's difference from the reference precision's (the first
    reference recipe with a score of the same tool and version), else "not measured"."""
    refs = [e for _, e in members if is_reference(e.recipe.quantization)]
    rows = []
    for short, entry in members:
        scores, deltas = [], []
        for kind, _ in KINDS:
            mine = _check(entry, kind)
            scores.append(score_text(mine))
            ref = next(
                (
                    c
                    for e in refs
                    if (c := _check(e, kind)) is not None
                    and mine is not None
                    and (c.tool, c.version) == (mine.tool, mine.version)
                ),
                None,
            )
            if is_reference(entry.recipe.quantization):
                deltas.append("reference")
            elif mine is None or mine.score is None:
                deltas.append(NOT_MEASURED)
            elif ref is None or ref.score is None:
                deltas.append("reference " + NOT_MEASURED)
            else:
                deltas.append(f"{mine.score - ref.score:+.1f} points")
        rows.append(Row(short, entry.recipe.quantization, is_reference(entry.recipe.quantization), scores, deltas))
    return rows
