"""Credentials in recipe text: the detect-secrets plugins (a maintained detector) plus the keyword cases
`*_TOKEN`, `*_KEY`, `*_SECRET`, `*_PASSWORD` and `--api-key` with a literal value. Values are only ever
shown masked."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins import keyword
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.settings import default_settings

SKIPPED_PLUGINS = ("IPPublicDetector",)
"""An address is not a credential (and it flags `0.0.0.0`)."""
SECRET_NAME = re.compile(r"(?:^|[_-])(TOKEN|KEY|SECRET|PASSWORD|PASSWD|APIKEY)$", re.IGNORECASE)
NOT_A_VALUE = re.compile(
    r"^(|[01]|true|false|yes|no|on|off|none|null|TODO.*|\$.*|os\.environ/.*|<.*>|.{0,3}\*{8}|\*+|x+|\.\.\.|~?\d{1,6}(\.\d+)?(ms|s|%)?)$",
    re.IGNORECASE,
)
"""Values that are no credential: switches, references to a variable ($HF_TOKEN, LiteLLM's os.environ/NAME),
placeholders, a value already masked (`hf_********`), a small figure (`time to first token: ~0.1s`,
`--goodput time_to_first_token:30`)."""
KEYWORD_LINE = re.compile(
    r"--api-key[=\s,]\s*+['\"]?(?P<flag>[^\s'\",\]}#]++)"
    r"|(?<![A-Za-z0-9_-])[0-9-]*+(?P<name>[A-Za-z_][A-Za-z0-9_-]*+)['\"]?\s*+[:=]\s*+['\"]?(?P<value>[^[\s'\",\]}#]++)"
)
"""Linear time: a name is the run of name characters from its first letter (`--hf-token`: `hf-token`), tried once
per run, and no part gives back what it read (possessive): `api_keyapi_key...` is read once, not once per start."""
NAME_BASED_KINDS = frozenset({"Secret Keyword"})
"""Detectors that judge a value by the word before it (`password = ...`), not by its form: prose-shaped, so they
misfire on the random text a test model writes (`... token: lit ...`)."""


class HuggingFaceTokenDetector(RegexBasedDetector):
    """Hugging Face access tokens (`hf_` and letters/digits), which detect-secrets 1.5 has no plugin for."""

    secret_type = "Hugging Face Token"
    denylist = (re.compile(r"\bhf_[A-Za-z0-9]{16,}\b"),)


@dataclass(frozen=True)
class Secret:
    """One credential found: where, which detector, the value masked."""

    line: int
    kind: str
    masked: str
    value: str
    """The value itself: compare with it, never print it."""


PATH = re.compile(r"^(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*$")
WORD = re.compile(r"^[a-z]{4,}$")


def is_path(value: str) -> bool:
    """A file path such as `examples/tiny-cpu/runs/20261125T043519Z`: slash-separated segments, one of them a plain
    word. The entropy detector reads such paths as base64 by chance (it depends on the digits of a date stamp); a
    random credential holds no such word between slashes."""
    return bool(PATH.match(value)) and any(WORD.match(part) for part in value.split("/"))


def mask(value: str) -> str:
    """The first three characters of a long value, then stars; a short value all stars."""
    return (value[:3] if len(value) >= 12 else "") + "*" * 8


def is_secret_name(name: str) -> bool:
    """`HF_TOKEN`, `OPENAI_API_KEY`, `AWS_SECRET`, `api-key`: a name whose value is a credential."""
    return bool(SECRET_NAME.search(name))


def is_literal(value: str) -> bool:
    """A value written out (not empty, a switch, a `$VAR` reference or a placeholder)."""
    return not NOT_A_VALUE.match(value.strip())


@lru_cache(maxsize=1)
def plugins() -> tuple[BasePlugin, ...]:
    """Every detect-secrets plugin with its default settings, but the skipped ones."""
    with default_settings():
        mapping: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
        found = [cls() for cls in mapping.values() if cls.__name__ not in SKIPPED_PLUGINS]
        return (*found, HuggingFaceTokenDetector())


WINDOW = 1024
"""The detect-secrets plugins read a long line in windows of this many characters..."""
OVERLAP = 256
"""...each beginning this many characters before the last one ends, so a credential shorter than this that
crosses a window's border is whole in the next window. Each plugin's time per window is bounded, so a line's scan
is linear in its length whatever a plugin's regex does."""
WORD_LIMIT = 4 * WINDOW
"""The longest word reported as a value: a longer one is reported by its first this many characters."""
DENYLIST = re.compile("|".join(keyword.DENYLIST), re.IGNORECASE)
NAME_RUN = re.compile(r"\w++")
STOPS = frozenset("'\",[]{}=:")
"""The characters that end a word, beside white space."""


def windows(line: str) -> list[tuple[int, str]]:
    """The line in overlapping windows, each with its offset; a short line is one window."""
    step = WINDOW - OVERLAP
    return [(start, line[start : start + WINDOW]) for start in range(0, max(len(line) - OVERLAP, 1), step)]


def quiet_names(window: str) -> str:
    """The window with each word that holds two or more of the keyword detector's names (`api_keyapi_key...`)
    replaced by as many zeros: its regexes try every such name against the rest of the word, quadratic in the
    word's length. A real variable name holds one; the project's own keyword rule still reads the line."""
    return NAME_RUN.sub(lambda m: "0" * len(m[0]) if len(DENYLIST.findall(m[0], 0, WINDOW)) > 1 else m[0], window)


def _stops(char: str) -> bool:
    return char.isspace() or char in STOPS


def _word_at(line: str, part: str, start: int = 0) -> str:
    """The whole word of `line` that holds the first character of `part`, found from `start` (a plugin may report
    only part of a token); at most WORD_LIMIT characters either side."""
    at = line.find(part, start) if part else -1
    if at < 0 or _stops(line[at]):
        return part
    left, right = at, at
    while left > max(at - WORD_LIMIT, 0) and not _stops(line[left - 1]):
        left -= 1
    while right < min(at + WORD_LIMIT, len(line)) and not _stops(line[right]):
        right += 1
    return line[left:right]


def plugin_hits(line: str, number: int = 1, filename: str = "recipe.yaml") -> list[Secret]:
    """What the detect-secrets plugins find in one line."""
    with default_settings():
        return _plugin_hits(line, number, filename)


def _plugin_hits(line: str, number: int, filename: str) -> list[Secret]:
    out: dict[Secret, None] = {}  # in order, each once (windows overlap)
    for offset, window in windows(line):
        for plugin in plugins():
            text = window
            if isinstance(plugin, keyword.KeywordDetector):
                if not DENYLIST.search(window):
                    continue  # each of its patterns holds one of these names: nothing to find, 2 s a megabyte saved
                text = quiet_names(window)
            for found in plugin.analyze_line(filename=filename, line=text, line_number=number):
                part = found.secret_value or ""
                at = text.find(part) if text is not window and part else -1
                value = _word_at(line, window[at : at + len(part)] if at >= 0 else part, offset)
                if found.type == "Base64 High Entropy String" and is_path(value):
                    continue
                hit = Secret(number, found.type, mask(value), value)
                if value and is_literal(value):
                    out[hit] = None
    return list(out)


def keyword_hits(line: str, number: int = 1) -> list[Secret]:
    """`NAME_TOKEN: value`, `NAME_KEY=value`, `api-key: value`, `--api-key value` with a literal value."""
    out = []
    for match in KEYWORD_LINE.finditer(line):
        name = match.group("name") or "--api-key"
        value = match.group("value") or match.group("flag") or ""
        if (match.group("flag") or is_secret_name(name)) and is_literal(value):
            out.append(Secret(number, f"keyword {name}", mask(value), value))
    return out


def scan_text(text: str, filename: str = "recipe.yaml") -> list[Secret]:
    """Every credential in a text, one per line at most, with its 1-based line."""
    with default_settings():
        return _scan_lines(text, filename)


def scan_texts(
    texts: Iterable[str], filename: str = "run.json", generated: Iterable[bool] | None = None
) -> list[list[Secret]]:
    """`scan_text` of each text, under one detector set-up (fast for the many short strings of a JSON file).
    A text flagged in `generated` is a model's prompt or output: only credential formats are looked for there."""
    flags = iter(generated) if generated is not None else None
    with default_settings():
        return [_scan_lines(text, filename, formats_only=bool(flags and next(flags))) for text in texts]


def _scan_lines(text: str, filename: str, formats_only: bool = False) -> list[Secret]:
    found: list[Secret] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#") and "yaml-language-server" in line:
            continue
        if formats_only:
            hits = [hit for hit in _plugin_hits(line, number, filename) if hit.kind not in NAME_BASED_KINDS]
        else:
            hits = keyword_hits(line, number) or _plugin_hits(line, number, filename)
        if hits:
            found.append(hits[0])
    return found


def value_is_secret(name: str, value: str) -> bool:
    """A variable or flag value that is a credential: by its name, or by a detector."""
    if not is_literal(value):
        return False
    return is_secret_name(name) or bool(plugin_hits(value)) or bool(plugin_hits(f"{name}={value}"))


def redact(text: str, values: list[str]) -> str:
    """The text with every listed value masked."""
    for value in sorted(set(values), key=len, reverse=True):
        if value:
            text = text.replace(value, mask(value))
    return text
