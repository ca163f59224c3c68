"""`docker run` options, walked as docker reads them: each option's long name and value, and the words it spans.

Which options take a value comes from the committed `docker run --help` snapshot (catalogue.policy.docker_run).
The run policy classifies what `walk_options` finds; platform profiles merge by `option_key`."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import lru_cache

from catalogue.policy.docker_run import DockerRunOptions

OPTION_ALIASES = {"net": "network", "net-alias": "network-alias"}
"""Spellings docker accepts but leaves out of `docker run --help`."""


@lru_cache(maxsize=1)
def docker_options() -> DockerRunOptions:
    """Which `docker run` options take a value (the committed snapshot)."""
    return DockerRunOptions.committed()


def walk_options(options: Sequence[str]) -> list[tuple[int, str, str | None]]:
    """(index of the first word, long option name, value) for each option; an unknown word gives name '?', an option
    that takes a value with no word left after it name '!' and no value (docker would take the next word of
    whatever follows these options: the platform profile's, or the image).

    Kept per list of words: the policy, the profile merge and a page's launch blocks walk the same options and the
    same single options again and again (about 80 walks of some 15 lists a recipe)."""
    return list(_walk(tuple(options)))


@lru_cache(maxsize=4096)
def _walk(options: tuple[str, ...]) -> tuple[tuple[int, str, str | None], ...]:
    known = docker_options()
    out: list[tuple[int, str, str | None]] = []
    i = 0
    while i < len(options):
        word, start = options[i], i
        i += 1
        if word.startswith("--"):
            long, eq, value = word[2:].partition("=")
            long = OPTION_ALIASES.get(long, long)
            if long not in known.takes_value:
                out.append((start, "?" + word, None))
                continue
            if known.takes_value[long] and not eq:
                if i >= len(options):
                    out.append((start, "!" + long, None))
                    continue
                value = options[i]
                i += 1
            out.append((start, long, value if (eq or known.takes_value[long]) else None))
        elif word.startswith("-") and len(word) > 1:
            letters = word[1:]
            for j, letter in enumerate(letters):
                long = known.short.get(letter, "")
                if not long:
                    out.append((start, "?-" + letter, None))
                    break
                if known.takes_value[long]:
                    value = letters[j + 1 :].removeprefix("=")
                    if not value:
                        if i >= len(options):
                            out.append((start, "!" + long, None))
                            break
                        value = options[i]
                        i += 1
                    out.append((start, long, value))
                    break
                out.append((start, long, None))
        else:
            out.append((start, "?" + word, None))
    return tuple(out)


def split_options(words: list[str]) -> list[list[str]]:
    """The words of each option: `--ipc host`, `--ipc=host`, `-v a:b`, `-p8000:8000`, `-it` each one group."""
    starts = sorted({start for start, _, _ in walk_options(words)})
    bounds = [*starts, len(words)]
    return [words[a:b] for a, b in itertools.pairwise(bounds)]


def option_value(group: list[str]) -> str:
    """The value of one grouped option ('' for a switch)."""
    walked = walk_options(group)
    return (walked[-1][2] or "") if walked else ""


def option_name(group: list[str]) -> str:
    """The long name of one grouped option: `-v a:b` -> `volume`, `--net=host` -> `network`."""
    walked = walk_options(group)
    return walked[-1][1] if walked else group[0]


def option_key(group: list[str]) -> str:
    """What an option sets, so that a recipe's option replaces the profile's: `ulimit:memlock`, `volume:/dst`."""
    name = option_name(group)
    value = option_value(group)
    if name == "ulimit":
        return f"ulimit:{value.split('=', 1)[0]}"
    if name == "volume":
        parts = value.split(":")
        return f"volume:{parts[1] if len(parts) > 1 else parts[0]}"
    if name in ("device", "cap-add", "label", "add-host", "mount"):
        return f"{name}:{value}"
    return name
