"""What the run policy knows of `vllm serve` flags: each flag's name as vLLM's parser reads it, and its class.

Types come from the committed flag snapshots (snapshots/vllm-<v>.json): a switch, an int, a float or a fixed
choice in every snapshot that has the flag is data. Every other flag takes free text and has its class in
catalogue/policy/flags.yaml (loads code, sends data, serves files, reads a path, writes a path, data, or a JSON
config whose keys are classed one by one). A flag or key with no class there is consent (policy_flags)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from catalogue.models.errors import CatalogueError
from catalogue.models.yaml_files import parse_yaml

CLASSES_FILE = Path(__file__).with_name("flags.yaml")
SNAPSHOTS = Path(__file__).resolve().parents[2] / "snapshots"
FLAG_CLASSES = ("never", "loads-code", "sends-data", "serves-files", "reads-path", "writes-path", "data", "config")
KEY_CLASSES = ("loads-code", "sends-data", "serves-files", "reads-path", "writes-path", "data")
TYPED = ("int", "float", "human_readable_int")


@dataclass(frozen=True)
class Resolved:
    """A recipe's flag name as vLLM's parser reads it."""

    name: str | None
    """The flag's first long spelling without dashes (`tool-parser-plugin`); None when it cannot be told."""
    keys: tuple[str, ...] = ()
    """The JSON keys of a dotted name (`compilation-config.pass_config.x` -> ('pass_config', 'x'))."""
    ambiguous: tuple[str, ...] = ()
    """The flags an abbreviation could stand for, when more than one."""


@cache
def snapshot_files() -> tuple[tuple[Path, tuple[dict[str, Any], ...]], ...]:
    """Every committed snapshot's options, each checked (checked_options): the policy keys a flag on its name."""
    out = [
        (path, checked_options(path, json.loads(path.read_text(encoding="utf-8"))["options"]))
        for path in sorted(SNAPSHOTS.glob("vllm-*.json"))
    ]
    spelled: dict[str, tuple[str, Path]] = {}
    for path, options in out:
        for option in options:
            for spelling in option["spellings"]:
                first = spelled.setdefault(spelling, (option["dest"], path))
                if first[0] != option["dest"]:
                    why = f"{spelling} is {option['dest']} here and {first[0]} in {first[1].name}"
                    raise CatalogueError(path, f"{why}: a spelling names one flag in every release", "options")
    return tuple(out)


def checked_options(path: Path, options: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """A snapshot's options, refused in one line where one could rename a flag: each option's dest is its first long
    spelling's (argparse's own rule, so the class follows vLLM's name, not the file's word), and every other long
    spelling is that same name, a switch's negative (`--no-x`, `--enable-x` / `--disable-x` of a switch), or an
    alias flags.yaml names (aliases:)."""
    aliases = classes_file().get("aliases") or {}
    for i, option in enumerate(options):
        longs = [s[2:] for s in option["spellings"] if s.startswith("--")]
        dest = str(option["dest"])
        if not longs or longs[0].replace("-", "_") != dest:
            why = f"dest {dest!r} is not the name of its first long spelling ({', '.join(longs[:1]) or 'none'})"
            raise CatalogueError(path, f"{why}: the policy classes a flag by vLLM's own name", f"options[{i}].dest")
        for other in longs[1:]:
            same = other.replace("-", "_") == dest or aliases.get(other) == longs[0]
            switch = option["nargs"] == 0 and _switch_word(other) == _switch_word(dest)
            if not (same or switch):
                why = f"--{other} is spelt as another name of --{longs[0]}, which flags.yaml does not list (aliases:)"
                raise CatalogueError(path, why, f"options[{i}].spellings")
    return tuple(options)


def _switch_word(name: str) -> str:
    """A switch's name without its negation or its enable/disable word."""
    return re.sub(r"^(?:(?:no|enable|disable)_)+", "", name.replace("-", "_"))


@cache
def snapshot_options() -> dict[str, list[dict[str, Any]]]:
    """Every long spelling of every committed snapshot -> that option in each snapshot that has it."""
    out: dict[str, list[dict[str, Any]]] = {}
    for _, options in snapshot_files():
        for option in options:
            for spelling in option["spellings"]:
                if spelling.startswith("--"):
                    out.setdefault(spelling[2:], []).append(option)
    return out


def canonical(option: dict[str, Any]) -> str:
    """An option's name as the policy knows it: vLLM's dest, with dashes (its first long spelling, once checked)."""
    return str(option["dest"]).replace("_", "-")


def is_typed(option: dict[str, Any]) -> bool:
    """A switch, a number or a fixed choice: a value vLLM's parser checks itself."""
    return option["nargs"] == 0 or bool(option["choices"]) or option["type"] in TYPED


@cache
def resolve(name: str) -> Resolved:
    """`name` as vLLM reads `--name`: underscores as dashes before a dot, a dotted JSON key path, and an
    abbreviation expanded as each committed release's parser expands it (an exact name first, else the one flag it
    begins); a name that means different flags in different releases is ambiguous. Kept per name: the committed
    snapshots are read once, so the answer cannot change in a process."""
    base, _, rest = name.partition(".")
    base = base.replace("_", "-")
    keys = tuple(k.replace("-", "_") for k in rest.split(".")) if rest else ()
    found: set[str] = set()
    for _, options in snapshot_files():
        names = {s[2:]: canonical(o) for o in options for s in o["spellings"] if s.startswith("--")}
        found |= (
            {names[base]} if base in names else {full for spelling, full in names.items() if spelling.startswith(base)}
        )
    if len(found) == 1:
        return Resolved(found.pop(), keys)
    if found:
        return Resolved(None, keys, tuple(sorted(found)))
    return Resolved(base, keys)


@cache
def classes_file() -> dict[str, Any]:
    """catalogue/policy/flags.yaml as read."""
    return parse_yaml(CLASSES_FILE.read_text(encoding="utf-8"), CLASSES_FILE)


@cache
def flag_classes() -> dict[str, str]:
    """Free-text flag (and image-only flag) -> its class."""
    data = classes_file()
    out: dict[str, str] = {}
    for section in ("flags", "image_flags"):
        for cls, names in data[section].items():
            if cls not in FLAG_CLASSES:
                raise ValueError(f"{CLASSES_FILE}: {section}.{cls}: not a class ({', '.join(FLAG_CLASSES)})")
            for name in names:
                out[name] = cls
    return out


def flag_class(name: str) -> str | None:
    """The class of a resolved flag name: its listed class first (a snapshot cannot make a listed flag data), else
    data when vLLM's type makes it so in every snapshot, else None."""
    listed = flag_classes().get(name)
    if listed is not None:
        return listed
    found = snapshot_options().get(name)
    return "data" if found and all(is_typed(o) for o in found) else None


def named_values(name: str) -> tuple[str, ...] | None:
    """The only values that make a free-text flag data (flags.yaml named_values:); None for a flag with no list."""
    names = (classes_file().get("named_values") or {}).get(name)
    return None if names is None else tuple(str(n) for n in names)


def key_class(config: dict[str, Any], key: str, value: Any) -> str | dict[str, Any] | None:
    """The class of one key of a JSON config (the value decides for a `when:` key); a nested table for a key
    whose own keys are classed; None when the key has no class."""
    when = (config.get("when") or {}).get(key)
    if when is not None:
        return when.get(str(value) if not isinstance(value, bool) else str(value).lower(), when.get("*"))
    nested = (config.get("keys") or {}).get(key)
    if nested is not None:
        return nested
    return next((cls for cls in KEY_CLASSES if key in (config.get(cls) or ())), None)


def config_table(name: str) -> dict[str, Any]:
    """The key classes of a config flag (empty: no key is known)."""
    return classes_file()["configs"].get(name) or {}


def unclassed(snapshot: dict[str, Any]) -> list[str]:
    """The free-text flags and JSON keys of one snapshot (as read from its file) that have no class."""
    out = []
    classes = flag_classes()
    for option in snapshot["options"]:
        name = canonical(option)
        if is_typed(option):
            continue
        if name not in classes:
            out.append(f"--{name}")
        elif classes[name] == "config":
            table = config_table(name)
            out += [f"--{name} {k}" for k in option["json_keys"] or () if key_class(table, k, None) is None]
    return out
