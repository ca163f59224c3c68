"""The vLLM flags of a container's command as docker holds it (`docker inspect`: Path and Args), read as vLLM's parser
reads them and judged by the run policy's flag rules: the inspect gate's check that a flag the static parse missed (a
word the recipe never showed, a value that vLLM reads as one more flag) cannot reach `vllm serve` unjudged.

The words after `vllm serve` are read by catalogue.paste.serve_flags (the reader of pasted commands) with the newest
committed snapshot, and the image's own where one is committed (its fork-only flags); a command whose flags cannot be
read that way is refused. A command that runs no `vllm serve` (the benchmark client, a Ray node) has no flags here."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from catalogue.flags.snapshot import FlagSnapshot, image_snapshot_path, newest_committed, read_snapshot
from catalogue.models.errors import CatalogueError
from catalogue.paste.launch import serve_words
from catalogue.paste.serve_flags import read_serve
from catalogue.policy.check import PolicyFinding, check_flags
from catalogue.policy.finding import never
from catalogue.policy.flag_classes import SNAPSHOTS
from catalogue.policy.rules import FLAGS_BASIS
from catalogue.policy.written_paths import Landing

UNREAD_WHY = "the vLLM flags docker holds cannot be read as vLLM's parser reads them ({error})"
UNREAD_HOW = "never allowed: every flag is a key of serving.flags"


@cache
def upstream() -> FlagSnapshot:
    """The newest committed vLLM flag snapshot."""
    path = newest_committed(SNAPSHOTS)
    if path is None:
        raise FileNotFoundError(f"no committed vLLM flag snapshot in {SNAPSHOTS}")
    return read_snapshot(path)


@cache
def of_image(image: str) -> FlagSnapshot | None:
    """The committed snapshot taken inside `image`, if any."""
    path = image_snapshot_path(image, SNAPSHOTS / "images")
    return read_snapshot(path) if path.exists() else None


def served_flags(command: list[str], image: str) -> dict[str, object] | None:
    """The flags of the `vllm serve` in `command` under the names vLLM's parser gives them; None when the command
    runs no `vllm serve`. CatalogueError when its words cannot be read as vLLM reads them."""
    words = serve_words(command)
    if words is None:
        return None
    read = read_serve(words, upstream(), of_image(image), True, "docker inspect", 0)
    return read.flags


def judge_command(
    command: list[str], image: str, declared: Mapping[str, str], landing: Landing | None = None
) -> list[PolicyFinding]:
    """The flag policy's findings (never and consent; the page's notes left out) on the `vllm serve` flags of a
    command as docker holds it, with the consent the static gate saw declared; `landing`: where the container's
    paths reach the host (catalogue.policy.written_paths), as docker made it."""
    try:
        flags = served_flags(command, image)
    except CatalogueError as exc:
        return [never("vllm serve", UNREAD_WHY.format(error=exc.message), FLAGS_BASIS, (), UNREAD_HOW)]
    if flags is None:
        return []
    return [f for f in check_flags(flags, [], {}, image, (), declared, landing) if f.cls != "note"]
