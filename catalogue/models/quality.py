"""Quality next to speed: the run file's `quality` section, the recipe's switch, the fixed accuracy items and
their scoring, and what tool-eval-bench's JSON report says. Pure: the runner (runner/measuring/quality.py) does the
I/O."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, NonNegativeFloat, model_validator

from catalogue.models.plausible import Count, Seconds
from catalogue.models.strict import Strict

TOOL_EVAL = "tool-eval-bench"
TOOL_EVAL_VERSION = "3.0.0"
"""The tool-calling check, pinned (noxfile.py TOOL_EVAL_BENCH installs the same)."""
TOOL_EVAL_SCENARIOS = ("TC-01", "TC-02", "TC-10", "TC-11", "TC-12")
"""The scenarios run by default: one-star and restraint scenarios of its core set, sized for a quick check."""

ACCURACY = "catalogue arithmetic"
ACCURACY_VERSION = "1"
"""The accuracy items' own version: a change of generator or prompt is a new version, not comparable."""
ACCURACY_ITEMS = 20
ACCURACY_SEED = 31


class QualitySetting(Strict):
    """A recipe's `sweep.quality`: the checks run after the sweep unless turned off with a reason."""

    enabled: bool = Field(True, description="Run the tool-calling and accuracy checks after the sweep.")
    reason: str | None = Field(
        None, description="Why the checks, or the tool-calling check, are off (required when either is false)."
    )
    tool_calling: bool = Field(
        True, description="Run the tool-calling check (the server needs a chat template and a tool parser)."
    )

    @model_validator(mode="after")
    def _reason(self) -> QualitySetting:
        if not (self.enabled and self.tool_calling) and not (self.reason or "").strip():
            raise ValueError("enabled: false or tool_calling: false needs a reason (shown on the page)")
        return self


class QualityCheck(Strict):
    """One check against the run's own server: what ran, how many items, the score and the time it took."""

    kind: Literal["tool-calling", "accuracy"] = Field(description="What the check measures.")
    tool: str = Field(min_length=1, description="The tool or item set that ran the check.")
    version: str = Field(min_length=1, description="Its version (pinned).")
    items: Count = Field(description="Items (scenarios or questions) asked.")
    passed: Count | None = Field(None, description="Items answered correctly; null when the check failed.")
    score: NonNegativeFloat | None = Field(
        None, le=100, description="The tool's score, 0-100 (accuracy: per cent exact matches); null when it failed."
    )
    took_s: Seconds = Field(description="Wall time of the check, seconds.")
    method: str = Field(min_length=1, description="How it was scored, in one line.")
    error: str | None = Field(None, description="Why the check gave no score (then score is null).")
    raw: str | None = Field(None, description="The tool's own report, relative to the runs folder.")


class Quality(Strict):
    """The run's quality section: checks run against the same server in the same boot, after the sweep."""

    checks: list[QualityCheck] = Field(default_factory=list, description="Each check that ran.")
    skipped: str | None = Field(None, description="Why no check ran (the recipe turned them off, with its reason).")
    random_weights: bool = Field(
        False, description="The model had random weights (--load-format dummy): a score says nothing of any model."
    )

    def check(self, kind: str) -> QualityCheck | None:
        """The check of that kind, if it ran."""
        return next((c for c in self.checks if c.kind == kind), None)


def random_weights(flags: Mapping[str, Any]) -> bool:
    """Whether the serve flags make vLLM fill the weights with random values."""
    return str(flags.get("load-format", "")).strip() == "dummy"


class Item(Strict):
    """One accuracy question: a prompt for /v1/completions and the exact answer expected."""

    prompt: str = Field(description="The completion prompt.")
    answer: str = Field(description="The expected answer, compared with the first line of the completion.")


SHOTS = ((12, 7, "+"), (9, 4, "*"), (30, 18, "-"))
"""Worked examples before every question: the format a base model continues."""


def _solve(a: int, b: int, op: str) -> int:
    return a + b if op == "+" else a - b if op == "-" else a * b


def accuracy_items(n: int = ACCURACY_ITEMS, seed: int = ACCURACY_SEED) -> list[Item]:
    """`n` arithmetic questions drawn with a fixed seed: the same items on every machine, no download, no licence.
    Each prompt carries three worked examples; the answer is an integer."""
    rng = random.Random(seed)
    shots = "".join(f"Q: {a} {op} {b} = ?\nA: {_solve(a, b, op)}\n\n" for a, b, op in SHOTS)
    items = []
    for _ in range(n):
        op = rng.choice("+-*")
        a, b = rng.randint(2, 99), rng.randint(2, 99 if op != "*" else 12)
        items.append(Item(prompt=f"{shots}Q: {a} {op} {b} = ?\nA:", answer=str(_solve(a, b, op))))
    return items


def answer_of(completion: str) -> str:
    """What a completion answers: its first line, without surrounding spaces."""
    return completion.strip().split("\n", 1)[0].strip()


def exact_matches(items: list[Item], completions: list[str]) -> int:
    """How many completions answer their item exactly."""
    if len(items) != len(completions):
        raise ValueError(f"{len(completions)} completions for {len(items)} items")
    return sum(answer_of(text) == item.answer for item, text in zip(items, completions))


def accuracy_check(items: list[Item], completions: list[str], took_s: float) -> QualityCheck:
    """The accuracy check's record from the completions the server gave."""
    passed = exact_matches(items, completions)
    return QualityCheck(
        kind="accuracy",
        tool=ACCURACY,
        version=ACCURACY_VERSION,
        items=len(items),
        passed=passed,
        score=round(100 * passed / len(items), 1) if items else None,
        took_s=round(took_s, 2),
        method=f"exact match of the first line, /v1/completions at temperature 0, {len(SHOTS)} worked examples",
    )


REJECTED = "Endpoint rejected the request"
"""How tool-eval-bench 3.0.0 summarises a scenario the server refused before the model produced anything."""


def tool_eval_check(report: Mapping[str, Any], took_s: float, raw: str | None) -> QualityCheck:
    """The tool-calling check's record from tool-eval-bench's JSON report (--json-file: `final_score`, and
    `scores.scenario_results` with each scenario's status). A scenario the server refused (an HTTP error before the
    model answered) says nothing of the model: then the check gives no score."""
    scores = report.get("scores")
    scenarios = scores.get("scenario_results") if isinstance(scores, Mapping) else None
    score = report.get("final_score")
    if not isinstance(scenarios, list) or not isinstance(score, int | float) or isinstance(score, bool):
        raise ValueError("tool-eval-bench report: no final_score or scores.scenario_results")
    results = [s for s in scenarios if isinstance(s, Mapping)]
    refused = [s for s in results if REJECTED in str(s.get("summary", ""))]
    if refused:
        why = str(refused[0].get("summary", "")).split("\n", 1)[0][:200]
        raise ValueError(f"the server refused {len(refused)} of {len(results)} scenarios: {why}")
    return QualityCheck(
        kind="tool-calling",
        tool=TOOL_EVAL,
        version=TOOL_EVAL_VERSION,
        items=len(results),
        passed=sum(1 for s in results if str(s.get("status", "")).lower() == "pass"),
        score=float(score),
        took_s=round(took_s, 2),
        method="tool-eval-bench's own final score (0-100) over its scenarios, temperature 0",
        raw=raw,
    )


def failed_check(kind: Literal["tool-calling", "accuracy"], items: int, took_s: float, error: str) -> QualityCheck:
    """A check that ran but gave no score: it claims no figure."""
    tool, version = (TOOL_EVAL, TOOL_EVAL_VERSION) if kind == "tool-calling" else (ACCURACY, ACCURACY_VERSION)
    return QualityCheck(
        kind=kind,
        tool=tool,
        version=version,
        items=items,
        took_s=round(took_s, 2),
        method="not scored",
        error=error.splitlines()[0][:300] if error else "failed",
    )
