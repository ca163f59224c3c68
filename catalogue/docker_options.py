"""`docker run` options as groups of words (an option and its value), keyed by what they set.

Which options take a value comes from the committed `docker run --help` snapshot (catalogue.paste.docker_run)."""

from __future__ import annotations

from functools import cache

from catalogue.paste.docker_run import DockerRunOptions


@cache
def _known() -> DockerRunOptions:
    return DockerRunOptions.committed()


def long_name(word: str) -> str:
    """`--ipc=host` -> `ipc`; `-v` -> `volume`; `-it` -> `interactive` (its first letter)."""
    if word.startswith("--"):
        return word[2:].split("=", 1)[0]
    return _known().short.get(word[1:2], word[1:])


def split_options(words: list[str]) -> list[list[str]]:
    """Group option words: `--ipc host`, `--ipc=host`, `-v a:b`, `-p8000:8000`, `-d` each become one group."""
    known = _known()
    groups: list[list[str]] = []
    i = 0
    while i < len(words):
        word = words[i]
        name = long_name(word)
        inline = ("=" in word and word.startswith("--")) or (
            not word.startswith("--") and len(word) > 2 and known.takes_value.get(name, False)
        )
        takes = known.takes_value.get(name, False) and not inline and word.startswith("-")
        groups.append(words[i : i + 2] if takes else [word])
        i += 2 if takes else 1
    return groups


def option_value(group: list[str]) -> str:
    """The value of a grouped option ('' for a switch)."""
    if len(group) == 2:
        return group[1]
    word = group[0]
    if word.startswith("--"):
        return word.split("=", 1)[1] if "=" in word else ""
    return word[2:].removeprefix("=")


def option_key(group: list[str]) -> str:
    """What an option sets, so that a recipe's option replaces the profile's: `ulimit:memlock`, `volume:/dst`."""
    name = long_name(group[0])
    name = {"net": "network"}.get(name, name)
    value = option_value(group)
    if name == "ulimit":
        return f"ulimit:{value.split('=', 1)[0]}"
    if name == "volume":
        parts = value.split(":")
        return f"volume:{parts[1] if len(parts) > 1 else parts[0]}"
    if name in ("device", "cap-add", "label", "add-host", "mount"):
        return f"{name}:{value}"
    return name
