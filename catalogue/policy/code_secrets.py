"""The run policy on the owner's variables beside code the recipe chooses. A launch that runs code of its choice (the
model repository's under --trust-remote-code, a plugin or module path, a variable that loads code, a free-text flag
the policy has not classed: PolicyFinding.runs_code) hands that code every variable the recipe takes from the owner's
environment (serving.env_from_host: HF_TOKEN, ...), on the host network. Each such variable is consent named by the
variable and by the code's source: `env_from_host HF_TOKEN to remote code ORG/NAME`.

An image off the trust list is not a source here: its own consent (catalogue.policy.images) is named by the image
and says which of the owner's variables would go into it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from catalogue.policy.finding import PolicyFinding, consent
from catalogue.policy.flag_classes import resolve
from catalogue.policy.images import IMAGE_BASIS

REMOTE_CODE = "--trust-remote-code"
REPOSITORY_FLAGS = ("tokenizer", "hf-config-path")
"""Flags naming another repository whose code vLLM runs under --trust-remote-code (a tokenizer's, a config's)."""
WHY = (
    "passes the owner's {name} into a server that runs code of the recipe's choice ({source}): that code reads the "
    "variable and can send it anywhere (the host network)"
)
BASIS = "catalogue secrets rule (code the recipe chooses sees every variable of its process)"
NO_MODEL = "the recipe's model"


def code_sources(found: Iterable[PolicyFinding], flags: Mapping[str, Any], model: str | None) -> list[str]:
    """The sources of the code the launch lets run, as consent names: `remote code <repository>` for each repository
    --trust-remote-code runs (the model, a tokenizer, a config, a draft model), and each other runs-code finding by
    its option; an untrusted image is left to its own consent."""
    out: list[str] = []
    for finding in found:
        if not finding.runs_code or finding.basis == IMAGE_BASIS:
            continue
        if finding.option == REMOTE_CODE:
            out += [f"remote code {repo}" for repo in remote_repositories(flags, model)]
        else:
            out.append(finding.option)
    return list(dict.fromkeys(out))


def remote_repositories(flags: Mapping[str, Any], model: str | None) -> list[str]:
    """The repositories whose Python --trust-remote-code runs: the model, and a tokenizer, a config or a draft model
    (speculative-config's `model`) the flags name."""
    out = [model or NO_MODEL]
    for flag, value in flags.items():
        found = resolve(flag)
        if found.name in REPOSITORY_FLAGS and isinstance(value, str):
            out.append(value)
        elif found.name == "speculative-config":
            draft = _draft_model(value, found.keys)
            if draft:
                out.append(draft)
    return list(dict.fromkeys(out))


def _draft_model(value: Any, keys: tuple[str, ...]) -> str | None:
    if keys:
        return str(value) if keys == ("model",) and isinstance(value, str) else None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    model = value.get("model") if isinstance(value, dict) else None
    return model if isinstance(model, str) and model else None


def check_secrets_to_code(
    found: Iterable[PolicyFinding],
    env_from_host: Iterable[str],
    flags: Mapping[str, Any],
    model: str | None,
    declared: Mapping[str, str],
) -> list[PolicyFinding]:
    """Consent for each variable from the owner's environment and each source of code the launch lets run."""
    sources = code_sources(found, flags, model)
    return [
        consent(
            f"env_from_host {name} to {source}",
            WHY.format(name=name, source=source),
            BASIS,
            declared,
            ("serving", "env_from_host", i),
        )
        for i, name in enumerate(dict.fromkeys(env_from_host))
        for source in sources
    ]
