"""Findings for one recipe: its flags parsed by a checker, free-text flags against registries."""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from catalogue.flags.checkers import ArgvChecker
from catalogue.flags.snapshot import FlagSnapshot, newest_committed, read_snapshot, version_key
from catalogue.models.launch import flag_words, flags_argv
from catalogue.models.loading import RECIPE_FILE, Entry
from catalogue.policy.flag_classes import flag_class, resolve

Level = Literal["error", "warning", "info"]
PYDANTIC_TYPE = re.compile(r"\s*\[type=.*$")


@dataclass(frozen=True)
class Finding:
    """One verdict about one flag of one recipe."""

    level: Level
    file: Path
    flag: str | None
    message: str
    vllm: str

    def __str__(self) -> str:
        flag = f"--{self.flag}: " if self.flag else ""
        return f"{self.file}: {self.level}: {flag}{self.message} [{self.vllm}]"


def suggest(word: str, candidates: list[str]) -> str | None:
    """The closest candidate, case-insensitively; ties go to the nearest characters (mxfp5 -> mxfp4)."""
    lowered = {c.lower(): c for c in candidates}
    target = word.lower()
    matches = difflib.get_close_matches(target, list(lowered), n=8, cutoff=0.6)
    if not matches:
        return None
    score = difflib.SequenceMatcher(None, target, matches[0]).ratio()
    best = [m for m in matches if difflib.SequenceMatcher(None, target, m).ratio() == score]
    return lowered[min(best, key=lambda m: (_char_distance(target, m), m))]


def _char_distance(a: str, b: str) -> int:
    """Sum of code-point gaps at positions that differ, plus the length difference."""
    return sum(abs(ord(x) - ord(y)) for x, y in zip(a, b)) + 32 * abs(len(a) - len(b))


def explain(message: str, checker: ArgvChecker, name: str) -> str:
    """A parser message as one line, with a suggestion for an unknown flag."""
    if message.startswith("unrecognized arguments"):
        close = suggest(name.replace("_", "-"), checker.snapshot.long_names)
        return "unknown flag" + (f" (did you mean --{close}?)" if close else "")
    message = re.sub(r"^argument [^:]+: ", "", message)
    if "validation error for" in message:
        lines = [ln for ln in message.splitlines()[1:] if ln.strip() and "errors.pydantic.dev" not in ln]
        pairs = []
        for key, detail in zip(lines[::2], lines[1::2]):
            pairs.append(f"{key.strip() or '(value)'}: {PYDANTIC_TYPE.sub('', detail).strip()}")
        if len(lines) == 1:
            pairs = [PYDANTIC_TYPE.sub("", lines[0]).strip()]
        head = message.splitlines()[0].split(" for ")[-1]
        return f"{head}: " + "; ".join(pairs)
    return " ".join(message.split())


def flag_errors(entry: Entry, checker: ArgvChecker) -> list[Finding]:
    """Only the errors of the recipe's upstream flags (what decides whether a vLLM accepts them)."""
    recipe, file = entry.recipe, entry.folder / RECIPE_FILE
    version = f"vLLM {checker.snapshot.vllm_version}"
    upstream = {n: v for n, v in recipe.serving.flags.items() if n not in recipe.serving.image_flags}
    return _parse_findings(file, recipe.model_arg, upstream, checker, version) + _registry_findings(
        file, upstream, checker, version
    )


def _newest_release_after(checker: ArgvChecker) -> FlagSnapshot | None:
    """The newest committed release's snapshot when it is newer than the checked vLLM: an image flag the checked
    vLLM still has but that release dropped is declared for the releases after it, not by mistake."""
    path = newest_committed()
    if path is None or version_key(path.stem.removeprefix("vllm-")) <= version_key(checker.snapshot.vllm_version):
        return None
    return _read_once(path)


@functools.lru_cache(maxsize=4)
def _read_once(path: Path) -> FlagSnapshot:
    return read_snapshot(path)


def check_flags(entry: Entry, checker: ArgvChecker, image_checker: ArgvChecker | None = None) -> list[Finding]:
    """Every finding for the recipe's flags."""
    recipe, file = entry.recipe, entry.folder / RECIPE_FILE
    version = f"vLLM {checker.snapshot.vllm_version}"
    findings: list[Finding] = []
    image_flags = recipe.serving.image_flags
    parsed = {n: v for n, v in recipe.serving.flags.items() if flag_class(resolve(n).name or "") != "never"}
    upstream = {n: v for n, v in parsed.items() if n not in image_flags}
    findings += _parse_findings(file, recipe.model_arg, upstream, checker, version)
    findings += _registry_findings(file, upstream, checker, version)
    findings += _spelling_findings(file, upstream, checker, version)
    newer = _newest_release_after(checker)
    for name, image in image_flags.items():
        if checker.snapshot.option(name) is not None and newer is not None and newer.option(name) is None:
            findings.append(
                Finding(
                    "info",
                    file,
                    name,
                    f"provided by {image}; {version} has it too, vLLM {newer.vllm_version} no longer does",
                    version,
                )
            )
        elif checker.snapshot.option(name) is not None:
            findings.append(
                Finding("warning", file, name, f"declared as provided by {image}, but {version} has it too", version)
            )
        elif image_checker is None:
            findings.append(
                Finding(
                    "info", file, name, f"not in {version}; provided by {image} (no snapshot of that image)", version
                )
            )
    if image_checker is not None:
        image_version = f"vLLM {image_checker.snapshot.vllm_version} in {recipe.serving.image}"
        all_flags = dict(parsed)
        findings += _parse_findings(file, recipe.model_arg, all_flags, image_checker, image_version)
        findings += _registry_findings(file, all_flags, image_checker, image_version)
        for name, image in image_flags.items():
            findings.append(
                Finding(
                    "info",
                    file,
                    name,
                    f"not in {version}; provided by {image}, checked against its snapshot",
                    image_version,
                )
            )
    return findings


def _parse_findings(file: Path, model: str, flags: dict, checker: ArgvChecker, version: str) -> list[Finding]:
    namespace, message = checker.parse([model, *flags_argv(flags)])
    if message is None and namespace is not None:
        cross = checker.cross_check(namespace)
        if cross is None:
            return []
        named = re.findall(r"--([a-z0-9-]+)", cross)
        return [Finding("error", file, named[0] if named else None, cross, version)]
    out = []
    for name, value in flags.items():
        _, one = checker.parse([model, *flag_words(name, value)])
        if one is not None:
            out.append(Finding("error", file, name, explain(one, checker, name), version))
    if not out:
        out.append(Finding("error", file, None, explain(message or "", checker, ""), version))
    return out


CASE_INSENSITIVE_REGISTRIES = ("attention-backend",)
"""Registries vLLM reads in any letter case (AttentionConfig upper-cases the backend's name before the lookup);
tests/test_flags.py fails if the installed vLLM stops accepting a lower-case name."""


def _registry_findings(file: Path, flags: dict, checker: ArgvChecker, version: str) -> list[Finding]:
    out = []
    for name, value in flags.items():
        spec = checker.snapshot.option(name)
        if spec is None:
            continue
        long_name = next(s[2:] for s in spec.spellings if s.startswith("--"))
        valid = checker.snapshot.registries.get(long_name)
        if valid is None or spec.choices or str(value) in valid:
            continue
        if long_name in CASE_INSENSITIVE_REGISTRIES and str(value).upper() in valid:
            continue
        close = suggest(str(value), valid)
        hint = f" (did you mean {close!r}?)" if close else ""
        out.append(Finding("error", file, name, f"{value!r} is not a registered value{hint}", version))
    return out


def _spelling_findings(file: Path, flags: dict, checker: ArgvChecker, version: str) -> list[Finding]:
    out = []
    for name in flags:
        spec = checker.snapshot.option(name)
        if spec is None:
            full = checker.snapshot.expand(name)
            if full is not None:
                out.append(Finding("warning", file, name, f"abbreviation of --{full}; spell it in full", version))
            continue
        if spec.deprecated:
            out.append(Finding("warning", file, name, "deprecated in this vLLM", version))
    return out
