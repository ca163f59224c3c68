"""Flags as argv words, shell text (every word quoted with shlex), and the `vllm bench serve` argv of a level.

The server's launch itself is rendered in one place: catalogue.models.topology (ServerLaunch.argv)."""

from __future__ import annotations

import json
import shlex
from typing import Any

from catalogue.models import texts
from catalogue.models.recipe import FlagValue, Recipe
from catalogue.models.slo import PERCENTILES
from catalogue.models.texts import TextKind
from catalogue.models.workload import Workload


def flag_words(name: str, value: FlagValue) -> list[str]:
    """argv words for one flag: a switch alone, a word per item for a list (an option that takes several values,
    as `--served-model-name a b`), JSON for a mapping, text otherwise."""
    option = f"--{name}"
    if value is True:
        return [option]
    if isinstance(value, list):
        return [option, *(str(item) for item in value)]
    if isinstance(value, dict):
        return [option, json.dumps(value, separators=(",", ":"))]
    return [option, str(value)]


def flags_argv(flags: dict[str, Any]) -> list[str]:
    """argv words for every flag, in recipe order."""
    return [word for name, value in flags.items() for word in flag_words(name, value)]


def shell_command(argv: list[str]) -> str:
    """A multi-line shell command: a line per option; splitting back gives `argv` exactly."""
    lines: list[list[str]] = [[]]
    for word in argv:
        if word.startswith("-") and lines[-1]:
            lines.append([])
        lines[-1].append(word)
    return " \\\n  ".join(" ".join(quote(word) for word in line) for line in lines)


def quote(word: str) -> str:
    """shlex.quote, except that a leading `~/` stays bare so the shell puts the reader's home there."""
    if word.startswith("~/") and len(word) > 2:
        return "~/" + shlex.quote(word[2:])
    return shlex.quote(word)


def split_command(text: str) -> list[str]:
    """Inverse of `shell_command`: join backslash-newline continuations as a shell does, then shlex.split."""
    return shlex.split(text.replace("\\\n", " "))


def prompts_for(recipe: Recipe, concurrency: int) -> int:
    """Requests at one level: enough for every stream to run several in a row."""
    sweep = recipe.sweep
    return max(sweep.prompts_per_level, concurrency * sweep.prompts_per_stream)


def sweep_workload(
    recipe: Recipe, tool_version: str | None = None, text: TextKind = "random", prompt_tokens: int | None = None
) -> Workload:
    """The workload `bench_argv` sends, as the run file records it (the key comparisons group by); a fixed text's
    prompt length is the mean the client counted (`prompt_tokens`), the random one's the recipe's."""
    sweep = recipe.sweep
    return Workload(
        tool="vllm bench serve",
        tool_version=tool_version,
        dataset=texts.dataset(text),
        input_len=sweep.input_len if text == "random" else prompt_tokens,
        output_len=sweep.output_len,
        prompts_per_level=f"max({sweep.prompts_per_level}, {sweep.prompts_per_stream} × concurrency)"
        + (f", more if a level lasts under {sweep.min_level_s:g} s" if sweep.min_level_s else ""),
        repetitions=1,
        seeds="per level",
        simulator=recipe.serving.simulator.profile if recipe.serving.simulator else None,
    )


def bench_argv(
    recipe: Recipe,
    concurrency: int,
    base_url: str = "http://127.0.0.1:8000",
    input_len: int | None = None,
    prompts: int | None = None,
    text: TextKind = "random",
    texts_dir: str = ".",
) -> list[str]:
    """`vllm bench serve` for one closed-loop level of the recipe's sweep: random prompts of fixed lengths, or the
    catalogue's fixed `text` from its file in `texts_dir` (as the client sees that folder)."""
    words = _client_words(recipe, base_url, input_len or recipe.sweep.input_len)
    if text != "random":
        at = words.index("--dataset-name")
        words[at:] = [
            "--dataset-name", "custom", "--dataset-path", f"{texts_dir}/{texts.file_name(text)}",
            "--custom-output-len", str(recipe.sweep.output_len), "--skip-chat-template",
        ]  # fmt: skip
    return [
        *words,
        "--num-prompts",
        str(prompts or prompts_for(recipe, concurrency)),
        "--max-concurrency",
        str(concurrency),
        "--num-warmups",
        str(recipe.sweep.warmups),
        *_common_tail("50,90,99"),
        "--save-detailed",  # per-request samples: each percentile's n and interval (catalogue.stats.request_samples)
    ]


def rate_bench_argv(recipe: Recipe, rate: float, base_url: str = "http://127.0.0.1:8000") -> list[str]:
    """`vllm bench serve` for one open-loop level: requests arrive at `rate` req/s (no cap on requests in flight),
    with the recipe's burstiness, p95 among the percentiles, and vLLM's own goodput under the recipe's SLO."""
    open_loop = recipe.sweep.open_loop
    assert open_loop is not None, "a rate level needs sweep.open_loop"
    slo = recipe.sweep.slo
    percentiles = ",".join(str(p) for p in PERCENTILES)
    return [
        *_client_words(recipe, base_url, recipe.sweep.input_len),
        "--num-prompts",
        str(open_loop.requests_at(rate)),
        "--request-rate",
        f"{rate:g}",
        "--burstiness",
        f"{open_loop.burstiness:g}",
        "--num-warmups",
        str(recipe.sweep.warmups),
        *_common_tail(percentiles),
        *(slo.goodput_args() if slo else []),
        "--save-detailed",  # per-request times: the steady rate and the early-stopping counts (request_samples.py)
    ]


def _client_words(recipe: Recipe, base_url: str, input_len: int) -> list[str]:
    model = recipe.served_name
    return [
        "vllm",
        "bench",
        "serve",
        "--backend",
        "openai",
        "--base-url",
        base_url,
        "--endpoint",
        "/v1/completions",
        "--model",
        str(model),
        "--tokenizer",
        recipe.model_arg,
        "--dataset-name",
        "random",
        "--random-input-len",
        str(input_len),
        "--random-output-len",
        str(recipe.sweep.output_len),
    ]


def _common_tail(percentiles: str) -> list[str]:
    return [
        "--ready-check-timeout-sec",
        "0",
        "--ignore-eos",
        "--percentile-metrics",
        "ttft,tpot,itl,e2el",
        "--metric-percentiles",
        percentiles,
    ]
