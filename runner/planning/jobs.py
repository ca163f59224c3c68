"""The benchmark client's jobs: one `vllm bench serve` per concurrency level, long-context length and open-loop
rate, each saving its raw JSON; the capacity search's probes are made from a parse-only template."""

from __future__ import annotations

from dataclasses import dataclass, replace

from catalogue.models.launch import bench_argv, rate_bench_argv
from catalogue.models.loading import Entry
from catalogue.models.recipe import Recipe
from catalogue.models.slo import rate_name
from catalogue.models.texts import TextKind

LEVEL_SEED = 1
"""The first level's `--seed`; each next job of the plan takes the next one."""
PROBE_SEED = 10_000
"""A capacity probe's `--seed`: this plus its number."""


@dataclass(frozen=True)
class Job:
    """One `vllm bench serve` run: a concurrency level, a long-context prompt length at c=1, or an open-loop rate."""

    name: str
    concurrency: int | None
    """Streams of a closed-loop level; None for an open-loop rate."""
    prompt_tokens: int | None
    argv: list[str]
    min_s: float = 0.0
    """Shortest benchmark window; the client runs the level again with more prompts when it is shorter."""
    rate: float | None = None
    """Offered request rate (req/s) of an open-loop level."""
    probe: int | None = None
    """The capacity search's probe number."""
    parse_only: bool = False
    """Checked by the client before any server starts, never run: the template of the search's probes."""
    metrics_url: str | None = None
    """The server's /metrics, read before and after the level (its speculative decoding and latency histograms)."""
    text: TextKind = "random"
    """The kind of text it sends (catalogue.models.texts): each kind's levels are a run file of their own."""

    def payload(self) -> dict:
        """What the benchmark client is given (jobs.json, or a `job` line)."""
        found = {"name": self.name, "argv": self.argv, "min_s": self.min_s, "parse_only": self.parse_only}
        return {**found, "metrics_url": self.metrics_url} if self.metrics_url else found


def rate_text(rate: float) -> str:
    """A rate as the client is given it: exact (the shortest text that reads back as the same float; `4`, not `4.0`).
    vLLM's client records what it read, and the search pools a probe with the rate it re-measures by that float:
    written with `:g` (six digits), 3.14159265 came back as 3.14159 and never pooled with the rate it repeated."""
    return repr(float(rate)).removesuffix(".0")


def rate_job(template: Job, name: str, rate: float, requests: int, probe: int | None = None, seed_base: int = 0) -> Job:
    """The template's command at another rate: `--request-rate`, `--num-prompts` and the result file set; a probe's
    `--seed` is PROBE_SEED + `seed_base` + its number."""
    argv = list(template.argv)
    settings = [
        ("--request-rate", rate_text(rate)),
        ("--num-prompts", str(requests)),
        ("--result-filename", f"{name}.json"),
    ]
    if probe is not None and "--seed" in argv:
        settings.append(("--seed", str(PROBE_SEED + seed_base + probe)))
    for option, value in settings:
        argv[argv.index(option) + 1] = value
    return Job(name, None, None, argv, 0.0, rate=rate, probe=probe, metrics_url=template.metrics_url)


def level_jobs(entry: Entry, recipe: Recipe, endpoint: str, raw: str, stamp: str, capacity: bool) -> list[Job]:
    """Every concurrency level, every long-context prompt length at c=1, every open-loop rate, each saving its raw
    JSON; with `capacity`, the parse-only template of the search's probes."""

    def save(name: str) -> list[str]:
        return [
            "--save-result",
            "--result-dir",
            raw,
            "--result-filename",
            f"{name}.json",
            "--metadata",
            f"recipe={entry.id}",
            f"run={stamp}",
        ]

    jobs = []
    for text in recipe.sweep.texts:
        for c in recipe.sweep.concurrency:
            name = level_name(recipe, text, c)
            argv = bench_argv(recipe, c, endpoint, text=text, texts_dir=raw)
            jobs.append(Job(name, c, None, [*argv, *save(name)], recipe.sweep.min_level_s, text=text))
    jobs += [
        Job(
            f"ctx{n}",
            1,
            n,
            [*bench_argv(recipe, 1, endpoint, input_len=n, prompts=recipe.sweep.prompts_per_stream), *save(f"ctx{n}")],
        )
        for n in recipe.sweep.long_context
    ]
    if recipe.topology.kind != "replicas":
        # the server's own counters and clocks (behind a router, several servers share the traffic: not read)
        jobs = [replace(job, metrics_url=f"{endpoint}/metrics") for job in jobs]
    open_loop = recipe.sweep.open_loop
    if open_loop is None:
        return seeded(jobs)
    rates = list(open_loop.rates)
    template_rate = rates[0] if rates else 1.0
    template = Job("probe-template", None, None, [*rate_bench_argv(recipe, template_rate, endpoint), *save("probe")])
    template = replace(template, metrics_url=jobs[0].metrics_url if jobs else None)
    jobs += [rate_job(template, rate_name(r), r, open_loop.requests_at(r)) for r in rates]
    if capacity:
        jobs.append(replace(template, parse_only=True))
    return seeded(jobs)


def level_name(recipe: Recipe, text: TextKind, concurrency: int) -> str:
    """A closed-loop level's job name: `c4` for the first kind of text (the main run file), `prose-c4` for another."""
    return f"c{concurrency}" if text == recipe.sweep.texts[0] else f"{text}-c{concurrency}"


def shift_seeds(jobs: list[Job], base: int) -> list[Job]:
    """Every job's `--seed` moved by `base` (`refresh --seed-base`)."""
    if not base:
        return jobs
    out = []
    for job in jobs:
        argv = list(job.argv)
        if "--seed" in argv:
            at = argv.index("--seed") + 1
            argv[at] = str(int(argv[at]) + base)
        out.append(replace(job, argv=argv))
    return out


def seeded(jobs: list[Job]) -> list[Job]:
    """A distinct `--seed` for each job, in plan order (the same on a resume): no level replays another's prompts,
    which the prefix cache of a recipe would otherwise serve from memory."""
    return [replace(job, argv=[*job.argv, "--seed", str(LEVEL_SEED + i)]) for i, job in enumerate(jobs)]
