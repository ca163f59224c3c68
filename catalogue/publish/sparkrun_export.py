"""A catalogue recipe as a sparkrun recipe (format v2, sparkrun 0.4.2): model, revision, runtime, the pinned
container, defaults, env and the command, so a Spark owner can run it with `sparkrun run FILE`.

Every flag with a plain value (a number, or text a shell reads as one word) is a default, written into the command
as `{name}` (sparkrun's own names for the ones its placement reads: `tensor_parallel`, `pipeline_parallel`; the
rest with underscores); switches, JSON values, several values and other text stay literal in the command, quoted
for the shell. What sparkrun's format has no place for is one comment line at the top of the file, naming the
field. The page offers the file (`sparkrun/<id>.yaml` beside the pages and api/v1)."""

from __future__ import annotations

import shlex
from typing import Any

from catalogue.models.image_refs import digest_of
from catalogue.models.launch import flag_words, quote
from catalogue.models.loading import Entry
from catalogue.models.terminal import printable
from catalogue.models.yaml_files import dump_yaml

SPARKRUN_DIR = "sparkrun"
PLACEMENT_NAMES = {"tensor-parallel-size": "tensor_parallel", "pipeline-parallel-size": "pipeline_parallel"}
"""sparkrun's names for the flags its placement reads from the defaults."""


def sparkrun_path(recipe_id: str) -> str:
    """Where the site (and `catalogue export`) puts a recipe's sparkrun file."""
    return f"{SPARKRUN_DIR}/{recipe_id}.yaml"


def pinned_image(entry: Entry) -> tuple[str | None, str | None]:
    """(the image, how it is pinned): a digest as written, else the registry digest the newest measured run
    recorded for it, else the image as written (said)."""
    image = entry.recipe.serving.image
    if image is None or "@sha256:" in image:
        return image, None
    for run in reversed(entry.runs):
        for host in getattr(run.provenance, "hosts", []):
            if host.image_digest and digest_of(host.image_digest, image):
                return host.image_digest, f"{image} pinned to the digest its run of {run.recorded_at:%Y-%m-%d} recorded"
    return image, f"{image} is not pinned by digest, and no run recorded its registry digest"


def _plain(value: Any) -> bool:
    """A value sparkrun can fill into the command as it is: a number, or text the shell reads as one word."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return False
    text = str(value)
    return bool(text) and shlex.quote(text) == text and "{" not in text and "}" not in text


def _command(entry: Entry) -> tuple[str, dict[str, Any]]:
    """The command template (a line per option, as pasted) and the defaults it reads."""
    recipe = entry.recipe
    defaults: dict[str, Any] = {}
    lines = [["vllm", "serve", quote(recipe.serving.model_path) if recipe.serving.model_path else "{model}"]]
    for name, value in recipe.serving.flags.items():
        if name == "revision" and isinstance(value, str):
            lines.append(["--revision", "{model_revision}"])
        elif _plain(value):
            key = PLACEMENT_NAMES.get(name, name.replace("-", "_").replace(".", "_"))
            defaults[key] = value
            lines.append([f"--{name}", "{" + key + "}"])
        else:
            lines.append([quote(word) for word in flag_words(name, value)])
    return " \\\n  ".join(" ".join(line) for line in lines) + "\n", defaults


SPARKRUN_CACHE_ENV = frozenset(
    {"HF_HOME", "HF_HUB_CACHE", "XDG_CACHE_HOME", "VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"}
)
"""Variables naming caches that sparkrun's runtime points at its own mounts after a recipe's env is merged (its
validator's `overridden-cache-env`): a recipe's value would be discarded, so it is not carried over."""


def _not_carried(entry: Entry, pinning: str | None) -> list[str]:
    """One line per field of the catalogue recipe the sparkrun file does not hold."""
    serving, topology = entry.recipe.serving, entry.recipe.topology
    lines = [f"container: {pinning}"] if pinning else []
    if serving.container and serving.container.options:
        options = " ".join(serving.container.options)
        lines.append(f"serving.container.options: not carried ({options}): sparkrun starts the container its own way")
    caches = sorted(set(serving.env) & SPARKRUN_CACHE_ENV)
    if caches:
        lines.append(
            f"serving.env: {', '.join(caches)}: sparkrun sets the caches to its own mounts (it warns otherwise)"
        )
    if serving.env_from_host:
        names = ", ".join(serving.env_from_host)
        lines.append(f"serving.env_from_host: {names}: set where sparkrun runs (the catalogue passes them by name)")
    if topology.kind == "replicas":
        lines.append(
            f"topology: {topology.replicas} replicas behind {topology.router} ({topology.routing_strategy}): this file "
            "runs one replica's server on one machine; sparkrun has no router of replicas"
        )
    return [printable(" ".join(line.split())) for line in lines]  # a comment line each: no control character


def sparkrun_recipe(entry: Entry) -> tuple[str, list[str]]:
    """The sparkrun recipe file's text, and a line per field not carried over (also its header comments)."""
    recipe = entry.recipe
    image, pinning = pinned_image(entry)
    command, defaults = _command(entry)
    data: dict[str, Any] = {"recipe_version": "2", "model": recipe.model}
    revision = recipe.serving.flags.get("revision")
    if isinstance(revision, str):
        data["model_revision"] = revision
    data["runtime"] = "vllm"
    nodes = recipe.topology.nodes if recipe.topology.kind == "cluster" else 1
    data |= {"min_nodes": nodes, "max_nodes": nodes} if nodes > 1 else {"max_nodes": 1}
    if image:
        data["container"] = image
    data["metadata"] = {"description": recipe.title}
    data["defaults"] = defaults
    env = {k: v for k, v in recipe.serving.env.items() if k not in SPARKRUN_CACHE_ENV}
    if env:
        data["env"] = env
    lines = _not_carried(entry, pinning)
    header = [
        f"# sparkrun recipe (format v2) of the catalogue recipe {entry.id}, written by `catalogue export --sparkrun`.",
        "# Run it with `sparkrun run <this file>`; validate it with `sparkrun recipe validate <this file>`.",
        *(f"# Not carried over: {line}" for line in lines),
    ]
    block = "command: |\n" + "".join(f"  {line}\n" for line in command.splitlines())  # as sparkrun's recipes
    return "\n".join(header) + "\n" + dump_yaml(data) + block, lines


def sparkrun_files(entries: list[Entry], kept: dict[str, tuple[Entry, str]] | None = None) -> dict[str, str]:
    """Path (relative to the site root) -> text of the sparkrun file of every published recipe. With `kept` (what a
    `mkdocs serve` process keeps: recipe id -> entry, text), a recipe whose entry is the object of the last call is
    not written again (catalogue.site.build.Rebuilds keeps an entry while its files are unchanged)."""
    texts = {}
    for entry in sorted((e for e in entries if e.recipe.publish), key=lambda e: e.id):
        known = kept.get(entry.id) if kept is not None else None
        texts[entry.id] = (entry, known[1] if known and known[0] is entry else sparkrun_recipe(entry)[0])
    if kept is not None:
        kept.clear()
        kept.update(texts)
    return {sparkrun_path(recipe_id): text for recipe_id, (_, text) in texts.items()}
