"""The catalogue's YAML files (recipe.yaml, hosts.yaml): one reader (YAML 1.2, duplicate keys refused) and
the recipe writer that matches it.

Files are read with yaml-rs (Rust; its public `loads`), the YAML 1.2 core schema that editors' YAML
language servers also use: `yes`, `on` and `no` stay strings, `1e3` is a number, a key written twice
is an error instead of PyYAML's silent last-wins. It parses a recipe about 15 times faster than
PyYAML's C loader, which made YAML half of a large site build. PyYAML writes YAML (`dump_yaml`, with
libyaml's C emitter where PyYAML has it; the router config, read by LiteLLM) and locates error lines
(catalogue.models.errors.yaml_line).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
import yaml_rs

from catalogue.models.bounded import check_yaml
from catalogue.models.errors import CatalogueError

_AT_LINE = re.compile(r"at line (\d+)")
_DUPLICATE = re.compile(r"duplicate mapping key: '(.*)'")


def parse_yaml(text: str, path: Path | str) -> Any:
    """The document in `text` (None when empty); a syntax error or a repeated key is a CatalogueError with its line,
    and so is text beyond the limits (catalogue.models.bounded: size, nesting, aliases expanded), before it is
    parsed."""
    check_yaml(text, path)
    try:
        return yaml_rs.loads(text.removeprefix("\ufeff"))
    except yaml_rs.YAMLDecodeError as exc:
        message = str(exc).strip()
        duplicate = _DUPLICATE.search(message)
        if duplicate:
            key = duplicate.group(1)
            raise CatalogueError(path, f"YAML: key {key!r} is written twice", line=_duplicate_line(text, key)) from None
        at = _AT_LINE.search(message)
        problem = message.splitlines()[-1]
        raise CatalogueError(path, f"YAML syntax error: {problem}", line=int(at.group(1)) if at else None) from None
    except TypeError:  # yaml-rs on a complex key (`? [a]`, `? {a: b}`): Python cannot hash it
        raise CatalogueError(path, "YAML: a key that is a list or a mapping (`? ...`): keys are plain words") from None


def _duplicate_line(text: str, key: str) -> int | None:
    """The line of the second `key` in a mapping that has it twice (PyYAML's nodes carry line marks)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            keys = [k for k, _ in node.value if isinstance(k, yaml.ScalarNode) and k.value == key]
            if len(keys) > 1:
                return keys[1].start_mark.line + 1
            stack.extend(v for _, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return None


@lru_cache(maxsize=8192)
def plain_scalar_safe(value: str) -> bool:
    """Whether `value` written unquoted as a mapping value reads back here as the same string (kept per value: the
    sparkrun files of a build ask it of the same flag names and values again and again)."""
    try:
        return yaml_rs.loads(f"k: {value}") == {"k": value}
    except yaml_rs.YAMLDecodeError:
        return False


_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's emitter where PyYAML was built with it (five times faster on a sparkrun file; the same text)."""


class _RecipeDumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Mappings as blocks, lists of plain values on one line (as the hand-written recipes are)."""


def _list(dumper: yaml.SafeDumper, value: list) -> yaml.Node:
    flow = all(not isinstance(v, (dict, list)) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    """Quoted when PyYAML would leave it plain but the YAML 1.2 reader would read something else (`1e3`, `09`)."""
    style = None if plain_scalar_safe(value) else "'"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_RecipeDumper.add_representer(list, _list)
_RecipeDumper.add_representer(str, _str)


def dump_yaml(data: object) -> str:
    """Recipe-style YAML text that `parse_yaml` reads back as `data`."""
    return yaml.dump(data, Dumper=_RecipeDumper, sort_keys=False, allow_unicode=True, width=110)
