"""A sparkrun recipe file (v2 or the legacy v1) -> the launch `catalogue new` builds a draft from, exactly as from a
pasted command: the rendered `command` is read as a paste (`vllm serve ...`), `container` is its image, `env` its
environment, `model_revision` its `--revision`, the node range its topology, `benchmark` its sweep.

A file that cannot become a launch is refused with one line naming the field (a runtime other than vLLM, no
command, an `include:` of another recipe, a `{field}` without a value). Every other field the catalogue cannot
honour is one line naming the file and the field; the draft is written without it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from catalogue.models.errors import CatalogueError, from_validation, yaml_line
from catalogue.models.yaml_files import parse_yaml
from catalogue.paste.launch import Launch, read_launch
from catalogue.paste.sparkrun_bench import benchmark_sweep
from catalogue.paste.sparkrun_format import (
    PLACEHOLDER,
    SPARKRUN_VERSION,
    SparkrunRecipe,
    TemplateTooLarge,
    unfilled,
)
from catalogue.policy.docker_run import DockerRun, DockerRunOptions

VLLM_RUNTIMES = ("", "vllm", "vllm-distributed", "vllm-ray", "eugr-vllm")
"""sparkrun runtimes that run `vllm serve` (an empty one is inferred from the command)."""
NOT_HONOURED = {
    "mods": "patches sparkrun applies to the container before the launch: the draft runs the image as it is",
    "pre_exec": "commands sparkrun runs before the launch: the draft runs none",
    "post_exec": "commands sparkrun runs after the server starts: the draft runs none",
    "post_commands": "commands sparkrun runs after the launch: the draft runs none",
    "builder": "how sparkrun builds the image: the draft names the image only (say how in serving.image_source)",
    "builder_config": "how sparkrun builds the image: the draft names the image only",
    "build_args": "v1: arguments of the eugr image build: the draft names the image only",
    "containers": "per-machine images: the draft runs `container` on every machine",
    "executor_config": "sparkrun's container settings: the draft's are serving.container.options",
    "max_nodes": "the range of machines sparkrun may use: the draft runs on min_nodes",
}


@dataclass
class SparkrunLaunch:
    """What a sparkrun recipe gives `catalogue new`."""

    launch: Launch
    model: str
    nodes: int
    nodes_line: int | None
    """Line of the field the machines come from (min_nodes, or v1's cluster_only)."""
    sweep: dict[str, Any] | None
    lines: list[str] = field(default_factory=list)
    """One per field not honoured: `file:line: field: why`."""
    notes: list[str] = field(default_factory=list)


def parse_sparkrun(text: str, label: str) -> SparkrunRecipe:
    """The file as sparkrun's format, or one line naming the field that is not."""
    data = parse_yaml(text, label)
    if not isinstance(data, dict):
        raise CatalogueError(label, "not a sparkrun recipe: the file is not a YAML mapping")
    try:
        return SparkrunRecipe.from_data(data)
    except ValidationError as exc:
        raise from_validation(label, exc, text) from None  # type: ignore[arg-type]


def _refuse_early(recipe: SparkrunRecipe, text: str, label: str) -> None:
    def refuse(key: str, message: str) -> None:
        raise CatalogueError(label, message, key, yaml_line(text, (key,)))

    if recipe.recipe_version not in ("1", "2"):
        refuse("recipe_version", f"{recipe.recipe_version!r}: sparkrun {SPARKRUN_VERSION} reads '1' and '2'")
    if "include" in recipe.other:
        refuse("include", "builds on another recipe, which the file does not hold: read the recipe it includes")
    if recipe.runtime not in VLLM_RUNTIMES:
        refuse("runtime", f"{recipe.runtime}: the catalogue serves with vLLM only")
    if not recipe.command:
        refuse("command", "none: sparkrun's runtime would build the serve command; the catalogue reads a written one")


def _field_lines(recipe: SparkrunRecipe, text: str, label: str) -> list[str]:
    """One line per field (besides the benchmark) the draft does not honour."""
    lines = []

    def line(key: str, why: str, loc: tuple = ()) -> None:
        lines.append(f"{label}:{yaml_line(text, loc or (key,))}: {key}: not honoured: {why}")

    low, high = recipe.nodes
    for key, value in recipe.other.items():
        if key in NOT_HONOURED and value not in (None, [], {}, ""):
            line(key, NOT_HONOURED[key])
        elif key not in NOT_HONOURED and key not in ("sparkrun_version", "min_sparkrun_version"):
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            line(key, f"a sparkrun setting the catalogue has no counterpart for ({shown})")
    if high is not None and high != low and recipe.max_nodes is not None:
        line("max_nodes", NOT_HONOURED["max_nodes"] + f" ({low})")
    if recipe.runtime == "vllm-ray" and low > 1:
        line("runtime", "vllm-ray: the runner starts a cluster with vLLM's own multi-node launcher, not Ray")
    used = set(PLACEHOLDER.findall(recipe.command or "")) | {
        field for value in recipe.defaults.values() for field in PLACEHOLDER.findall(str(value))
    }
    for name in recipe.defaults:
        if "{" + str(name) + "}" not in used:
            line(
                f"defaults.{name}",
                "the command does not use it (sparkrun's runtime may pass some itself; the draft does not)",
                ("defaults", name),
            )
    for name, value in recipe.env.items():
        if "{" in str(value):
            line(f"env.{name}", "a template sparkrun fills at launch: left out", ("env", name))
    if recipe.container:
        line(
            "container",
            "sparkrun starts it with its own docker options (GPUs, host network and IPC, the model cache): "
            "the draft has none: add what the image needs to serving.container.options",
        )
    return lines


def read_sparkrun(
    text: str, label: str, docker_options: DockerRunOptions, default_sweep: dict[str, Any]
) -> SparkrunLaunch:
    """The launch of a sparkrun recipe file, with a line per field it cannot honour (the sweep from its
    benchmark block, built on `default_sweep`; None when it has none)."""
    recipe = parse_sparkrun(text, label)
    _refuse_early(recipe, text, label)
    command_line = yaml_line(text, ("command",)) or 1
    try:
        command = recipe.rendered_command() or ""
    except TemplateTooLarge as exc:
        raise CatalogueError(label, f"the command template {exc}", "command", command_line) from None
    missing = unfilled(command)
    if missing:
        raise CatalogueError(
            label, f"{missing[0]} has no value in defaults (sparkrun would pass it as written)", "command", command_line
        )
    try:
        launch = read_launch(command, label, docker_options)
    except CatalogueError as exc:
        raise CatalogueError(label, exc.message, "command", command_line) from None
    launch.line = command_line
    if launch.docker is not None:
        raise CatalogueError(label, "runs `docker run` itself: sparkrun starts the container", "command", command_line)
    if recipe.container:
        launch.docker = DockerRun(image=recipe.container)
    launch.env = {**{k: str(v) for k, v in recipe.env.items() if "{" not in str(v)}, **launch.env}
    if recipe.model_revision and not any(w in ("--revision", "--code-revision") for w in launch.serve):
        launch.serve += ["--revision", recipe.model_revision]
    lines = _field_lines(recipe, text, label)
    sweep = None
    notes = [f"{label}: sparkrun recipe v{recipe.recipe_version} read (the format of sparkrun {SPARKRUN_VERSION})"]
    if recipe.benchmark is not None:
        sweep, said = benchmark_sweep(recipe.benchmark, default_sweep)
        lines += [f"{label}:{yaml_line(text, ('benchmark',))}: {s.replace(': ', ': not honoured: ', 1)}" for s in said]
        notes.append(
            f"{label}: benchmark: its levels are the sweep's; the runner measures them with `vllm bench serve` "
            "(random prompts), so its figures are not llama-benchy's"
        )
    description = recipe.metadata.get("description") or recipe.description
    if description:
        notes.append(f"{label}: the recipe says: {description!r} (write the summary in your own words)")
    nodes_line = yaml_line(text, ("min_nodes",) if "min_nodes" in text else ("cluster_only",))
    return SparkrunLaunch(launch, recipe.model, recipe.nodes[0], nodes_line, sweep, lines, notes)
