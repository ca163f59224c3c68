"""Imported levels -> runs: what each file's workload is, which files belong together, and where they clash."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError

from catalogue.imports.source import ImportedLevels
from catalogue.models.benchmark import RateLevel
from catalogue.models.errors import CatalogueError
from catalogue.models.slo import GOODPUT_KEYS, Slo
from catalogue.models.workload import Workload

LENGTH_TOLERANCE = 0.10
"""How far a file's mean prompt/output length may sit from the stated one (random prompts re-tokenise)."""


@dataclass(frozen=True)
class Stated:
    """What the person importing says about a workload the files do not record."""

    dataset: str | None = None
    input_len: int | None = None
    output_len: int | None = None
    tool_version: str | None = None
    goodput: dict[str, float] | None = None
    """The limits the goodput figures were counted against (vLLM's --goodput KEY:MS), when the files lack them."""
    slo_percentile: int | None = None
    """The percentile the rate levels are judged at (the Slo's default when None)."""


@dataclass
class Group:
    """Parts with one workload: they become one run."""

    workload: Workload
    parts: list[ImportedLevels]
    slo: Slo | None = None
    """The objective the rate levels are judged against: limits from the files or --goodput."""
    notes: list[str] = field(default_factory=list)
    """Facts about the group as a whole."""


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


def rate_key(level: RateLevel) -> tuple:
    """What makes two open-loop levels the same level: rate, arrivals, burstiness and cap."""
    return (level.offered_rps, level.arrivals, level.burstiness, level.max_concurrency)


def describe_rate(level: RateLevel) -> str:
    """'4 req/s (poisson)', 'as fast as possible (at most 512 in flight)'."""
    text = f"{level.offered_rps:g} req/s" if level.offered_rps is not None else "as fast as possible"
    how: list[str] = [level.arrivals] if level.arrivals and level.offered_rps is not None else []
    if level.arrivals == "gamma" and level.burstiness is not None:
        how = [f"burstiness {level.burstiness:g}"]
    if level.max_concurrency:
        how.append(f"at most {level.max_concurrency} in flight")
    return text + (f" ({', '.join(how)})" if how else "")


def _loose(workload: Workload) -> tuple:
    """The workload key without requests per level: open-loop levels size their requests by rate."""
    return tuple(v for name, v in zip(Workload.KEY_FIELDS, workload.key, strict=True) if name != "prompts_per_level")


def _joins(group: Group, workload: Workload, part: ImportedLevels) -> bool:
    if group.parts[0].tool != part.tool:
        return False
    if group.workload.key == workload.key:
        return True
    open_loop_only = not part.levels or not any(p.levels for p in group.parts)
    return open_loop_only and _loose(group.workload) == _loose(workload)


def _merged(group: Group, stated: Stated) -> Workload:
    """The group's workload: requests per level from its concurrency levels, else from its rate files when they
    agree, else not one number."""
    closed = [p for p in group.parts if p.levels]
    prompts = {workload_of(p, stated).prompts_per_level for p in (closed or group.parts)}
    workload = workload_of((closed or group.parts)[0], stated)
    return workload.model_copy(update={"prompts_per_level": prompts.pop() if len(prompts) == 1 else None})


def group_parts(parts: list[ImportedLevels], stated: Stated) -> list[Group]:
    """One group per workload. Files of one workload must agree on the model, the measured lengths and the goodput
    limits, and not repeat a level; a difference the workload key cannot show is an error naming both files."""
    groups: list[Group] = []
    for part in parts:
        workload = workload_of(part, stated)
        group = next((g for g in groups if _joins(g, workload, part)), None)
        if group is None:
            groups.append(Group(workload, [part]))
            continue
        _check_same(group.parts[0], part)
        _check_repeats(group, part)
        group.parts.append(part)
        group.workload = _merged(group, stated)
    for group in groups:
        group.slo, group.notes = _objective(group, stated)
    return groups


def _check_repeats(group: Group, part: ImportedLevels) -> None:
    seen = {lv.concurrency: p for p in group.parts for lv in p.levels}
    for level in part.levels:
        if level.concurrency in seen:
            raise CatalogueError(
                part.files[0],
                f"concurrency {level.concurrency} is also in {seen[level.concurrency].files[0]}: "
                "one result per level and workload",
                "max_concurrency",
            )
    rates = {rate_key(lv): p for p in group.parts for lv in p.rates}
    for rate in part.rates:
        if rate_key(rate) in rates:
            raise CatalogueError(
                part.files[0],
                f"the rate {describe_rate(rate)} is also in {rates[rate_key(rate)].files[0]}: "
                "one result per level and workload",
                "request_rate",
            )


def _objective(group: Group, stated: Stated) -> tuple[Slo | None, list[str]]:
    """The group's SLO: the goodput limits its files record (they must agree), else the stated --goodput."""
    recorded = [(p, p.slo_limits) for p in group.parts if p.slo_limits]
    limits = recorded[0][1] if recorded else None
    for part, other in recorded[1:]:
        if other != limits:
            raise CatalogueError(
                part.files[0],
                f"goodput limits {_limits(other)} differ from {_limits(limits)} in {recorded[0][0].files[0]}: "
                "import them separately",
                "slo",
            )
    if stated.goodput is not None:
        if limits is not None and stated.goodput != limits:
            raise CatalogueError(
                recorded[0][0].files[0],
                f"the file's goodput limits are {_limits(limits)}, --goodput says {_limits(stated.goodput)}",
                "slo",
            )
        limits = stated.goodput
    notes = []
    if limits is None:
        if any(p.goodput_without_limits for p in group.parts) and any(p.rates for p in group.parts):
            notes.append(
                "request_goodput was counted against --goodput limits the files do not record, and the import did "
                "not state them (--goodput): the rate levels are judged against no objective."
            )
        return None, notes
    if not any(p.rates for p in group.parts):
        return None, notes
    values: dict = {"percentile": stated.slo_percentile} if stated.slo_percentile is not None else {}
    try:
        return Slo(**values, **limits), notes
    except ValidationError as exc:
        raise CatalogueError(group.parts[0].files[0], f"not an objective: {exc.errors()[0]['msg']}", "slo") from None


def parse_goodput(pairs: list[str]) -> dict[str, float]:
    """`--goodput ttft:2000 tpot:100` as vLLM spells it -> {key: ms}; one error line for a bad pair."""
    out: dict[str, float] = {}
    for pair in pairs:
        key, sep, value = pair.partition(":")
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or number is None or not number > 0:
            raise CatalogueError("--goodput", f"expected KEY:MS with a positive number of ms, got {pair!r}")
        if key not in GOODPUT_KEYS:
            raise CatalogueError(
                "--goodput", f"{key!r} is not a limit vLLM's --goodput knows (it knows {', '.join(GOODPUT_KEYS)})"
            )
        out[key] = number
    return out


def _limits(limits: dict[str, float] | None) -> str:
    return " ".join(f"{k}:{v:g}" for k, v in (limits or {}).items()) or "none"


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
