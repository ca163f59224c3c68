"""Edits of a copied recipe folder that the policy corpora (tests/policy_corpus*.py) are written in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml


def serving(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / "recipe.yaml"
        data = yaml.safe_load(path.read_text())
        change(data["serving"])
        path.write_text(yaml.safe_dump(data, sort_keys=False))

    return apply


def options(*words: str) -> Callable[[Path], None]:
    return serving(lambda s: s["container"]["options"].extend(words))


def env(name: str, value: str) -> Callable[[Path], None]:
    return serving(lambda s: s["env"].update({name: value}))


def flag(name: str, value) -> Callable[[Path], None]:
    return serving(lambda s: s["flags"].update({name: value}))


def consent(option: str) -> Callable[[Path], None]:
    return serving(lambda s: s.update({"consent": [{"option": option, "reason": "a reason"}]}))
