"""Credentials in recipe text: the detect-secrets plugins (a maintained detector) plus the keyword cases
`*_TOKEN`, `*_KEY`, `*_SECRET`, `*_PASSWORD` and `--api-key` with a literal value. Values are only ever
shown masked."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
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
    r"--api-key[=\s,]\s*['\"]?(?P<flag>[^\s'\",\]}#]+)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*)['\"]?\s*[:=]\s*['\"]?(?P<value>[^[\s'\",\]}#]+)"
)
NAME_BASED_KINDS = frozenset({"Secret Keyword"})
"""Detectors that judge a value by the word before it (`password = ...`), not by its form: prose-shaped, so they
misfire on the random text a test model writes (`... token: lit ...`)."""
TOKEN_CHARS = re.compile(r"[^\s'\",\[\]{}=:]+")


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


def _word_at(line: str, part: str) -> str:
    """The whole word of `line` that holds `part` (a plugin may report only part of a token)."""
    start = line.find(part)
    if start < 0:
        return part
    for match in TOKEN_CHARS.finditer(line):
        if match.start() <= start < match.end():
            return match.group(0)
    return part


def plugin_hits(line: str, number: int = 1, filename: str = "recipe.yaml") -> list[Secret]:
    """What the detect-secrets plugins find in one line."""
    with default_settings():
        return _plugin_hits(line, number, filename)


def _plugin_hits(line: str, number: int, filename: str) -> list[Secret]:
    out = []
    for plugin in plugins():
        for found in plugin.analyze_line(filename=filename, line=line, line_number=number):
            value = _word_at(line, found.secret_value or "")
            if found.type == "Base64 High Entropy String" and is_path(value):
                continue
            if value and is_literal(value):
                out.append(Secret(number, found.type, mask(value), value))
    return out


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
