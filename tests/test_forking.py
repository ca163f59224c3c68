"""split_map: both halves computed, in two processes, results in order, errors in list order."""

from __future__ import annotations

import os

import pytest

from catalogue.models.errors import CatalogueError
from catalogue.site import forking


@pytest.fixture(autouse=True)
def single_threaded(monkeypatch):
    """Other tests' session fixtures run server threads; these tests need the forking path."""
    monkeypatch.setattr(forking.threading, "active_count", lambda: 1)


def with_pids(batch):
    return [(item * 2, os.getpid()) for item in batch]


def test_halves_run_in_two_processes_and_come_back_in_order():
    out = forking.split_map(with_pids, list(range(100)))
    assert [value for value, _ in out] == [i * 2 for i in range(100)]
    pids = [pid for _, pid in out]
    assert pids[-1] == os.getpid() and pids[0] != os.getpid() and len(set(pids)) == 2


def test_small_batches_stay_in_this_process():
    out = forking.split_map(with_pids, list(range(forking.MIN_ITEMS - 1)))
    assert {pid for _, pid in out} == {os.getpid()}


def failing_at(*bad):
    def run(batch):
        for item in batch:
            if item in bad:
                raise CatalogueError(f"recipes/r{item}/recipe.yaml", "bad input", "title", 3)
        return list(batch)

    return run


@pytest.mark.parametrize("bad", [(10,), (90,), (10, 90)])
def test_the_first_error_in_list_order_is_raised_with_its_fields(bad):
    with pytest.raises(CatalogueError) as caught:
        forking.split_map(failing_at(*bad), list(range(100)))
    assert str(caught.value) == f"recipes/r{bad[0]}/recipe.yaml:3: title: bad input"


def test_no_child_is_left_behind(tmp_path):
    before = _children()  # a session fixture's process on this worker (the shared chromium) is not the map's
    forking.split_map(with_pids, list(range(100)))
    with pytest.raises(CatalogueError):
        forking.split_map(failing_at(90), list(range(100)))
    assert _children() - before == set()


def _children() -> set[str]:
    return {p for p in os.listdir("/proc") if p.isdigit() and _parent(p) == os.getpid()}


def _parent(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None
