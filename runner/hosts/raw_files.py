"""The one place the runner opens files in a run's raw folder and reads what others wrote there.

The benchmark client runs in the recipe's image with the raw folder bind-mounted writable at /raw, so while a boot
runs, any name in that folder may be a link (to ~/.ssh/authorized_keys, /dev/zero), a FIFO or a huge or malformed
file. The runner therefore writes there only through `open_append` (never through a link, only into a regular
file) and reads what a container, a server or a tool could have written only through `read_json`, `read_lines` and
`read_tail`: a regular file, no link, a size limit and for JSON the nesting and number limits of
catalogue.models.bounded. A server's HTTP reply is read the same way (`read_reply`). Every refusal is a
CatalogueError: one line naming the file (or the URL)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO, Any

from catalogue.models.atomic import write_bytes
from catalogue.models.bounded import MAX_IMPORT_BYTES, load_json, read_bounded, read_regular
from catalogue.models.errors import CatalogueError

MAX_REPLY_BYTES = 1 << 20
"""A server's JSON reply the runner reads itself (/version, a few-token completion): under 1 KB in practice."""
MAX_EVENTS_BYTES = 16 << 20
"""The client's events.jsonl: one short line per job (a capacity search's hundred levels is under 100 KB)."""
MAX_LOG_BYTES = 8 << 20
"""How much of a log is searched for its first error (a vLLM start-up log is under 1 MB)."""

_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FRESH = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def open_append(path: Path, *, fresh: bool = False) -> IO[bytes]:
    """`path` opened for appending bytes (created when missing), never through a link and only when it is a regular
    file with one name; `fresh`: it must not exist yet (O_EXCL). A link, FIFO, device or hard link is one line."""
    try:
        fd = os.open(path, _FRESH if fresh else _APPEND, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise CatalogueError(path, "a symbolic link: the runner never writes through a link") from None
        if exc.errno == errno.EEXIST:
            raise CatalogueError(path, "already there: the runner writes it fresh, never into one it found") from None
        raise CatalogueError(path, f"cannot write: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        raise CatalogueError(path, "not a regular file with one name: the runner never writes into it")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "ab")


def read_json(path: Path, limit: int = MAX_IMPORT_BYTES) -> Any:
    """A JSON file a container or tool wrote: regular, no link, at most `limit` bytes, within the nesting limit."""
    return load_json(read_bounded(path, limit, regular=True), path)


def keep_json(made: Path, kept: Path, limit: int = MAX_IMPORT_BYTES) -> Any:
    """A JSON report a tool wrote in the runner's own scratch folder (`made`), read within the limits, then written
    into the raw folder as `kept` (keep_file)."""
    text = read_bounded(made, limit, regular=True)
    value = load_json(text, kept)
    keep_file(made, kept, limit)
    return value


def raw_folder(path: Path) -> Path:
    """A folder inside the raw folder, made when missing; a link or a file under its name is one line."""
    try:
        path.mkdir(exist_ok=True)
    except OSError as exc:
        raise CatalogueError(path, f"cannot make the folder: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(path.lstat().st_mode):
        raise CatalogueError(path, "not a folder (a link?): the runner never writes through a link")
    return path


def keep_file(made: Path, kept: Path, limit: int = MAX_IMPORT_BYTES) -> None:
    """Copy a file a tool made in the runner's own scratch folder into the raw folder: read as a regular file within
    `limit`, written to a fresh temp file beside `kept` (O_EXCL) and renamed over it, so a link planted under its
    name is replaced, never written through; `kept`'s folder must be no link."""
    data = read_regular(made, limit)
    if len(data) > limit:
        raise CatalogueError(made, f"larger than {limit // 1024} KB: not kept")
    folder = kept.parent
    if not stat.S_ISDIR(folder.lstat().st_mode):
        raise CatalogueError(folder, "not a folder (a link?): the runner never writes through a link")
    write_bytes(kept, data)


def read_lines(path: Path, limit: int = MAX_EVENTS_BYTES) -> tuple[list[Any], bool]:
    """A JSON-lines file still being written: the value of each complete line, and whether the text ended with a
    line break (the last line, when not, is still being written and left out)."""
    text = read_bounded(path, limit, regular=True)
    lines = text.split("\n")
    values = []
    for number, line in enumerate(lines[:-1], 1):
        try:
            value = load_json(line, path, syntax="not JSON")
        except CatalogueError as exc:  # its line is the file's, not the one-line text's
            raise CatalogueError(path, exc.message, line=number) from None
        if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
            raise CatalogueError(path, "not an event (a JSON object with a `kind`)", line=number)
        values.append(value)
    return values, text.endswith("\n")


def read_tail(path: Path, limit: int = MAX_LOG_BYTES, *, tail: bool = True) -> str:
    """At most `limit` bytes of a log (its end, or with tail=False its start) as text; "" when it is missing, a link
    or not a regular file (a log is only shown, never trusted)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            return ""
        if tail and info.st_size > limit:
            f.seek(info.st_size - limit)
        return f.read(limit).decode("utf-8", errors="replace")


def read_reply(response: IO[bytes], where: str, limit: int = MAX_REPLY_BYTES) -> Any:
    """A server's JSON reply: at most `limit` bytes (nothing more is read), within the nesting limit."""
    data = response.read(limit + 1)
    if len(data) > limit:
        raise CatalogueError(where, f"a reply larger than {limit // 1024} KB: refused unread")
    return load_json(data.decode("utf-8", errors="replace"), where)


def reply_version(response: IO[bytes], where: str) -> str | None:
    """The `version` a server's /version reply names; None when the reply is not an object naming one as text."""
    reply = read_reply(response, where)
    version = reply.get("version") if isinstance(reply, dict) else None
    return version if isinstance(version, str) else None


def reply_text(reply: Any, where: str) -> str:
    """The text of a completion reply (`choices[0].text`); any other shape is one line naming the URL."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    text = first.get("text") if isinstance(first, dict) else None
    if not isinstance(text, str):
        raise CatalogueError(where, "a reply without `choices[0].text` as a string")
    return text
