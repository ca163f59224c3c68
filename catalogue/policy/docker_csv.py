"""Option values as the docker CLI reads them: Go's encoding/csv, first record only.

docker/cli reads a `--mount`, `--gpus` or `--network key=value,...` value with `csv.NewReader(value).Read()`: one
record, with Go's default rules (comma-separated; no space trimming; no comment lines; strict quotes). What follows
the first record's end of line is never read. Python's csv module differs (it raises on a newline in an unquoted
field, accepts a bare quote), so the policy reads the value with this port of Go's `readRecord` instead."""

from __future__ import annotations


class CsvError(ValueError):
    """Go's reader refuses the value (a bare or unterminated quote, or no record at all): so does docker."""


def _lines(value: str) -> list[str]:
    """The value cut after each newline, as Go's readLine returns them (`\\r\\n` read as `\\n`; a `\\r` at the very end
    dropped)."""
    out = []
    rest = value
    while rest:
        cut = rest.find("\n")
        line, rest = (rest, "") if cut < 0 else (rest[: cut + 1], rest[cut + 1 :])
        if not rest and cut < 0 and line.endswith("\r"):
            line = line[:-1]
        if line.endswith("\r\n"):
            line = line[:-2] + "\n"
        out.append(line)
    return out


def _strip_nl(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text


def first_record(value: str) -> list[str]:
    """The fields of the first CSV record of `value`, exactly as Go's encoding/csv Reader.Read returns them."""
    lines = _lines(value)
    while lines and lines[0] in ("\n", ""):
        lines.pop(0)  # empty lines before the record are skipped
    if not lines:
        raise CsvError("no record (an empty value)")
    line = lines.pop(0)
    fields: list[str] = []
    while True:
        if not line.startswith('"'):
            cut = line.find(",")
            field = line[:cut] if cut >= 0 else _strip_nl(line)
            if '"' in field:
                raise CsvError(f'a bare " in the unquoted field {field!r}')
            fields.append(field)
            if cut < 0:
                return fields
            line = line[cut + 1 :]
            continue
        line = line[1:]
        buffer: list[str] = []
        while True:
            quote = line.find('"')
            if quote >= 0:
                buffer.append(line[:quote])
                line = line[quote + 1 :]
                if line.startswith('"'):
                    buffer.append('"')
                    line = line[1:]
                elif line.startswith(","):
                    line = line[1:]
                    fields.append("".join(buffer))
                    break
                elif line in ("", "\n"):
                    fields.append("".join(buffer))
                    return fields
                else:
                    raise CsvError('an extraneous or missing " in a quoted field')
            elif line:
                buffer.append(line)
                if not lines:
                    raise CsvError('a quoted field with no closing "')
                line = lines.pop(0)
            else:
                raise CsvError('a quoted field with no closing "')
