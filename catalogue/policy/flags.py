"""The run policy on vLLM flags: a literal --api-key (never); each flag by its class (catalogue.policy.flag_classes:
never (--config); a value off a flag's named list (never); loads code, sends data or serves files -> consent; reads
a path -> judged against the machine that reads it; writes a path -> judged against where it lands
(catalogue.policy.written_paths); a JSON config -> each key by its class; no class -> consent);
and the page's notes (remote code, open to the network, a mutable image tag)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from catalogue.models.bounded import JsonTooDeep, json_value
from catalogue.models.revision import REVISION_FLAGS, REVISION_RULE, is_revision
from catalogue.policy import flag_classes as classes
from catalogue.policy import rules
from catalogue.policy.docker_options import walk_options
from catalogue.policy.finding import PolicyFinding, consent, never
from catalogue.policy.mounts import host_path, mount_verdict
from catalogue.policy.secret_scan import is_literal, mask
from catalogue.policy.written_paths import Landing, judge_written, landing_for

NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def check_flags(
    flags: Mapping[str, Any],
    options: list[str],
    env: Mapping[str, str],
    image: str | None,
    env_from_host: Iterable[str] = (),
    declared: Mapping[str, str] | None = None,
    landing: Landing | None = None,
) -> list[PolicyFinding]:
    """Findings for vLLM flags (the notes and the --api-key check read each name as vLLM's parser does). `landing`:
    where the container's paths reach the host (catalogue.policy.written_paths; its options' binds when None)."""
    parsed = _as_parsed(flags)
    lands = None if image is None else landing or landing_for(options, None)
    out: list[PolicyFinding] = [
        *_secret_flag(parsed),
        *_revisions(parsed),
        *_reach(flags, image, declared or {}, lands),
    ]
    flags = _as_parsed(flags)
    if flags.get("trust-remote-code") is True:
        field = ("serving", "flags", "trust-remote-code")
        if image is None:  # the model repository's code runs on the owner's machine, with the user's files
            why = _text("trust-remote-code-host")
            out.append(consent("--trust-remote-code", why, rules.FLAGS_BASIS, declared or {}, field, runs_code=True))
        else:  # runs_code: the owner's variables reach it only with consent (catalogue.policy.code_secrets)
            note = _note("--trust-remote-code", _text("trust-remote-code"), "allowed; the page says so", field)
            out.append(replace(note, runs_code=True))
    if _open_to_network(flags, options, env, image, env_from_host):
        host = str(flags.get("host", "")) or "unset (vLLM listens on every interface)"
        where: tuple = ("serving", "flags", "host") if "host" in flags else ("serving", "flags")
        out.append(_note(f"--host {host}", _text("open-host"), _text("open-host-how"), where))
    tag = mutable_tag(image)
    if tag:
        why = _text("mutable-tag").format(tag=tag)
        out.append(_note(f"image {image}", why, _text("mutable-tag-how"), ("serving", "image")))
    return out


def _as_parsed(flags: Mapping[str, Any]) -> dict[str, Any]:
    """The flags under the names vLLM's parser gives them (`api_key`, `trust_remote_code`, an abbreviation)."""
    out: dict[str, Any] = {}
    for flag, value in flags.items():
        found = classes.resolve(flag)
        out[found.name if found.name and not found.keys else flag] = value
    return out


def _text(key: str) -> Any:
    """A finding's text from catalogue/policy/flags.yaml (texts:)."""
    return classes.classes_file()["texts"][key]


def _note(option: str, why: str, how: str, field: tuple) -> PolicyFinding:
    return PolicyFinding("note", option, why, how, _text("note-basis"), field=field)


def _secret_flag(flags: Mapping[str, Any]) -> list[PolicyFinding]:
    api_key = flags.get("api-key")
    if isinstance(api_key, str) and is_literal(api_key):
        why = rules.SECRET_WHY.format(masked=mask(api_key))
        how = rules.SECRET_HOW.format(name="VLLM_API_KEY")
        return [never("--api-key", why, rules.SECRET_BASIS, ("serving", "flags", "api-key"), how)]
    return []


def _revisions(flags: Mapping[str, Any]) -> list[PolicyFinding]:
    """A revision flag whose value is no commit, tag or branch name (`refs/pr/7`: a pull request's files)."""
    out = []
    for name in REVISION_FLAGS:
        value = flags.get(name)
        if name in flags and not is_revision(value):
            why = f"the value {ascii(value)[:60]} is not {REVISION_RULE}"
            out.append(never(f"--{name}", why, rules.FLAGS_BASIS, ("serving", "flags", name), "pin a commit or a tag"))
    return out


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


def _reach(
    flags: Mapping[str, Any], image: str | None, declared: Mapping[str, str], landing: Landing | None
) -> list[PolicyFinding]:
    """Each flag by its class: typed by vLLM or listed as data (nothing), loads code, sends data or serves files
    (consent), reads a path (judged against the machine that reads it), writes a path (against where it lands),
    a JSON config (each key by its class); no class (consent)."""
    out: list[PolicyFinding] = []
    for flag, value in flags.items():
        field = ("serving", "flags", flag)
        found = classes.resolve(flag)
        if found.name is None:
            some = ", ".join(f"--{n}" for n in found.ambiguous[:3])
            why = _text("ambiguous").format(flags=f"{len(found.ambiguous)} flags ({some}, ...)")
            out.append(never(f"--{flag}", why, rules.FLAGS_BASIS, field, "spell the flag in full"))
            continue
        cls = classes.flag_class(found.name)
        names = classes.named_values(found.name)
        if names is not None and not set(_values(value)) <= set(names):
            listed = ", ".join(names)
            why, how = _text("named-value").format(names=listed), _text("named-value-how").format(names=listed)
            out.append(never(f"--{found.name} {value}", why, rules.FLAGS_BASIS, field, how))
        elif found.keys or cls == "config":
            table = classes.config_table(found.name)
            out += _config(found.name, _keyed(found.keys, value), table, Reach(image, declared, landing), field)
        elif cls is None and _is_data_value(value):
            continue
        else:
            out += _judge(cls, f"--{found.name}", found.name, value, Reach(image, declared, landing), field)
    return out


def _keyed(keys: tuple[str, ...], value: Any) -> Any:
    for key in reversed(keys):
        value = {key: value}
    return value


def _is_data_value(value: Any) -> bool:
    """A switch or a number: what an unclassed flag (an image's own) may take without consent."""
    return isinstance(value, (bool, int, float)) or (isinstance(value, str) and NUMBER.fullmatch(value) is not None)


@dataclass(frozen=True)
class Reach:
    """What judging a flag's value needs beyond the value: the image (None: vLLM runs on the owner's machine), the
    consent the recipe declares, and where the container's paths land."""

    image: str | None
    declared: Mapping[str, str]
    landing: Landing | None


def _judge(cls: str | None, shown: str, flag: str, value: Any, reach: Reach, field: tuple) -> list[PolicyFinding]:
    """The finding for one flag or key of class `cls` with `value`."""
    image, declared = reach.image, reach.declared
    if cls == "data":
        return []
    if cls == "never":
        return [never(shown, _text("never"), rules.FLAGS_BASIS, field, _text("never-how"))]
    if cls == "reads-path":
        return _path_flag(shown, flag, _values(value), image, declared, field)
    if cls == "writes-path":
        return judge_written(shown, _values(value), reach.landing, declared, field)
    if cls in ("loads-code", "sends-data", "serves-files"):
        given = _values(value) if not isinstance(value, dict) else [str(value)] if value else []
        if not given or given == [""]:
            return []
        return [consent(shown, _text(cls), rules.FLAGS_BASIS, declared, field, runs_code=cls == "loads-code")]
    return [consent(shown, _text("unclassed"), rules.FLAGS_BASIS, declared, field, runs_code=True)]  # free text


def _config(flag: str, value: Any, table: Mapping[str, Any], reach: Reach, field: tuple) -> list[PolicyFinding]:
    """A JSON config flag: each key by its class (nested tables for nested keys); a key with no class is consent."""
    if isinstance(value, str):
        try:
            value = json_value(value)
        except JsonTooDeep as exc:
            return [never(f"--{flag}", f"its JSON is {exc}", rules.FLAGS_BASIS, field)]
        except ValueError:
            return [consent(f"--{flag}", _text("not-json"), rules.FLAGS_BASIS, reach.declared, field)]
    if _is_data_value(value):
        return []  # a level or mode given as a number (`-O3`, `--compilation-config 3`)
    if not isinstance(value, dict):
        return [consent(f"--{flag}", _text("not-json"), rules.FLAGS_BASIS, reach.declared, field)]
    out: list[PolicyFinding] = []
    for key, item in value.items():
        name = str(key).replace("-", "_")
        cls = classes.key_class(dict(table), name, item)
        shown = f"--{flag} {name}"
        if isinstance(cls, dict):
            out += _config(shown[2:], item, cls, reach, field)
        else:
            out += _judge(cls, shown, flag, item, reach, field)
    return out


def _path_flag(
    shown: str, flag: str, values: list[str], image: str | None, declared: Mapping[str, str], field: tuple
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
                    f"{shown} {host_path(path)}",
                    f"reads {verdict[1].removeprefix('mounts ')}",
                    rules.FLAGS_BASIS,
                    field,
                )
            ]
        if image is None:
            return [consent(shown, _text("reads-path"), rules.FLAGS_BASIS, declared, field)]
    return []


def _open_to_network(
    flags: Mapping[str, Any], options: list[str], env: Mapping[str, str], image: str | None, from_host: Iterable[str]
) -> bool:
    if "api-key" in flags or "VLLM_API_KEY" in env or "VLLM_API_KEY" in set(from_host):
        return False
    if str(flags.get("host", "")) not in _text("all-interfaces"):
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
