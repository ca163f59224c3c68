"""Split pasted shell text into commands of words, as a POSIX shell would (quotes, escapes, continuations,
comments, `;` `&&` `||` `|` `&` and newlines between commands). Nothing is expanded: `$VAR` and `~` stay as
written, and each command notes the words where a shell would have expanded something."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalogue.models.errors import CatalogueError

OPERATORS = ("&&", "||", ";", "|", "&")


@dataclass
class Command:
    """One simple command: its words, the line it starts on, and words a shell would expand."""

    words: list[str] = field(default_factory=list)
    line: int = 1
    expanded: list[str] = field(default_factory=list)
    after_newline: bool = False
    """True when only a newline separates it from the command before (no `;`, `&&`, ...)."""


@dataclass
class _Scanner:
    text: str
    label: str
    pos: int = 0
    line: int = 1

    def peek(self, n: int = 0) -> str:
        i = self.pos + n
        return self.text[i] if i < len(self.text) else ""

    def take(self) -> str:
        ch = self.text[self.pos]
        self.pos += 1
        if ch == "\n":
            self.line += 1
        return ch


def split_commands(text: str, label: str) -> list[Command]:
    """Commands in order; an unbalanced quote is a one-line error naming its line."""
    s = _Scanner(text, label)
    commands: list[Command] = [Command()]
    word: list[str] | None = None
    expands = False

    def end_word() -> None:
        nonlocal word, expands
        if word is not None:
            commands[-1].words.append("".join(word))
            if expands:
                commands[-1].expanded.append("".join(word))
        word, expands = None, False

    def end_command(newline: bool) -> None:
        end_word()
        if commands[-1].words:
            commands.append(Command(line=s.line, after_newline=newline))
        else:
            commands[-1].line = s.line

    while s.pos < len(s.text):
        ch = s.peek()
        if ch == "\\" and s.peek(1) == "\n":
            s.take(), s.take()
        elif ch == "\\":
            s.take()
            word = (word or []) + [s.take()] if s.pos < len(s.text) else (word or [])
        elif ch in " \t\r":
            s.take()
            end_word()
        elif ch == "\n":
            s.take()
            end_command(True)
        elif ch == "#" and word is None:
            while s.pos < len(s.text) and s.peek() != "\n":
                s.take()
        elif ch == "'":
            start = s.line
            s.take()
            chunk = []
            while s.peek() != "'":
                if s.pos >= len(s.text):
                    raise CatalogueError(label, "unbalanced quotes: a ' is never closed", line=start)
                chunk.append(s.take())
            s.take()
            word = (word or []) + chunk
        elif ch == '"':
            start = s.line
            s.take()
            chunk = []
            while s.peek() != '"':
                if s.pos >= len(s.text):
                    raise CatalogueError(label, 'unbalanced quotes: a " is never closed', line=start)
                c = s.take()
                if c == "\\" and s.peek() in ('"', "\\", "$", "`", "\n"):
                    c = s.take()
                    if c == "\n":
                        continue
                elif c in "$`":
                    expands = True
                chunk.append(c)
            s.take()
            word = (word or []) + chunk
        elif any(s.text.startswith(op, s.pos) for op in OPERATORS):
            op = next(op for op in OPERATORS if s.text.startswith(op, s.pos))
            s.pos += len(op)
            end_command(False)
        else:
            if ch in "$`" or (ch == "~" and word is None):
                expands = True
            word = (word or []) + [s.take()]
    end_word()
    return [c for c in commands if c.words]
