"""The run policy on environment variables, as an allow-list (catalogue/policy/env.yaml): names that load code of
the recipe's choice (never), secrets written down (never), names that redirect the model hub, load code the image
has, open endpoints or send data (consent), data names whose value has their type (nothing), anything else
(consent); path variables by the host folder they reach (check_env_paths); and what a recipe takes from the owner
(env_from_host: its own allow-list)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any

from catalogue.models.runner_mounts import runner_binds
from catalogue.models.yaml_files import parse_yaml
from catalogue.policy import rules
from catalogue.policy.finding import PolicyFinding, consent, never
from catalogue.policy.mounts import PolicyContext, host_path, mount_verdict, through_binds
from catalogue.policy.secret_scan import mask, value_is_secret
from catalogue.policy.written_paths import Landing, judge_written

FieldOf = Callable[[str], tuple]
ENV_FILE = Path(__file__).with_name("env.yaml")


@cache
def env_table() -> dict[str, Any]:
    """catalogue/policy/env.yaml as read."""
    return parse_yaml(ENV_FILE.read_text(encoding="utf-8"), ENV_FILE)


def is_never(name: str) -> bool:
    """A name that loads code of the recipe's choice (a glob of the never list)."""
    return any(fnmatchcase(name, pattern) for pattern in env_table()["never"]["names"])


def consent_class(name: str) -> str | None:
    """The consent class (redirect, loads-code, opens-endpoints, sends-data) of a name, any letter case."""
    upper = name.upper()
    return next((c for c, v in env_table()["consent"].items() if upper in {n.upper() for n in v["names"]}), None)


def type_of(name: str) -> str | dict[str, Any] | None:
    """The type the allow-list gives a data name; None when the name is not on it."""
    return env_table()["data"].get(name)


def fits(kind: str | Mapping[str, Any], value: str) -> bool:
    """Whether `value` is of the allow-list type `kind`."""
    if isinstance(kind, Mapping):
        return value in kind["choices"]
    return re.fullmatch(env_table()["types"][kind], value) is not None


def check_env(
    env: Mapping[str, str], field_of: FieldOf | None = None, declared: Mapping[str, str] | None = None
) -> list[PolicyFinding]:
    """Findings for environment variables written in the recipe (or a profile)."""
    out: list[PolicyFinding] = []
    table = env_table()
    for key, value in env.items():
        field = field_of(key) if field_of else ("serving", "env", key)
        if table["runner_values"].get(key) == value:
            continue  # exactly what the runner itself gives it (HOME=/tmp in its helper containers)
        kind = type_of(key)
        cls = consent_class(key)
        if is_never(key):
            how = "never allowed: the image decides the code"
            out.append(never(key, table["never"]["why"], table["never"]["basis"], field, how))
        elif value_is_secret(key, value):
            why = rules.SECRET_WHY.format(masked=mask(value))
            out.append(never(key, why, rules.SECRET_BASIS, field, rules.SECRET_HOW.format(name=key)))
        elif cls is not None:
            rule = table["consent"][cls]
            code = cls in ("loads-code", "home")
            out.append(consent(key, rule["why"], rule["basis"], declared or {}, field, runs_code=code))
        elif kind is None:
            unlisted = table["unlisted"]
            out.append(consent(key, unlisted["why"], unlisted["basis"], declared or {}, field))
        elif not fits(kind, value):
            unlisted = table["unlisted"]
            shown = kind if isinstance(kind, str) else f"choice of {', '.join(kind['choices'])}"
            why = unlisted["type_why"].format(value=value, type=shown, name=key)
            out.append(consent(key, why, unlisted["basis"], declared or {}, field))
    return out


def check_env_paths(
    env: Mapping[str, str],
    binds: list[tuple[str, str]] | None,
    context: PolicyContext | None = None,
    declared: Mapping[str, str] | None = None,
    field_of: FieldOf | None = None,
) -> list[PolicyFinding]:
    """Findings for the variables of type path (HOME, HF_HOME, VLLM_CACHE_ROOT, ...): where a process reads and writes.

    `binds` None: a process on this host (no image, or `--local`), so the value is a host path. Otherwise a
    container's (catalogue.policy.mounts.host_binds): the container's own path, unless it lies in a bind of a host
    folder, then the host path it reaches. A host path is judged as a mount of it would be: system folders,
    credentials and sockets never, the owner's folders (hosts file allow_mounts) free, any other folder consent."""
    rule = env_table()["paths"]
    out: list[PolicyFinding] = []
    for key, value in env.items():
        field = field_of(key) if field_of else ("serving", "env", key)
        written = _into_runner_binds(key, value, context, field) if binds is not None else []
        if written:
            out += written
            continue
        if (type_of(key) != "path" and key not in rule["also"]) or not fits("path", value):
            continue  # not a path variable, or not a path: check_env's verdict
        path, where = posixpath.normpath(value), ""
        cache = _in_hf_cache(key, path, context) if binds is not None else None
        if cache is not None:
            out.append(
                consent(f"{key} {path}", rule["hf_cache_why"].format(name=key), rule["basis"], declared or {}, field)
            )
            continue
        if binds is not None:
            reached = through_binds(path, binds)
            if reached is None:
                continue  # the container's own folder
            path, where = reached[0], rule["through"].format(target=reached[1])
        verdict = mount_verdict(path, context)
        if verdict is None and binds is not None:  # the owner's folder, reached from inside: still a host folder
            why = rule["bind_why"].format(name=key, target=where.removeprefix(" (in the bind at ").removesuffix(")"))
            out.append(consent(f"{key} {host_path(path)}", why, rule["basis"], declared or {}, field))
            continue
        if verdict is None:
            continue
        shown = f"{key} {host_path(path)}"
        why = rule["why"].format(name=key, what=verdict[1].removeprefix("mounts "), where=where)
        if verdict[0] == "never":
            out.append(never(shown, why, rule["basis"], field, rule["never_how"]))
        else:
            out.append(consent(shown, why, rule["basis"], declared or {}, field))
    return out


def _into_runner_binds(key: str, value: str, context: PolicyContext | None, field: tuple) -> list[PolicyFinding]:
    """Never for any variable (a path type or one the policy does not know: TRITON_CACHE_DIR, XDG_CACHE_HOME) whose
    value, read as a path in the container (each `:`-separated part; `..`, `//`, `~` and a relative path from `/`
    resolved), lands in a bind the runner adds itself: judged as a path vLLM writes (catalogue.policy.written_paths),
    since what lands there other runs load. The HF cache's own variables at the cache itself are the runner's."""
    target = context.hf_cache_target if context else None
    exact = env_table()["paths"]["exact"]
    if target and key in exact and posixpath.normpath(value) == posixpath.normpath(target + exact[key]):
        return []
    own = Landing(context.runner_binds if context else runner_binds(None))
    parts = [] if "://" in value else [p for p in value.split(":") if p.strip()]
    return judge_written(key, parts, own, {}, field)


def _in_hf_cache(key: str, path: str, context: PolicyContext | None) -> str | None:
    """The part below the profile's Hugging Face cache mount a container path lies in ('' for the mount itself);
    None when it lies outside it, or is the cache's own variable at the cache itself (HF_HOME at the mount)."""
    target = posixpath.normpath(context.hf_cache_target) if context and context.hf_cache_target else None
    if target is None or not (path == target or path.startswith(target.rstrip("/") + "/")):
        return None
    below = path[len(target) :]
    return None if env_table()["paths"]["exact"].get(key) == below else below


def check_runner_sets(env: Mapping[str, str], field_of: FieldOf | None = None) -> list[PolicyFinding]:
    """Never for a variable the runner sets in every server container (a recipe's value would replace it)."""
    rule = env_table()["runner_sets"]
    return [
        never(key, rule["why"].format(name=key), rule["basis"], field_of(key) if field_of else ("serving", "env", key))
        for key in env
        if key in rule["names"]
    ]


def check_env_from_host(
    names: Iterable[str], declared: Mapping[str, str], profile_names: Iterable[str] = ()
) -> list[PolicyFinding]:
    """Consent for each name a recipe takes from the owner's environment beyond the allow-list."""
    rule = env_table()["from_host"]
    allowed = {*rule["allowed"], *profile_names}
    out: list[PolicyFinding] = []
    for i, name in enumerate(names):
        field = ("serving", "env_from_host", i)
        if is_never(name):
            code = env_table()["never"]
            out.append(never(f"env_from_host {name}", code["why"], code["basis"], field))
        elif name not in allowed:
            why = rule["why"].format(name=name)
            out.append(consent(f"env_from_host {name}", why, rule["basis"], declared, field))
    return out
