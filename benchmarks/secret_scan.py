"""`nox -s bench -- secrets`: the secret scan on the largest inputs the loaders accept, shaped as an attacker
would shape them (catalogue.policy.secret_scan): a 1 MB recipe text of one long line and of 1,000-character lines
of keyword names, and an 8 MB run file of notes. The scan is linear by construction (windows of WINDOW characters,
the keyword detector only where a name is); before, 20 KB of `api_key` took 82 s."""

from __future__ import annotations

import time

from catalogue.policy.file_secrets import json_secrets
from catalogue.policy.secret_scan import scan_text

SHAPES = ("api_key", "pwd:=0 ", 'api_key"', "a", "hf_" + "a" * 30 + " ")
MB = 1_000_000


def _text(shape: str, line: int) -> str:
    body = (shape * (MB // len(shape) + 1))[:MB]
    return "\n".join(body[i : i + line] for i in range(0, MB, line))


def bench_secret_scan() -> None:
    """Seconds to scan each worst-case 1 MB recipe text, and an 8 MB run file of 800-character notes."""
    print("\n## Secret scan of the largest inputs (1 MB recipe, 8 MB run file)")
    for shape in SHAPES:
        for line in (1_000, MB):
            start = time.perf_counter()
            scan_text(_text(shape, line))
            print(f"1 MB of {shape[:12]!r} in lines of {line:,}: {time.perf_counter() - start:.2f} s")
    note = " ".join(f"{i:040x}" for i in range(19))[:800]
    run = {"recorded_at": "2026-11-27T00:00:00Z", "notes": [note] * (8 * MB // 800)}
    start = time.perf_counter()
    json_secrets(run)
    print(f"8 MB run file of notes: {time.perf_counter() - start:.2f} s")
