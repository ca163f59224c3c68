"""Use the second core for batch work: the first part of a list in a forked child, the rest here.

Only where forking is safe and worth it: a fork start method, more than one CPU, no other thread
in this process (`mkdocs serve` runs server threads; it stays serial), and enough items.
Results come back in order; the first error in list order is raised; the child never outlives
the call (Ctrl-C included).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
MIN_ITEMS = 64


def can_fork(count: int) -> bool:
    """Whether splitting `count` items across two processes is safe and worth it here."""
    return (
        count >= MIN_ITEMS
        and (os.cpu_count() or 1) > 1
        and threading.active_count() == 1
        and "fork" in multiprocessing.get_all_start_methods()
    )


def split_map(func: Callable[[Sequence[T]], list[R]], items: Sequence[T]) -> list[R]:
    """`func(items)`, computed as func(first half) in a forked child and func(second half) here."""
    if not can_fork(len(items)):
        return func(items)
    half = len(items) // 2
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)

    def child() -> None:
        try:
            writer.send((True, func(items[:half])))
        except BaseException as exc:
            writer.send((False, exc))

    process = context.Process(target=child, daemon=True)
    process.start()
    writer.close()
    try:
        try:
            mine, my_error = func(items[half:]), None
        except Exception as exc:
            mine, my_error = [], exc
        ok, theirs = reader.recv()
        if not ok:
            raise theirs
        if my_error is not None:
            raise my_error
        return [*theirs, *mine]
    finally:
        if process.is_alive():
            process.terminate()
        process.join()
        reader.close()
