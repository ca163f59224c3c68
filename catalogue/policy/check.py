"""The run policy applied to a launch: every `docker run` option, env variable and vLLM flag of a recipe in one
class (never, consent, allowed with a note), from the table in `catalogue.policy.rules`.

`catalogue validate`, `catalogue new`, `catalogue check-changes`, the runner's static gate and its gate on what
docker created (runner.planning.inspect_gate) call the same functions and print the same lines:
`file:line: <class>: <option>: <why> (<how to allow, where allowed>)`. Mounts: policy_mounts; variables:
policy_env; vLLM flags: policy_flags."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from catalogue.models.errors import yaml_line
from catalogue.models.runner_mounts import runner_binds
from catalogue.policy import paths, rules
from catalogue.policy.code_secrets import check_secrets_to_code
from catalogue.policy.docker_options import docker_options, walk_options
from catalogue.policy.env import check_env, check_env_from_host, check_env_paths, check_runner_sets
from catalogue.policy.finding import Declared, FindingClass, PolicyFinding, consent, never
from catalogue.policy.flags import check_flags, mutable_tag
from catalogue.policy.images import check_image
from catalogue.policy.mounts import (
    SHELL_SYNTAX,
    Mount,
    PolicyContext,
    device_verdict,
    folds_into_hf_cache,
    held_credential,
    host_binds,
    host_path,
    mount_verdict,
    parse_mount,
)
from catalogue.policy.option_rules import normal_value, option_rule
from catalogue.policy.secret_scan import scan_text
from catalogue.policy.words import check_words
from catalogue.policy.written_paths import landing_for

__all__ = [
    "Declared",
    "FindingClass",
    "PolicyContext",
    "PolicyFinding",
    "check_env",
    "check_env_paths",
    "check_flags",
    "check_launch",
    "check_options",
    "check_recipe_file",
    "check_serving",
    "context_for",
    "errors",
    "host_binds",
    "host_path",
    "missing_allows",
    "mount_verdict",
    "mutable_tag",
    "option_rule",
    "parse_mount",
    "required_allows",
    "walk_options",
]
SWITCH_OFF = ("false", "0")
BARE_ENV_WHY = (
    "docker copies the owner's {name} into the container: the runner passes variables itself (serving.env, or "
    "serving.env_from_host by name)"
)
MISSING_VALUE_WHY = (
    "takes a value, and no word follows it: docker would take the next word of the command (the platform profile's "
    "next option, or the image) as its value and read the rest otherwise"
)
MISSING_VALUE_HOW = "never allowed: give its value (`--tmpfs /scratch`), or leave the option out"
HOME_WORD = re.compile(r"^(\$HOME|\$\{HOME\})(?=/|$)")


def check_options(
    options: list[str], declared: Mapping[str, str], context: PolicyContext | None = None
) -> list[PolicyFinding]:
    """Findings for `docker run` options (recipe field serving.container.options)."""
    out: list[PolicyFinding] = []
    known = docker_options()
    for index, name, value in walk_options(options):
        field: tuple = ("serving", "container", "options", index)
        if name.startswith("?"):
            why = f"not a `docker run` option of docker {known.version}: the policy cannot classify it"
            out.append(never(name[1:], why, "catalogue policy", field))
            continue
        if name.startswith("!"):
            out.append(never(f"--{name[1:]}", MISSING_VALUE_WHY, "catalogue policy", field, MISSING_VALUE_HOW))
            continue
        if not known.takes_value.get(name, True) and (value or "").lower() in SWITCH_OFF:
            continue
        if name in rules.MOUNT_OPTIONS:
            out += _check_mount(name, value or "", declared, field, context)
            continue
        if name == "env":
            key, eq, val = (value or "").partition("=")
            if not eq:
                out.append(never(f"--env {key}", BARE_ENV_WHY.format(name=key), "catalogue secrets rule", field))
            elif key:
                out += check_env({key: val}, field_of=_fixed(field), declared=declared)
                out += check_runner_sets({key: val}, field_of=_fixed(field))
            continue
        rule = option_rule(name, value)
        if rule is None:
            if name not in rules.ALLOWED_OPTIONS:
                out.append(never("--" + name, "not classified by the run policy", "catalogue policy", field))
            continue
        if rule.cls == "allowed":
            continue
        shown = f"--{name} {normal_value(name, value or '')}" if rule.named_by_value else f"--{name}"
        if rule.cls == "never":
            out.append(never(shown, rule.why, rule.basis, field))
        else:
            out.append(consent(shown, rule.why, rule.basis, declared, field))
    return out


def _fixed(field: tuple) -> Callable[[str], tuple]:
    return lambda _key: field


def _check_mount(
    name: str, value: str, declared: Mapping[str, str], field: tuple, context: PolicyContext | None
) -> list[PolicyFinding]:
    mount = parse_mount(name, value)
    out: list[PolicyFinding] = []
    if mount.unreadable:
        why = f"docker's CLI cannot read this value ({mount.unreadable}), so the policy cannot say what it mounts"
        how = "write it as docker reads it: key=value fields, one line, quotes only around whole fields"
        return [never(f"--{name}", why, paths.MOUNT_BASIS, field, how)]
    if mount.repeated:
        shown = f"--{name} {host_path(mount.source)}" if mount.source is not None else f"--{name}"
        why = paths.MOUNT_REPEATED_WHY.format(keys=mount.repeated)
        return [never(shown, why, paths.MOUNT_BASIS, field, paths.MOUNT_REPEATED_HOW)]
    if mount.kind not in paths.KNOWN_MOUNT_TYPES:
        why = paths.MOUNT_TYPE_WHY.format(kind=ascii(mount.kind))
        return [never(f"--{name} type={mount.kind}", why, paths.MOUNT_BASIS, field, "use a bind, a volume or a tmpfs")]
    if mount.kind == "image":
        shown = f"--{name} image={mount.image or '(none)'}"
        return [consent(shown, paths.IMAGE_MOUNT_WHY, paths.MOUNT_BASIS, declared, field)]
    if mount.driver:
        why = f"a volume of the {mount.driver} driver: the plugin decides what it mounts"
        out.append(consent(f"--{name} volume-driver={mount.driver}", why, paths.MOUNT_BASIS, declared, field))
    if mount.driver_options:
        why = f"a volume with driver options ({', '.join(mount.driver_options)}): a remote or special filesystem"
        out.append(consent(f"--{name} volume-opt", why, paths.MOUNT_BASIS, declared, field))
    source = mount.source
    if source is None:
        return [*out, *_named_volume(name, mount, declared, field, context)]
    shown = f"--{name} {host_path(source)}"
    if SHELL_SYNTAX.search(HOME_WORD.sub("~", source)):
        why = "shell syntax in the host path: the runner starts docker without a shell, and the page quotes it"
        how = "write the path out, or start it with ~/ (the reader's home folder)"
        return [*out, never(shown, why, "catalogue policy", field, how)]
    verdict = device_verdict(source, context) if mount.device else mount_verdict(source, context)
    held = held_credential(host_path(source))
    above_only = held and verdict == ("never", paths.MOUNT_NEVER_WHY["holds"].format(path=held))
    if above_only and folds_into_hf_cache(mount, context):  # the profile's own HF cache mount replaces it
        return [*out, _folded(shown, field)]
    if verdict is not None and verdict[0] == "never":
        how = "never allowed: mount the folder the model needs, nothing wider"
        return [*out, never(shown, verdict[1], paths.MOUNT_BASIS, field, how)]
    if folds_into_hf_cache(mount, context):
        return [*out, _folded(shown, field)]
    if mount.shared:
        return [*out, consent(shown, paths.PROPAGATION_WHY, paths.PROPAGATION_BASIS, declared, field)]
    if verdict is None:
        return out
    return [*out, consent(shown, verdict[1], paths.MOUNT_BASIS, declared, field)]


def _named_volume(
    name: str, mount: Mount, declared: Mapping[str, str], field: tuple, context: PolicyContext | None
) -> list[PolicyFinding]:
    """A named volume: consent by its name, unless the profile's HF cache mount replaces it."""
    if mount.volume is None:
        return []
    if folds_into_hf_cache(mount, context):
        return [_folded(f"--{name} {mount.volume}", field)]
    return [consent(f"--{name} {mount.volume}", paths.NAMED_VOLUME_WHY, paths.MOUNT_BASIS, declared, field)]


def _folded(shown: str, field: tuple) -> PolicyFinding:
    why = "the platform profile mounts the Hugging Face cache here: the runner mounts the owner's cache instead"
    how = "the owner names the host folder in the hosts file (hf_home) or $HF_HOME"
    return PolicyFinding("note", shown, why, how, paths.MOUNT_BASIS, field=field)


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
    consent_given: Iterable[Declared] | Mapping[str, str] | None,
    *,
    source: str,
    env_from_host: Iterable[str] = (),
    context: PolicyContext | None = None,
    image_source: str | None = None,
    model: str | None = None,
) -> list[PolicyFinding]:
    """Every finding of the policy for one launch: docker options, env, vLLM flags, image; `source` names the file.
    The image is judged against the trust list of a context (none: not judged). `model`: the repository (or folder)
    vLLM loads, which names the code --trust-remote-code runs (catalogue.policy.code_secrets)."""
    declared = declared_map(consent_given)
    from_host = list(env_from_host)
    found = [
        *_no_image(image, declared),
        *(_image(image, context, declared, from_host, image_source) if context else []),
        *check_options(options, declared, context),
        *check_env(env, declared=declared),
        *(check_runner_sets(env) if image is not None else []),  # a local process keeps the recipe's (plan.py)
        *check_env_paths(env, None if image is None else host_binds(options, context), context, declared),
        *check_env_from_host(from_host, declared, context.profile_env if context else ()),
        *check_flags(flags, options, env, image, from_host, declared, landing_for(options, context)),
    ]
    found += check_secrets_to_code(found, from_host, flags, model, declared)
    return [replace(f, source=source) for f in found]


def _image(
    image: str | None, context: PolicyContext, declared: Mapping[str, str], from_host: list[str], source: str | None
) -> list[PolicyFinding]:
    return check_image(image, context.trusted_images, declared, env_from_host=from_host, image_source=source)


def _no_image(image: str | None, declared: Mapping[str, str]) -> list[PolicyFinding]:
    if image is not None:
        return []
    name = rules.NO_IMAGE_OPTION
    return [consent(name, rules.NO_IMAGE_WHY, "catalogue policy", declared, ("serving", "image"))]


def context_for(platform: Any, owner_folders: Iterable[str] = (), owner_images: Iterable[str] = ()) -> PolicyContext:
    """The policy's context for a recipe on `platform` (catalogue.models.platform.Platform or None), with the folders
    and image publishers the owner names in the hosts file."""
    cache = getattr(platform, "hf_cache", None)
    trusted = (*getattr(platform, "trusted_images", ()), *owner_images)
    return PolicyContext(
        cache.container if cache else None,
        tuple(owner_folders),
        trusted_images=trusted,
        runner_binds=runner_binds(cache),
    )


def check_serving(
    serving: Any,
    *,
    source: str,
    platform: Any = None,
    owner_folders: Iterable[str] = (),
    owner_images: Iterable[str] = (),
    model: str | None = None,
) -> list[PolicyFinding]:
    """check_launch for a recipe's `serving` block (catalogue.models.recipe.Serving) on its platform profile, with the
    folders and images the owner lets recipes use (the runner's hosts file; none for `validate`); `model`: the
    recipe's model argument (Recipe.model_arg)."""
    container = serving.container
    words = check_words(serving)
    if words:  # one line per such word: what the rest of the launch means is not what docker would read
        return [replace(f, source=source) for f in words]
    return check_launch(
        list(container.options) if container else [],
        serving.env,
        serving.flags,
        serving.image,
        serving.consent,
        source=source,
        env_from_host=serving.env_from_host,
        context=context_for(platform, owner_folders, owner_images),
        image_source=serving.image_source,
        model=model,
    )


def code_options(
    serving: Any, platform: Any = None, owner_images: Iterable[str] = (), model: str | None = None
) -> list[str]:
    """The names of the findings that let code of the recipe's choice run in its container (PolicyFinding.runs_code:
    a loads-code or unclassed flag or JSON key such as compilation-config's backend, a loads-code variable, an image
    off the trust list, the platform's and the owner's): the runner mounts the HF cache's hub read-only for them."""
    found = check_serving(serving, source="", platform=platform, owner_images=owner_images, model=model)
    return [f.option for f in found if f.runs_code]


def unused_consent(findings: list[PolicyFinding], consent: Iterable[Declared]) -> list[str]:
    """Declared consent names that no finding needs."""
    needed = {f.option for f in findings if f.cls == "consent"}
    return [c.option for c in consent if " ".join(c.option.split()) not in needed]


def check_recipe_file(
    path: Path | str,
    serving: Any,
    text: str | None = None,
    platform: Any = None,
    owner_folders: Iterable[str] = (),
    owner_images: Iterable[str] = (),
    model: str | None = None,
) -> list[PolicyFinding]:
    """The policy for a recipe file: its launch and every secret in its text, each with its line."""
    if text is None:
        text = Path(path).read_text(encoding="utf-8")
    found = check_serving(
        serving,
        source=str(path),
        platform=platform,
        owner_folders=owner_folders,
        owner_images=owner_images,
        model=model,
    )
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
