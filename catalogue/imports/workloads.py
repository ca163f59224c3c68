"""Imported levels -> runs: what each file's workload is, which files belong together, and where they clash."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue.errors import CatalogueError
from catalogue.imports.source import ImportedLevels
from catalogue.workload import Workload

LENGTH_TOLERANCE = 0.10
"""How far a file's mean prompt/output length may sit from the stated one (random prompts re-tokenise)."""


@dataclass(frozen=True)
class Stated:
    """What the person importing says about a workload the files do not record."""

    dataset: str | None = None
    input_len: int | None = None
    output_len: int | None = None
    tool_version: str | None = None


@dataclass
class Group:
    """Parts with one workload: they become one run."""

    workload: Workload
    parts: list[ImportedLevels]


def _near(value: float, target: float) -> bool:
    return abs(value - target) <= max(1.0, LENGTH_TOLERANCE * target)


def workload_of(part: ImportedLevels, stated: Stated) -> Workload:
    """The part's workload: what the tool fixed, else what was stated, checked against the tokens it counted."""
    where = part.files[0]
    if part.exact_lengths:
        for name, given, own in (
            ("input_len", stated.input_len, part.input_tokens),
            ("output_len", stated.output_len, part.output_tokens),
        ):
            if given is not None and own is not None and given != own:
                raise CatalogueError(where, f"the file says {own:g}, --{name.replace('_', '-')} says {given}", name)
        input_len, output_len, dataset = part.input_tokens, part.output_tokens, part.dataset
    else:
        input_len, output_len, dataset = stated.input_len, stated.output_len, stated.dataset
        if input_len is not None and part.input_tokens is not None and not _near(part.input_tokens, input_len):
            raise CatalogueError(
                where,
                f"the requests averaged {part.input_tokens:.1f} prompt tokens, not the stated {input_len}",
                "total_input_tokens",
            )
        if output_len is not None and part.output_tokens is not None and part.output_tokens > output_len * 1.05:
            raise CatalogueError(
                where,
                f"the requests averaged {part.output_tokens:.1f} output tokens, more than the stated {output_len}",
                "total_output_tokens",
            )
    return Workload(
        tool=part.tool,
        tool_version=part.tool_version or stated.tool_version,
        dataset=dataset,
        input_len=int(input_len) if input_len else None,
        output_len=int(output_len) if output_len else None,
        context_depth=part.context_depth,
        prompts_per_level=str(part.prompts) if part.prompts is not None else None,
        repetitions=part.repetitions,
    )


def group_parts(parts: list[ImportedLevels], stated: Stated) -> list[Group]:
    """One group per workload. Files of one workload must agree on the model and measured lengths and not repeat
    a concurrency; a difference the workload key cannot show is an error naming both files."""
    groups: list[Group] = []
    for part in parts:
        workload = workload_of(part, stated)
        group = next((g for g in groups if g.workload.key == workload.key and g.parts[0].tool == part.tool), None)
        if group is None:
            groups.append(Group(workload, [part]))
            continue
        _check_same(group.parts[0], part)
        seen = {lv.concurrency: p for p in group.parts for lv in p.levels}
        for level in part.levels:
            if level.concurrency in seen:
                raise CatalogueError(
                    part.files[0],
                    f"concurrency {level.concurrency} is also in {seen[level.concurrency].files[0]}: "
                    "one result per level and workload",
                    "max_concurrency",
                )
        group.parts.append(part)
    return groups


def _check_same(first: ImportedLevels, part: ImportedLevels) -> None:
    where = part.files[0]
    if first.model != part.model:
        raise CatalogueError(where, f"model {part.model!r} differs from {first.model!r} in {first.files[0]}", "model")
    for name, a, b in (
        ("prompt", first.input_tokens, part.input_tokens),
        ("output", first.output_tokens, part.output_tokens),
    ):
        if a is not None and b is not None and not _near(b, a):
            raise CatalogueError(
                where,
                f"mixed workloads: ≈{b:.0f} {name} tokens per request here, ≈{a:.0f} in {first.files[0]}; "
                "import them separately",
                "total_input_tokens" if name == "prompt" else "total_output_tokens",
            )
