"""Text from untrusted files (recipes, run files, imports, sparkrun files) as it reaches a terminal: every control
character written as its escape, so no file can move the cursor, retitle the window, rewrite a line already shown,
hide text or reorder it (C0 and C1 controls, DEL, the line and paragraph separators, the bidirectional overrides).

`printable` is for one value shown on one line (newlines escaped too); `SafeStream` is what `catalogue` writes all
its output through (catalogue.commands.cli.main), keeping only the newline, tab and carriage return the commands
themselves print."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal acts on or that change how the text around them reads."""
KEPT = frozenset("\n\t\r")
"""What the commands' own output uses: lines, columns, the progress bar's redraw."""


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """`text` as one line with every control character (newlines too) written as `\\xNN` / `\\uNNNN`."""
    return CONTROL.sub(lambda m: _escape(m.group()), str(text))


def terminal_safe(text: str) -> str:
    """`text` with every control character but newline, tab and carriage return written as its escape."""
    return CONTROL.sub(lambda m: m.group() if m.group() in KEPT else _escape(m.group()), text)


class SafeStream:
    """A text stream that writes through `terminal_safe`; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write `text` with its control characters escaped."""
        return self.stream.write(terminal_safe(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def safe_terminal() -> Iterator[None]:
    """sys.stdout and sys.stderr as SafeStreams while the block runs."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
