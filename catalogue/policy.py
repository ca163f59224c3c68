"""The run policy applied to a launch: every `docker run` option, env variable and vLLM flag of a recipe in one
class (never, consent, allowed with a note), from the table in `catalogue.policy_rules`.

`catalogue validate`, `catalogue new`, `catalogue check-changes` and the runner call the same functions and print
the same lines: `file:line: <class>: <option>: <why> (<how to allow, where allowed>)`."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal, Protocol

from catalogue import policy_rules as rules
from catalogue.docker_options import docker_options, walk_options
from catalogue.errors import yaml_line
from catalogue.secret_scan import is_literal, mask, scan_text, value_is_secret

FindingClass = Literal["never", "consent", "note"]
HOME = re.compile(r"^(~|\$HOME|\$\{HOME\})(?=/|$)")


class Declared(Protocol):
    """A consent the recipe declares (catalogue.recipe.Consent)."""

    option: str
    reason: str


@dataclass(frozen=True)
class PolicyFinding:
    """One verdict of the run policy about one option, variable or flag."""

    cls: FindingClass
    option: str
    """Its name, e.g. '--cap-add IPC_LOCK': also the name the owner passes to `--allow`."""
    why: str
    how: str
    """How to allow it and where, or what to do instead."""
    basis: str = ""
    """The rules it follows (CIS Docker Benchmark, Pod Security baseline, catalogue rule)."""
    source: str = ""
    """The file (or paste) the launch comes from."""
    field: tuple[str | int, ...] = ()
    """Where in the recipe, as a field path."""
    lineno: int | None = None
    reason: str | None = None
    """For a consent: the reason the recipe declares; None when it declares none."""

    @property
    def is_error(self) -> bool:
        """Never, or a consent the recipe does not declare."""
        return self.cls == "never" or (self.cls == "consent" and self.reason is None)

    def line(self) -> str:
        """`<class>: <option>: <why> (<how>)`."""
        return f"{self.cls}: {self.option}: {self.why} ({self.how})"

    def __str__(self) -> str:
        where = f"{self.source}:{self.lineno}" if self.lineno else self.source
        return f"{where}: {self.line()}" if where else self.line()


def option_rule(name: str, value: str | None) -> rules.OptionRule | None:
    """The first rule of the table for this option and value."""
    shown = _normal_value(name, value or "")
    for rule in rules.OPTION_RULES:
        if rule.option == name and fnmatchcase(shown, rule.value):
            return rule
    return None


def _normal_value(name: str, value: str) -> str:
    if name == "cap-add":
        return value.upper().removeprefix("CAP_")
    if name == "device":
        return value.split(":", 1)[0]
    return value


def host_path(source: str) -> str:
    """A host path as the kernel will see it: `//a/./b/../c/` -> `/a/c`; `~` and `$HOME` kept as `~`."""
    source = HOME.sub("~", source)
    normal = posixpath.normpath(re.sub("/+", "/", source))
    return normal


def mount_verdict(source: str) -> tuple[str, str] | None:
    """('never', why) or ('consent', why) for a host path; None for a model or Hugging Face cache folder."""
    path = host_path(source)
    parts = [p for p in path.split("/") if p]
    if path in rules.NEVER_EXACT:
        return "never", rules.MOUNT_NEVER_WHY["exact"].format(path=path)
    if re.fullmatch(r"/home/[^/]+|~", path):
        return "never", rules.MOUNT_NEVER_WHY["home"]
    for tree in rules.NEVER_TREES:
        if path == tree or path.startswith(tree + "/"):
            return "never", rules.MOUNT_NEVER_WHY["tree"].format(path=tree)
    if (parts and parts[-1] in rules.SOCKET_NAMES) or "docker.sock" in path:
        return "never", rules.MOUNT_NEVER_WHY["socket"]
    if any(p in rules.CREDENTIAL_PARTS for p in parts):
        return "never", rules.MOUNT_NEVER_WHY["credentials"]
    if any(p in rules.MODEL_PARTS for p in parts):
        return None
    return "consent", rules.MOUNT_CONSENT_WHY


def parse_mount(name: str, value: str) -> tuple[str | None, str | None, bool]:
    """(host source or None for a named/anonymous volume, container target, shared propagation)."""
    if name == "volume":
        parts = value.split(":")
        if len(parts) == 1:
            return None, parts[0], False
        source, target, mode = parts[0], parts[1], ",".join(parts[2:])
        shared = bool(re.search(r"(^|,)r?shared($|,)", mode))
        named = not source.startswith(("/", ".", "~", "$"))
        return (None if named else source), target, shared
    keys: dict[str, str] = {}
    for item in value.split(","):
        key, _, val = item.partition("=")
        if key == "volume-opt" and val.startswith("device="):
            keys["device"] = val.split("=", 1)[1]
        else:
            keys[key.strip().lower()] = val
    kind = keys.get("type", "volume")
    dest = keys.get("target") or keys.get("dst") or keys.get("destination")
    propagation = keys.get("bind-propagation", "") in ("shared", "rshared")
    if kind == "bind":
        return keys.get("source") or keys.get("src") or "", dest, propagation
    if "device" in keys:
        return keys["device"], dest, propagation
    return None, dest, propagation


def _consent(name: str, why: str, basis: str, declared: Mapping[str, str], field: tuple) -> PolicyFinding:
    reason = declared.get(name)
    how = rules.CONSENT_HOW.format(name=name)
    if reason is not None:
        how = f"declared: {reason}; the owner runs it with --allow '{name}'"
    return PolicyFinding("consent", name, why, how, basis, field=field, reason=reason)


def _never(name: str, why: str, basis: str, field: tuple, how: str = rules.NEVER_HOW) -> PolicyFinding:
    return PolicyFinding("never", name, why, how, basis, field=field)


def check_options(
    options: list[str], declared: Mapping[str, str], model_path: str | None = None
) -> list[PolicyFinding]:
    """Findings for `docker run` options (recipe field serving.container.options)."""
    out: list[PolicyFinding] = []
    for index, name, value in walk_options(options):
        field: tuple = ("serving", "container", "options", index)
        if name.startswith("?"):
            why = f"not a `docker run` option of docker {docker_options().version}: the policy cannot classify it"
            out.append(_never(name[1:], why, "catalogue policy", field))
            continue
        if name in rules.MOUNT_OPTIONS:
            out += _check_mount(name, value or "", declared, field, model_path)
            continue
        if name == "env":
            key, eq, val = (value or "").partition("=")
            if eq:
                out += check_env({key: val}, field_of=lambda _k, f=field: f)
            elif key:
                out += check_env({key: ""}, field_of=lambda _k, f=field: f)
            continue
        rule = option_rule(name, value)
        if rule is None:
            if name in rules.ALLOWED_OPTIONS:
                continue
            why = "not classified by the run policy"
            out.append(_never("--" + name, why, "catalogue policy", field))
            continue
        if rule.cls == "allowed":
            continue
        shown = f"--{name} {_normal_value(name, value or '')}" if rule.named_by_value else f"--{name}"
        if rule.cls == "never":
            out.append(_never(shown, rule.why, rule.basis, field))
        else:
            out.append(_consent(shown, rule.why, rule.basis, declared, field))
    return out


def _check_mount(
    name: str, value: str, declared: Mapping[str, str], field: tuple, model_path: str | None
) -> list[PolicyFinding]:
    source, target, shared = parse_mount(name, value)
    if source is None:
        return []
    shown = f"--{name} {host_path(source)}"
    if re.search(r"\$[({A-Za-z_]|`", source):
        why = "shell syntax in the host path: the runner starts docker without a shell, and the page quotes it"
        how = "write the path out, or start it with ~/ (the reader's home folder)"
        return [_never(shown, why, "catalogue policy", field, how)]
    verdict = mount_verdict(source)
    if verdict is not None and verdict[0] == "never":
        how = "never allowed: mount only the model or Hugging Face cache folder"
        return [_never(shown, verdict[1], rules.MOUNT_BASIS, field, how)]
    if shared:
        return [_consent(shown, rules.PROPAGATION_WHY, rules.PROPAGATION_BASIS, declared, field)]
    into_model = bool(model_path and target and (model_path + "/").startswith(target.rstrip("/") + "/"))
    if verdict is None or into_model:
        return []
    return [_consent(shown, verdict[1], rules.MOUNT_BASIS, declared, field)]


def check_env(env: Mapping[str, str], field_of: Any = None) -> list[PolicyFinding]:
    """Findings for environment variables: code-changing names (never) and secrets written down (never)."""
    out: list[PolicyFinding] = []
    for key, value in env.items():
        field = field_of(key) if field_of else ("serving", "env", key)
        if any(fnmatchcase(key, pattern) for pattern in rules.ENV_NEVER):
            out.append(
                _never(key, rules.ENV_NEVER_WHY, rules.ENV_BASIS, field, "never allowed: the image decides the code")
            )
        elif value_is_secret(key, value):
            why = rules.SECRET_WHY.format(masked=mask(value))
            out.append(_never(key, why, rules.SECRET_BASIS, field, rules.SECRET_HOW.format(name=key)))
    return out


def check_flags(
    flags: Mapping[str, Any],
    options: list[str],
    env: Mapping[str, str],
    image: str | None,
    env_from_host: Iterable[str] = (),
) -> list[PolicyFinding]:
    """Findings for vLLM flags: a literal --api-key (never), and the page's notes."""
    out: list[PolicyFinding] = []
    api_key = flags.get("api-key")
    if isinstance(api_key, str) and is_literal(api_key):
        why = rules.SECRET_WHY.format(masked=mask(api_key))
        how = rules.SECRET_HOW.format(name="VLLM_API_KEY")
        out.append(_never("--api-key", why, rules.SECRET_BASIS, ("serving", "flags", "api-key"), how))
    if flags.get("trust-remote-code") is True:
        out.append(
            PolicyFinding(
                "note",
                "--trust-remote-code",
                rules.NOTE_TRUST_REMOTE_CODE,
                "allowed; the page says so",
                rules.NOTE_BASIS,
                field=("serving", "flags", "trust-remote-code"),
            )
        )
    if _open_to_network(flags, options, env, image, env_from_host):
        host = str(flags.get("host", "")) or "unset (vLLM listens on every interface)"
        out.append(
            PolicyFinding(
                "note",
                f"--host {host}",
                rules.NOTE_OPEN_HOST,
                rules.NOTE_OPEN_HOST_HOW,
                rules.NOTE_BASIS,
                field=("serving", "flags", "host") if "host" in flags else ("serving", "flags"),
            )
        )
    tag = mutable_tag(image)
    if tag:
        out.append(
            PolicyFinding(
                "note",
                f"image {image}",
                rules.NOTE_MUTABLE_TAG.format(tag=tag),
                rules.NOTE_MUTABLE_TAG_HOW,
                rules.NOTE_BASIS,
                field=("serving", "image"),
            )
        )
    return out


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


def declared_map(consent: Iterable[Declared] | Mapping[str, str] | None) -> dict[str, str]:
    """The recipe's consent as {option name: reason}."""
    if consent is None:
        return {}
    if isinstance(consent, Mapping):
        return {" ".join(k.split()): v for k, v in consent.items()}
    return {" ".join(c.option.split()): c.reason for c in consent}


def check_launch(
    options: list[str],
    env: Mapping[str, str],
    flags: Mapping[str, Any],
    image: str | None,
    consent: Iterable[Declared] | Mapping[str, str] | None,
    *,
    source: str,
    env_from_host: Iterable[str] = (),
    model_path: str | None = None,
) -> list[PolicyFinding]:
    """Every finding of the policy for one launch: docker options, env, vLLM flags, image; `source` names the file."""
    declared = declared_map(consent)
    found = [
        *check_options(options, declared, model_path),
        *check_env(env),
        *check_flags(flags, options, env, image, env_from_host),
    ]
    return [replace(f, source=source) for f in found]


def check_serving(serving: Any, *, source: str) -> list[PolicyFinding]:
    """check_launch for a recipe's `serving` block (catalogue.recipe.Serving)."""
    container = serving.container
    return check_launch(
        list(container.options) if container else [],
        serving.env,
        serving.flags,
        serving.image,
        serving.consent,
        source=source,
        env_from_host=serving.env_from_host,
        model_path=serving.model_path,
    )


def unused_consent(findings: list[PolicyFinding], consent: Iterable[Declared]) -> list[str]:
    """Declared consent names that no finding needs."""
    needed = {f.option for f in findings if f.cls == "consent"}
    return [c.option for c in consent if " ".join(c.option.split()) not in needed]


def check_recipe_file(path: Path | str, serving: Any, text: str | None = None) -> list[PolicyFinding]:
    """The policy for a recipe file: its launch and every secret in its text, each with its line."""
    if text is None:
        text = Path(path).read_text(encoding="utf-8")
    found = check_serving(serving, source=str(path))
    for name in unused_consent(found, serving.consent):
        i = next(i for i, c in enumerate(serving.consent) if c.option == name)
        found.append(
            PolicyFinding(
                "never",
                name,
                "declared in serving.consent, but the launch does not use it",
                "remove it, or name the option as the policy does",
                "catalogue policy",
                source=str(path),
                field=("serving", "consent", i, "option"),
            )
        )
    located = [replace(f, lineno=yaml_line(text, f.field)) if f.field else f for f in found]
    return merge_secrets(located, secret_findings(path, text))


def secret_findings(path: Path | str, text: str) -> list[PolicyFinding]:
    """A never finding for each line of a text that holds a credential (the value masked)."""
    how = "never written down: name the variable in serving.env_from_host; the runner passes it by name"
    return [
        PolicyFinding(
            "never",
            "secret",
            f"a secret written in the file ({secret.kind}: {secret.masked})",
            how,
            rules.SECRET_BASIS,
            source=str(path),
            lineno=secret.line,
        )
        for secret in scan_text(text)
    ]


def merge_secrets(found: list[PolicyFinding], secrets: list[PolicyFinding]) -> list[PolicyFinding]:
    """The launch's findings, then each secret on a line no launch finding already reports as a secret."""
    lines = {f.lineno for f in found if f.basis == rules.SECRET_BASIS}
    return sorted([*found, *(s for s in secrets if s.lineno not in lines)], key=lambda f: f.lineno or 0)


def errors(findings: Iterable[PolicyFinding]) -> list[PolicyFinding]:
    """The findings that stop a recipe: never, and consent the recipe does not declare."""
    return [f for f in findings if f.is_error]


def required_allows(findings: Iterable[PolicyFinding]) -> list[str]:
    """The names the owner must pass with `--allow` before the runner starts anything (declared consent)."""
    return sorted({f.option for f in findings if f.cls == "consent"})


def missing_allows(findings: Iterable[PolicyFinding], allowed: Iterable[str]) -> list[str]:
    """Consent names the owner has not allowed yet (names compared with spaces collapsed)."""
    given = {" ".join(a.split()) for a in allowed}
    return [name for name in required_allows(findings) if name not in given]
