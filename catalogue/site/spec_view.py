"""What a speculative-decoding recipe's page says about its figures: they depend on the text, so it names each kind
of text the recipe measures, which have a measured run with vLLM's counters, which have none yet, and which
published figures came without any acceptance figure (not known)."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue.models import texts
from catalogue.models.benchmark import BenchmarkRun
from catalogue.models.bounded import json_value
from catalogue.models.recipe import Recipe
from catalogue.models.texts import TextKind


@dataclass(frozen=True)
class SpecSummary:
    """The speculative-decoding paragraph of a recipe page."""

    method: str | None
    """The drafting method from --speculative-config, when it names one."""
    tokens: int | None
    """Speculative tokens per step, when stated."""
    measured: list[tuple[TextKind, str]]
    """Kinds of text with a complete measured run that read the counters: (kind, its run's date)."""
    not_measured: list[TextKind]
    """Kinds of text the sweep asks for with no such run yet."""
    unknown: list[str]
    """Workloads with figures but no acceptance figures (an imported source, or a run without counters)."""


def config(recipe: Recipe) -> dict | None:
    """--speculative-config as a mapping; {} when it does not parse; None when the recipe has none."""
    value = recipe.serving.flags.get("speculative-config")
    if value is None:
        return None
    if isinstance(value, dict):
        return value
    try:
        found = json_value(str(value))
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def kind_of(run: BenchmarkRun) -> TextKind | None:
    """The kind of text a run sent, when it is one of the catalogue's (by the workload's dataset)."""
    if run.workload is None:
        return None
    return next((k for k in texts.TEXT_KINDS if run.workload.dataset == texts.dataset(k)), None)


def spec_summary(recipe: Recipe, runs: list[BenchmarkRun]) -> SpecSummary | None:
    """The paragraph's facts; None for a recipe without speculative decoding."""
    found = config(recipe)
    if found is None:
        return None
    tokens = found.get("num_speculative_tokens")
    measured: dict[TextKind, str] = {}
    unknown: list[str] = []
    for run in sorted(runs, key=lambda r: r.recorded_at):
        counted = any(lv.spec_decode is not None for lv in run.levels)
        kind = kind_of(run)
        if counted and kind is not None and run.complete:
            measured[kind] = run.recorded_at.date().isoformat()
        elif run.levels and not counted:
            described = run.workload.describe() if run.workload else "workload not stated"
            if described not in unknown:
                unknown.append(described)
    return SpecSummary(
        method=str(found["method"]) if "method" in found else None,
        tokens=tokens if isinstance(tokens, int) else None,
        measured=[(k, measured[k]) for k in recipe.sweep.texts if k in measured],
        not_measured=[k for k in recipe.sweep.texts if k not in measured],
        unknown=unknown,
    )
