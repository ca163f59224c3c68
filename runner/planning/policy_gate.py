"""The run policy before anything starts: the recipe's launch and what its platform profile adds, the owner's
`--allow`s, and the variables the recipe takes from the owner's environment by name.

catalogue.policy.check classifies; this module decides whether this owner's run may start, and says why not."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from catalogue.models.errors import yaml_line
from catalogue.models.loading import RECIPE_FILE, Entry
from catalogue.models.terminal import printable
from catalogue.policy.check import (
    PolicyContext,
    PolicyFinding,
    check_env,
    check_env_paths,
    check_launch,
    check_options,
    check_recipe_file,
    context_for,
    errors,
    host_binds,
    missing_allows,
)
from catalogue.policy.rules import FLAGS_BASIS
from runner.hosts.hosts import trusted_everywhere
from runner.planning.inspect_gate import Verdicts, normal_allow
from runner.planning.plan import Plan

UNFILLED = re.compile(r"<[^<>]+\.[a-z_]+>")
"""A profile value the hosts file did not fill in (catalogue.models.platform.fill): the run stops as missing it."""


def owner_folders(plan: Plan) -> list[str]:
    """The folders the owner's hosts file lets recipes mount, on every host of the run (`~` as the owner's home)."""
    folders = {os.path.expanduser(f) for host in plan.hosts for f in host.allow_mounts}
    return sorted({*folders, *(f.replace(os.path.expanduser("~"), "~", 1) for f in folders)})


def owner_images(plan: Plan) -> list[str]:
    """The image publishers the owner trusts on every host of the run (hosts file `trusted_images`)."""
    return trusted_everywhere(plan.hosts)


def findings(entry: Entry, plan: Plan) -> list[PolicyFinding]:
    """The policy's verdicts on everything the run would start: the recipe's launch and the profile's part."""
    path = entry.folder / RECIPE_FILE
    found = check_recipe_file(
        path,
        entry.recipe.serving,
        platform=entry.platform,
        owner_folders=owner_folders(plan),
        owner_images=owner_images(plan),
        model=entry.recipe.model_arg,
    )
    found += on_this_host(entry, plan, {f.option for f in found if f.cls != "note"})
    seen: set[str] = set()
    for node in plan.nodes:
        part = node.profile
        if part is None:
            continue
        source = f"platforms/{part.platform}.yaml"
        context = context_for(entry.platform, owner_folders(plan))
        filled = {k: v for k, v in part.env.items() if not UNFILLED.search(v)}  # refused as plan.missing instead
        paths = check_env_paths(filled, recipe_binds(entry, context) if plan.image is not None else None, context)
        for finding in [*check_options(part.options, {}, context), *check_env(filled), *paths]:
            if finding.option in seen or finding.cls == "note":
                continue
            seen.add(finding.option)
            reason = (
                (finding.reason or f"added by the {part.platform} platform profile")
                if finding.cls == "consent"
                else None
            )
            found.append(replace(finding, source=source, reason=reason))
    return found


def recipe_binds(entry: Entry, context: PolicyContext) -> list[tuple[str, str]]:
    """The host folders the recipe's own options bind into its containers (catalogue.policy.check.host_binds)."""
    container = entry.recipe.serving.container
    return host_binds(list(container.options) if container else [], context)


LOCAL_REASON = "the owner runs vLLM on this machine (--local)"


def on_this_host(entry: Entry, plan: Plan, seen: set[str]) -> list[PolicyFinding]:
    """With `--local`, a recipe written for an image runs vLLM on this machine: its flags that read paths and its
    path variables (HOME, HF_HOME, VLLM_CACHE_ROOT, ...) are judged against this host's files, not the image's (a
    consent among them is declared by --local itself; the owner still allows each by name)."""
    serving = entry.recipe.serving
    if plan.image is not None or serving.image is None:
        return []
    path = entry.folder / RECIPE_FILE
    text = path.read_text(encoding="utf-8")
    out = []
    context = context_for(entry.platform, owner_folders(plan))
    judged = check_launch([], {}, serving.flags, None, serving.consent, source=str(path))
    flags = [f for f in judged if f.basis == FLAGS_BASIS]
    paths = [replace(f, source=str(path)) for f in check_env_paths(serving.env, None, context)]
    for finding in [*flags, *paths]:
        if finding.option in seen:
            continue
        reason = (finding.reason or LOCAL_REASON) if finding.cls == "consent" else None
        out.append(replace(finding, reason=reason, lineno=yaml_line(text, finding.field)))
    return out


def refusals(found: list[PolicyFinding], allowed: list[str]) -> list[str]:
    """Why this run may not start, one line each: never-class findings, consent the owner has not given, and
    variables the recipe takes from the environment that are not set."""
    lines = [str(f) for f in errors(found)]
    given = [normal_allow(a) for a in allowed]
    for name in missing_allows(found, given):
        finding = next(f for f in found if f.option == name)
        lines.append(
            printable(
                f"{finding.where}: consent: {name}: {finding.why}; the owner has not allowed it "
                f"(declared: {finding.reason}; run with --allow '{name}')"
            )
        )
    return lines


def missing_env(entry: Entry, env: dict[str, str] | None = None) -> list[str]:
    """Lines for the variables the recipe takes by name that this environment does not have."""
    environ = os.environ if env is None else env
    path: Path = entry.folder / RECIPE_FILE
    return [
        f"{path}: serving.env_from_host: {name} is not set here: export it first (the runner passes it to the "
        "containers by name and never writes its value down)"
        for name in entry.recipe.serving.env_from_host
        if not environ.get(name)
    ]


def secret_values(entry: Entry, env: dict[str, str] | None = None) -> list[str]:
    """The values of the recipe's by-name variables in this environment: what logs must never contain."""
    environ = os.environ if env is None else env
    return [environ[name] for name in entry.recipe.serving.env_from_host if environ.get(name)]


def verdicts(found: list[PolicyFinding], allowed: list[str], entry: Entry, plan: Plan) -> Verdicts:
    """What the inspect gate holds docker's view to: the consent names the static gate saw declared (recipe and
    profile), the owner's `--allow`s, and the recipe's platform context."""
    declared = {f.option: f.reason for f in found if f.cls == "consent" and f.reason is not None}
    return Verdicts(declared, list(allowed), context_for(entry.platform, owner_folders(plan), owner_images(plan)))
