"""The run policy on vLLM flags: a literal --api-key (never), flags that load code, read files or send data
elsewhere, and the page's notes (remote code, open to the network, a mutable image tag)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from catalogue import policy_rules as rules
from catalogue.docker_options import walk_options
from catalogue.policy_finding import PolicyFinding, consent, never
from catalogue.policy_mounts import host_path, mount_verdict
from catalogue.secret_scan import is_literal, mask


def check_flags(
    flags: Mapping[str, Any],
    options: list[str],
    env: Mapping[str, str],
    image: str | None,
    env_from_host: Iterable[str] = (),
    declared: Mapping[str, str] | None = None,
) -> list[PolicyFinding]:
    """Findings for vLLM flags."""
    out: list[PolicyFinding] = [*_secret_flag(flags), *_reach(flags, image, declared or {})]
    if flags.get("trust-remote-code") is True:
        field = ("serving", "flags", "trust-remote-code")
        out.append(_note("--trust-remote-code", rules.NOTE_TRUST_REMOTE_CODE, "allowed; the page says so", field))
    if _open_to_network(flags, options, env, image, env_from_host):
        host = str(flags.get("host", "")) or "unset (vLLM listens on every interface)"
        where: tuple = ("serving", "flags", "host") if "host" in flags else ("serving", "flags")
        out.append(_note(f"--host {host}", rules.NOTE_OPEN_HOST, rules.NOTE_OPEN_HOST_HOW, where))
    tag = mutable_tag(image)
    if tag:
        why = rules.NOTE_MUTABLE_TAG.format(tag=tag)
        out.append(_note(f"image {image}", why, rules.NOTE_MUTABLE_TAG_HOW, ("serving", "image")))
    return out


def _note(option: str, why: str, how: str, field: tuple) -> PolicyFinding:
    return PolicyFinding("note", option, why, how, rules.NOTE_BASIS, field=field)


def _secret_flag(flags: Mapping[str, Any]) -> list[PolicyFinding]:
    api_key = flags.get("api-key")
    if isinstance(api_key, str) and is_literal(api_key):
        why = rules.SECRET_WHY.format(masked=mask(api_key))
        how = rules.SECRET_HOW.format(name="VLLM_API_KEY")
        return [never("--api-key", why, rules.SECRET_BASIS, ("serving", "flags", "api-key"), how)]
    return []


def _values(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [] if value is None or isinstance(value, bool) else [str(value)]


def looks_like_path(flag: str, value: str) -> bool:
    """A value that names a file rather than a model id, a template or JSON."""
    if flag == "chat-template" and ("{" in value or "\n" in value):
        return False
    if flag == "lora-modules":
        value = value.split("=", 1)[-1]
    return value.startswith(("/", "~", "$", ".")) and not value.startswith("{")


def _reach(flags: Mapping[str, Any], image: str | None, declared: Mapping[str, str]) -> list[PolicyFinding]:
    """Flags that load code, serve files, send traces, or (without a container) read the owner's files."""
    out: list[PolicyFinding] = []
    for flag, value in flags.items():
        field = ("serving", "flags", flag)
        if flag in rules.FLAGS_LOAD_CODE and _values(value) and _values(value) != [""]:
            out.append(consent(f"--{flag}", rules.FLAGS_LOAD_CODE_WHY, rules.FLAGS_BASIS, declared, field))
        elif flag in rules.FLAGS_SERVE_FILES and _values(value):
            out.append(consent(f"--{flag}", rules.FLAGS_SERVE_FILES_WHY, rules.FLAGS_BASIS, declared, field))
        elif flag in rules.FLAGS_SEND and _values(value):
            out.append(consent(f"--{flag}", rules.FLAGS_SEND_WHY, rules.FLAGS_BASIS, declared, field))
        elif flag in rules.FLAGS_READ_PATH:
            out += _path_flag(flag, _values(value), image, declared, field)
    return out


def _path_flag(
    flag: str, values: list[str], image: str | None, declared: Mapping[str, str], field: tuple
) -> list[PolicyFinding]:
    for value in values:
        if not looks_like_path(flag, value):
            continue
        path = value.split("=", 1)[-1] if flag == "lora-modules" else value
        verdict = mount_verdict(path)
        home = host_path(path).startswith("~")
        if verdict is not None and verdict[0] == "never" and (image is None or home):
            return [
                never(
                    f"--{flag} {host_path(path)}",
                    f"reads {verdict[1].removeprefix('mounts ')}",
                    rules.FLAGS_BASIS,
                    field,
                )
            ]
        if image is None:
            return [consent(f"--{flag}", rules.FLAGS_READ_PATH_WHY, rules.FLAGS_BASIS, declared, field)]
    return []


def _open_to_network(
    flags: Mapping[str, Any], options: list[str], env: Mapping[str, str], image: str | None, from_host: Iterable[str]
) -> bool:
    if "api-key" in flags or "VLLM_API_KEY" in env or "VLLM_API_KEY" in set(from_host):
        return False
    if str(flags.get("host", "")) not in rules.ALL_INTERFACES:
        return False
    if image is None:
        return True
    walked = walk_options(options)
    return any(
        name in ("publish", "publish-all") or (name == "network" and value == "host") for _, name, value in walked
    )


def mutable_tag(image: str | None) -> str | None:
    """':latest' or 'no tag' for an image pulled by a tag that can move; None when pinned by digest or tagged."""
    if not image or "@sha256:" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "no tag"
    return ":latest" if last.endswith(":latest") else None
