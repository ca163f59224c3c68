"""The run policy on the recipe strings that become words of a command line (docker options, variables, vLLM flags,
the image, the model path): a control or format character in one (a newline, NUL, escape, a bidirectional override,
a zero-width space, a line separator, ...) is never allowed, nor an image
that starts with '-' or holds whitespace, nor a flag value that vLLM would read as a flag.

docker reads a `--mount` value up to its first newline, a terminal runs what an escape sequence writes, and a NUL
ends a C string: the same word means one thing to the catalogue and another to what runs it. One line per word."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

from catalogue.policy.finding import PolicyFinding, never

WHY = (
    "a control or format character ({char}) in a word of the command line: docker and the shell read it otherwise, "
    "and the command as printed (bidirectional overrides, zero-width and separator characters) is not what runs"
)
CATEGORIES = ("Cc", "Cf", "Zl", "Zp")
"""Unicode's control (C0, DEL, C1), format (bidirectional overrides and isolates, zero-width characters, the soft
hyphen, ...), line-separator and paragraph-separator characters."""
HOW = "never allowed: write it on one line with printable characters"
BASIS = "catalogue policy (docker's CSV reads one line)"


def control_char(text: str) -> str | None:
    """The first control or format character of `text` as U+XXXX (CATEGORIES: U+000A, U+202E, U+200B, U+2028), or
    None."""
    for char in text:
        if unicodedata.category(char) in CATEGORIES:
            return f"U+{ord(char):04X}"
    return None


def _strings(value: Any, field: tuple) -> Iterator[tuple[tuple, str]]:
    if isinstance(value, str):
        yield field, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield field, str(key)
            yield from _strings(item, (*field, key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(item, (*field, i))


def argv_strings(serving: Any) -> Iterator[tuple[tuple, str]]:
    """(field, string) of every recipe string the runner puts on a command line."""
    container = serving.container
    if container is not None:
        yield from _strings(list(container.options), ("serving", "container", "options"))
        if container.name:
            yield ("serving", "container", "name"), container.name
    yield from _strings(dict(serving.env), ("serving", "env"))
    yield from _strings(list(serving.env_from_host), ("serving", "env_from_host"))
    yield from _strings(dict(serving.flags), ("serving", "flags"))
    for name in ("image", "model_path"):
        value = getattr(serving, name, None)
        if isinstance(value, str):
            yield ("serving", name), value


def check_words(serving: Any) -> list[PolicyFinding]:
    """A never finding for each command-line string of a recipe's `serving` block that holds a control character."""
    out: list[PolicyFinding] = []
    for field, text in argv_strings(serving):
        char = control_char(text)
        if char is not None:
            shown = text.encode("unicode_escape").decode("ascii")
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            out.append(never(shown, WHY.format(char=char), BASIS, field, HOW))
    return out + check_image_word(serving) + check_flag_values(serving)


IMAGE_WHY = "the image is one word after the options: docker reads a word that starts with '-' as one more option"
IMAGE_SPACE_WHY = "whitespace in the image: a shell reads it as several words, and no image reference holds one"
IMAGE_HOW = "never allowed: write the image reference as docker names it (repository[:tag][@digest])"
IMAGE_BASIS = "catalogue policy (a word of the command line means one thing)"


def check_image_word(serving: Any) -> list[PolicyFinding]:
    """A never finding for an image that docker (or a shell) would not read as one image reference: it starts with
    '-' (`-v/etc:/x` becomes an option, the next word the image) or holds whitespace (control characters: above)."""
    image = getattr(serving, "image", None)
    if not isinstance(image, str) or control_char(image) is not None:
        return []
    shown = f"image {image[:60]}"
    if image.startswith("-"):
        return [never(shown, IMAGE_WHY, IMAGE_BASIS, ("serving", "image"), IMAGE_HOW)]
    if any(char.isspace() for char in image):
        return [never(shown, IMAGE_SPACE_WHY, IMAGE_BASIS, ("serving", "image"), IMAGE_HOW)]
    return []


FLAG_WHY = "vLLM's parser reads a word that starts with '-' and a letter as a flag of its own"
FLAG_HOW = "never allowed: every flag is a key of serving.flags, where the run policy judges it"


def check_flag_values(serving: Any) -> list[PolicyFinding]:
    """A never finding for a flag value (a list item or a string) or the model path that vLLM would read as one more
    flag: `served-model-name: [m, --worker-cls, evil.W]` puts `--worker-cls` past the policy, which judges names."""
    words: list[tuple[tuple, Any]] = [
        (("serving", "flags", name), value) for name, value in dict(serving.flags).items()
    ]
    words += [(("serving", "model_path"), getattr(serving, "model_path", None))]
    return [
        never(item[:60], FLAG_WHY, BASIS, field, FLAG_HOW)
        for field, value in words
        for item in (value if isinstance(value, list | tuple) else [value])
        if isinstance(item, str) and len(item) > 1 and item[0] == "-" and not (item[1].isdigit() or item[1] == ".")
    ]
