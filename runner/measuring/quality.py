"""The quality step of a refresh: after the sweep, against the same server in the same boot, the fixed accuracy items
(/v1/completions, temperature 0) and tool-eval-bench's tool-calling scenarios. A check that fails records why and
claims no score; it never fails the refresh."""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from catalogue.models import quality as q
from catalogue.models.errors import CatalogueError
from catalogue.models.recipe import Recipe
from runner.hosts.child_env import child_env
from runner.hosts.raw_files import keep_json, open_append, read_reply, reply_text
from runner.measuring.tool_command import tool_command

if TYPE_CHECKING:
    from runner.planning.plan import Plan
    from runner.state import Boot

TOOL_EVAL_TIMEOUT_S = 600
"""The whole tool-calling check; a stalled one is ended and recorded as failed."""


def served_model(plan: Plan, recipe: Recipe) -> str:
    """The model name the endpoint answers to (the router's when there is one)."""
    if plan.router is not None:
        return plan.router_model
    return str(recipe.serving.flags.get("served-model-name", recipe.model_arg))


def complete(endpoint: str, key: str, model: str, prompt: str, timeout_s: float = 120) -> str:
    """One greedy completion of a few tokens, up to the first line break; a reply that is too large, too deep or of
    another shape is a CatalogueError naming the URL."""
    body = {"model": model, "prompt": prompt, "max_tokens": 8, "temperature": 0, "stop": ["\n"]}
    request = urllib.request.Request(
        f"{endpoint}/v1/completions",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        return reply_text(read_reply(response, request.full_url), request.full_url)


def accuracy(endpoint: str, key: str, model: str) -> q.QualityCheck:
    """The fixed arithmetic items against the server, scored by exact match."""
    items = q.accuracy_items()
    started = time.monotonic()
    try:
        answers = [complete(endpoint, key, model, item.prompt) for item in items]
    except (OSError, ValueError, CatalogueError) as exc:
        return q.failed_check("accuracy", len(items), time.monotonic() - started, f"{type(exc).__name__}: {exc}")
    return q.accuracy_check(items, answers, time.monotonic() - started)


def tool_eval_command() -> str | None:
    """tool-eval-bench: $CATALOGUE_TOOL_EVAL, else on PATH or beside this Python; None when not installed."""
    return tool_command("CATALOGUE_TOOL_EVAL", "tool-eval-bench")


def tool_eval_argv(command: str, endpoint: str, model: str, report: Path, max_tokens: int | None = None) -> list[str]:
    """tool-eval-bench's few scenarios against the endpoint, greedy, its JSON report in `report`; `max_tokens` caps
    each answer (it asks for 16384 by default, which a server with a shorter context refuses)."""
    cap = ["--backend-kwargs", json.dumps({"max_tokens": max_tokens})] if max_tokens else []
    return [
        command, "run", "--base-url", endpoint, "--model", model, "--backend", "vllm",
        "--scenarios", *q.TOOL_EVAL_SCENARIOS, "--temperature", "0", "--seed", "0", "--timeout", "60",
        "--max-turns", "4", "--no-warmup", "--no-probe-engine", "--no-live", "--json-file", str(report), *cap,
    ]  # fmt: skip


def answer_cap(recipe: Recipe) -> int | None:
    """Half the recipe's --max-model-len when that is under 32768 tokens (the rest is left for the prompt); None
    leaves tool-eval-bench's own 16384."""
    try:
        length = int(str(recipe.serving.flags.get("max-model-len", "0")).lower().replace("k", "000"))
    except ValueError:
        return None
    return length // 2 if 0 < length < 32768 else None


def tool_calling(
    endpoint: str, key: str, model: str, raw_dir: Path, relative: str, max_tokens: int | None = None
) -> q.QualityCheck:
    """Run tool-eval-bench in a scratch folder (it keeps a database and reports in its working folder); keep its
    JSON report and log in the run's raw folder. The report is written in the scratch folder and copied in (the
    benchmark client's container can write the raw folder: a link planted there is replaced, never written
    through); the log is opened with runner.hosts.raw_files."""
    items = len(q.TOOL_EVAL_SCENARIOS)
    command = tool_eval_command()
    if command is None:
        return q.failed_check("tool-calling", items, 0.0, "tool-eval-bench is not installed (set CATALOGUE_TOOL_EVAL)")
    log = raw_dir / "tool-eval.log"
    env = child_env({"TOOL_EVAL_API_KEY": key})  # by environment: never on a command line others can read
    started = time.monotonic()
    try:
        out_file = open_append(log)
    except CatalogueError as exc:
        return q.failed_check("tool-calling", items, 0.0, str(exc))
    with tempfile.TemporaryDirectory(prefix="tool-eval-") as scratch, out_file as out:
        report = Path(scratch) / "report" / "tool-eval.json"
        report.parent.mkdir()
        try:
            proc = subprocess.run(
                tool_eval_argv(command, endpoint, model, report, max_tokens),
                cwd=scratch,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=TOOL_EVAL_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return q.failed_check("tool-calling", items, time.monotonic() - started, f"{type(exc).__name__}: {exc}")
        took = time.monotonic() - started
        try:
            data = keep_json(report, raw_dir / "tool-eval.json")
            if not isinstance(data, dict):
                raise ValueError("tool-eval.json is not a JSON object")
            if proc.returncode != 0 or "error" in data:
                raise ValueError(f"exit {proc.returncode}: {data.get('error', 'see tool-eval.log')}")
            return q.tool_eval_check(data, took, f"{relative}/tool-eval.json")
        except (OSError, ValueError, CatalogueError) as exc:
            return q.failed_check("tool-calling", items, took, f"tool-eval-bench gave no score ({exc})")


def run_checks(plan: Plan, recipe: Recipe, key: str) -> q.Quality:
    """Both checks against the plan's endpoint, or the recipe's reason for running none."""
    setting = recipe.sweep.quality
    rnd = q.random_weights(recipe.serving.flags)
    if not setting.enabled:
        return q.Quality(skipped=setting.reason, random_weights=rnd)
    model = served_model(plan, recipe)
    checks = [accuracy(plan.endpoint, key, model)]
    if setting.tool_calling:
        checks.append(tool_calling(plan.endpoint, key, model, plan.raw_dir, plan.stamp, answer_cap(recipe)))
    else:
        checks.append(
            q.failed_check("tool-calling", 0, 0.0, f"turned off by the recipe: {setting.reason or 'no reason'}")
        )
    return q.Quality(checks=checks, random_weights=rnd)


def step_quality(r: Boot) -> None:
    """The refresh step after the sweep (and the capacity search): both checks, then a note of their time."""
    r.bar.show(len(r.progress.levels), "quality checks")
    r.progress.quality = run_checks(r.plan, r.entry.recipe, r.key)
    for check in r.progress.quality.checks:
        got = (
            f"{check.score:g} ({check.passed}/{check.items})" if check.score is not None else f"no score: {check.error}"
        )
        r.progress.note(f"quality {check.kind}", f"quality {check.kind}: {got} in {check.took_s:.1f} s")
