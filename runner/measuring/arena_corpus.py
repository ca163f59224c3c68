"""llama-benchy's --book-url for the Arena step: a fixed text served on 127.0.0.1 while it runs, so nothing is
downloaded (its default is a book from the web)."""

from __future__ import annotations

import functools
import http.server
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

WORDS = (
    "the model serves each request while the catalogue measures how fast a long prompt turns into an answer and "
    "every stream waits for its next token from memory bandwidth compute and the scheduler of the engine"
)
"""The corpus's words (any text will do: llama-benchy cuts prompts of exactly --pp tokens from it)."""


def corpus_text(words: int = 60_000) -> str:
    """The text llama-benchy cuts its prompts from (instead of downloading its default book): fixed, offline."""
    pick = random.Random(0)
    lines = []
    for _ in range(words // 12):
        line = " ".join(pick.choice(WORDS.split()) for _ in range(12))
        lines.append(line[0].upper() + line[1:] + ".")
    return "\n".join(lines) + "\n"


@contextmanager
def served_corpus(folder: Path) -> Iterator[str]:
    """The corpus as a file served on 127.0.0.1 (an ephemeral port) while llama-benchy runs: its --book-url."""
    (folder / "book.txt").write_text(corpus_text(), encoding="utf-8")
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/book.txt"
    finally:
        server.shutdown()
        server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the folder without a line per request on stderr."""

    def log_message(self, format: str, *args: object) -> None:
        pass
