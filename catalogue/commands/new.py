"""`catalogue new ID --from-command FILE|- [--service NAME]`: read the launch (a shell paste, or one service of a
docker-compose file) -> read its flags with vLLM's parser data -> build the recipe -> check it as `validate` does
-> write recipe.yaml (schema line, TODO markers for the prose).

The run policy applies as in `validate`: a secret is never written (the variable goes to `serving.env_from_host`,
and the value is masked in every line printed); each option that needs the owner's consent is declared with a TODO
reason; what the catalogue never runs stays in the draft (publish: false), one line each saying what must change,
and the exit code is 1."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from catalogue.flags.checkers import ArgvChecker
from catalogue.flags.select import image_checker, upstream_checker, validate_entries
from catalogue.models.atomic import write_text
from catalogue.models.bounded import MAX_YAML_BYTES, check_size, read_bounded
from catalogue.models.errors import CatalogueError, from_validation, yaml_line
from catalogue.models.loading import RECIPE_FILE, RECIPE_ID, Entry, parse_recipe, recipe_folders
from catalogue.models.platform import Platform, UnknownPlatform, load_platform
from catalogue.models.recipe import Recipe
from catalogue.models.yaml_files import dump_yaml
from catalogue.paste.compose import looks_like_compose, read_compose
from catalogue.paste.launch import Launch, read_launch
from catalogue.paste.secrets import pasted_secrets, take_secrets
from catalogue.paste.serve_flags import ServeFlags, read_serve
from catalogue.paste.sparkrun import SparkrunLaunch, read_sparkrun
from catalogue.policy.check import check_launch, check_recipe_file, context_for
from catalogue.policy.docker_run import DockerRun, DockerRunOptions
from catalogue.policy.secret_scan import mask, redact, scan_text

HF_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
PER_NODE = ("nnodes", "node-rank", "master-addr", "headless")
"""Flags the runner sets per node of a cluster; the recipe keeps the cluster's shape instead."""
DEFAULT_SWEEP = {"concurrency": [1, 2, 4, 8, 16, 32, 64], "input_len": 1024, "output_len": 128, "prompts_per_level": 32}
HEADER = """\
# yaml-language-server: $schema=../../schemas/recipe.schema.json
# Written by `catalogue new` from {source}. Fill in every TODO, then set `publish: true`:
# `catalogue validate` refuses a published recipe that still has one.
"""


CONSENT_TODO = "TODO: why this recipe needs it (the owner must allow it to run the recipe)."


def consent_todo(data: dict[str, Any], label: str) -> None:
    """Declare each option the policy lets run only with consent, with a TODO reason the person fills in."""
    serving = data["serving"]
    found = check_launch(
        serving.get("container", {}).get("options", []),
        serving.get("env", {}),
        serving.get("flags", {}),
        serving.get("image"),
        None,
        source=label,
        env_from_host=serving.get("env_from_host", []),
        context=context_for(draft_platform(data)),
        model=serving.get("model_path") or data.get("model"),
    )
    names = list(dict.fromkeys(f.option for f in found if f.cls == "consent"))
    if names:
        serving["consent"] = [{"option": name, "reason": CONSENT_TODO} for name in names]


def draft_platform(data: dict[str, Any]) -> Platform | None:
    """The platform profile the draft's hardware names, if there is one."""
    try:
        return load_platform(str(data.get("hardware", {}).get("platform", "")))
    except (UnknownPlatform, CatalogueError):
        return None


def read_source(source: str) -> tuple[str, str]:
    """(text, label) of a file, or of standard input for '-'."""
    if source == "-":
        text = sys.stdin.read(MAX_YAML_BYTES + 1)
        check_size(text, "<stdin>", MAX_YAML_BYTES)
        return text, "<stdin>"
    return read_bounded(Path(source), MAX_YAML_BYTES), source


def launch_model(launch: Launch) -> str | None:
    """The model word of the launch's `vllm serve` (None when it starts with a flag)."""
    return launch.serve[0] if launch.serve and not launch.serve[0].startswith("-") else None


def read_flags(launch: Launch, checker: ArgvChecker, label: str) -> ServeFlags:
    """The serve flags, read with the upstream snapshot (and the image's, when one is committed)."""
    image = launch.docker.image if launch.docker else None
    in_image = image_checker(image)
    return read_serve(
        launch.serve, checker.snapshot, in_image.snapshot if in_image else None, image is not None, label, launch.line
    )


def hardware_like(folders: dict[str, Path], platform: str) -> dict[str, Any]:
    """The hardware block of the first recipe (by id) on `platform`, for one node."""
    for recipe_id in sorted(folders):
        recipe = parse_recipe(folders[recipe_id] / RECIPE_FILE)
        if recipe.hardware.platform == platform:
            hardware = recipe.hardware.model_dump(exclude_none=True)
            hardware.pop("interconnect", None)
            return {**hardware, "nodes": 1}
    raise CatalogueError(platform, "no recipe on this platform to copy the hardware from (--platform)")


def recipe_data(
    launch: Launch,
    serve: ServeFlags,
    model: str | None,
    hardware: dict[str, Any],
    label: str,
    from_host: list[str] | None = None,
    sparkrun: SparkrunLaunch | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The recipe as plain data, and notes for the person who pasted it (a sparkrun recipe also gives the
    machines and the sweep)."""
    notes = [*launch.notes, *serve.notes]
    model_id, model_path = serve.model, None
    if not HF_ID.match(serve.model) or model:
        if model is None:
            raise CatalogueError(label, f"the model {serve.model!r} is a path: pass --model ORG/NAME", line=launch.line)
        model_id, model_path = model, (serve.model if serve.model != model else None)
    flags = dict(serve.flags)
    topology: dict[str, Any] = {"kind": "solo"}
    nodes = sparkrun.nodes if sparkrun and sparkrun.nodes > 1 else flags.get("nnodes")
    if sparkrun and sparkrun.nodes > 1 and flags.get("tensor-parallel-size", 1) < 2:
        raise CatalogueError(
            label,
            f"{sparkrun.nodes} machines with tensor-parallel-size {flags.get('tensor-parallel-size', 1)}: a cluster "
            "here splits the model across the machines by tensor parallelism",
            "min_nodes",
            sparkrun.nodes_line,
        )
    if isinstance(nodes, int) and nodes > 1:
        topology = {"kind": "cluster", "tensor_parallel_size": flags.get("tensor-parallel-size", 1), "nodes": nodes}
        hardware = {**hardware, "nodes": nodes}
    dropped = [name for name in PER_NODE if flags.pop(name, None) is not None]
    if dropped:
        notes.append(f"per-node flags left out (the runner sets them per node): {', '.join('--' + n for n in dropped)}")
    serving: dict[str, Any] = {}
    docker = launch.docker
    if docker is not None:
        serving["image"] = docker.image
        serving["image_source"] = f"TODO: where {docker.image} comes from (registry, or how to build it)"
        container: dict[str, Any] = {}
        if docker.name:
            container["name"] = docker.name
        if docker.options:
            container["options"] = docker.options
        if container:
            serving["container"] = container
    if launch.env:
        serving["env"] = launch.env
    if from_host:
        serving["env_from_host"] = from_host
    if model_path:
        serving["model_path"] = model_path
    serving["flags"] = flags
    if serve.not_upstream and docker is not None:
        serving["image_flags"] = dict.fromkeys(serve.not_upstream, docker.image)
    consent_todo({"serving": serving, "hardware": hardware, "model": model_id}, label)
    title = f"{model_id} on {hardware['name']}"
    data = {
        "title": title,
        "summary": "TODO: one paragraph: what this recipe is for and what a reader gets from it.",
        "status": "community",
        "model": model_id,
        "quantization": "TODO: weight format, e.g. MXFP4",
        "hardware": hardware,
        "topology": topology,
        "serving": serving,
        "prose": {
            "why": "TODO: why this recipe exists.",
            "when_to_use": ["TODO: a workload it suits."],
            "when_not_to_use": ["TODO: a workload it does not suit."],
        },
        "sweep": draft_sweep(dict(sparkrun.sweep or DEFAULT_SWEEP) if sparkrun else dict(DEFAULT_SWEEP), flags),
        "sources": [f"TODO: where this {'sparkrun recipe' if sparkrun else 'launch command'} comes from."],
        "publish": False,
    }
    return data, notes


def draft_sweep(sweep: dict[str, Any], flags: dict[str, Any]) -> dict[str, Any]:
    """The draft's sweep; with speculative decoding, two kinds of text (its speed depends on the text)."""
    if "speculative-config" in flags:
        sweep["texts"] = ["prose", "code"]
    return sweep


def check(data: dict[str, Any], target: Path, checker: ArgvChecker) -> list[str]:
    """The recipe must load as any recipe does, and its flags must pass the same check as `validate`."""
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:
        raise from_validation(target, exc) from None
    entry = Entry(target.parent.name, target.parent, recipe)
    findings = validate_entries([entry], checker)[entry.id]
    errors = [f for f in findings if f.level == "error"]
    if errors:
        raise CatalogueError(target, str(errors[0]).split(": ", 1)[1])
    return [str(f) for f in findings]


def render(data: dict[str, Any], source: str = "a pasted launch command") -> str:
    """recipe.yaml text: the schema line and a note, then the recipe in the schema's field order."""
    return HEADER.format(source=source) + dump_yaml(data)


def run_new(
    roots: list[Path],
    recipe_id: str,
    source: str,
    snapshot: Path | None = None,
    model: str | None = None,
    platform: str = "dgx-spark",
    image: str | None = None,
    service: str | None = None,
    sparkrun: bool = False,
) -> int:
    """Write roots[0]/ID/recipe.yaml from a pasted launch command (or a sparkrun recipe file); nothing is written on
    a bad paste. Exit 1 when the draft holds what the run policy never allows (it is written, unpublished, with one
    line per item)."""
    secrets: list[str] = []
    try:
        return _new(roots, recipe_id, source, snapshot, model, platform, image, service, secrets, sparkrun)
    except CatalogueError as exc:
        raise CatalogueError(
            exc.path, redact(exc.message, secrets), redact(exc.field, secrets) if exc.field else None, exc.line
        ) from None


def _new(
    roots: list[Path],
    recipe_id: str,
    source: str,
    snapshot: Path | None,
    model: str | None,
    platform: str,
    image: str | None,
    service: str | None,
    secrets: list[str],
    sparkrun: bool = False,
) -> int:
    if not RECIPE_ID.fullmatch(recipe_id):
        raise CatalogueError(recipe_id, "recipe id must be lower-case letters, digits and '-'")
    folders = recipe_folders(roots)
    if recipe_id in folders:
        raise CatalogueError(folders[recipe_id] / RECIPE_FILE, "exists already")
    text, label = read_source(source)
    secrets += [s.value for s in scan_text(text, "launch.sh")]
    from_sparkrun = read_sparkrun(text, label, DockerRunOptions.committed(), DEFAULT_SWEEP) if sparkrun else None
    if from_sparkrun is not None:
        launch = from_sparkrun.launch
        model = model or (from_sparkrun.model if from_sparkrun.model != launch_model(launch) else None)
    elif service is not None or looks_like_compose(text, label):
        launch = read_compose(text, label, service, DockerRunOptions.committed())
    else:
        launch = read_launch(text, label, DockerRunOptions.committed())
    if image is not None:
        if launch.docker is not None and launch.docker.image != image:
            raise CatalogueError(label, f"the command runs image {launch.docker.image}, not --image {image}")
        launch.docker = launch.docker or DockerRun(image=image)
    checker = upstream_checker(snapshot)
    serve = read_flags(launch, checker, label)
    secrets += pasted_secrets(text, launch, serve)
    from_host, moved = take_secrets(launch, serve)
    data, notes = recipe_data(launch, serve, model, hardware_like(folders, platform), label, from_host, from_sparkrun)
    target = roots[0] / recipe_id / RECIPE_FILE
    try:
        findings = check(data, target, checker)
    except CatalogueError as exc:  # nothing is written: name the sparkrun file's command, not the draft
        if from_sparkrun is None:
            raise
        said = f"{exc.field}: {exc.message}" if exc.field else exc.message
        raise CatalogueError(label, said.removeprefix("error: "), "command", launch.line) from None
    body = render(data, f"the sparkrun recipe {label}" if sparkrun else "a pasted launch command")
    leaked = [value for value in secrets if value and value in body]
    if leaked:
        raise CatalogueError(label, f"a secret ({mask(leaked[0])}) would be written to the recipe: nothing written")
    recipe = Recipe.model_validate(data)
    policy = check_recipe_file(target, recipe.serving, body, draft_platform(data), model=recipe.model_arg)
    write_text(target, body)
    for note in [*(from_sparkrun.notes if from_sparkrun else []), *notes]:
        print(redact(f"note: {note}", secrets))
    for unhonoured in from_sparkrun.lines if from_sparkrun else []:
        print(redact(unhonoured, secrets))
    for finding in findings:
        print(redact(str(finding), secrets))
    for name, said in moved:
        line = yaml_line(body, ("serving", "env_from_host", from_host.index(name)))
        how = "not written: the draft names it in serving.env_from_host; the runner passes it by name"
        print(redact(f"{target}:{line}: never: {said} ({how})", secrets))
    for item in policy:
        print(redact(str(item), secrets), file=sys.stderr if item.is_error else sys.stdout)
    refused = [f for f in policy if f.is_error]
    consent = [f for f in policy if f.cls == "consent"]
    print(f"wrote {target}: {len(serve.flags)} flag(s) read with {checker.source}; fill in its TODOs")
    if consent:
        print(f"{len(consent)} option(s) need the owner's consent: give each a reason in serving.consent")
    if refused:
        print(f"{len(refused)} item(s) the catalogue never runs: change them before the recipe can be published")
    return 1 if refused else 0
