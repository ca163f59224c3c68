"""`refresh --cpus`: keep a local run (the runner, `vllm serve` and the benchmark client) on the cores given.

A local process inherits its parent's CPU affinity, and vLLM's CPU worker binds its threads inside the cores it is
allowed (`VLLM_CPU_OMP_THREADS_BIND=auto`), so setting the runner's own affinity before anything starts places the
whole run. Measured on this project's 2-core CI machine (a VM), `nox -s bench -- capacity`, the tiny CPU recipe at
p95 TTFT ≤ 100 ms and p95 TPOT ≤ 20 ms: with the run spread over both cores three searches found 11.2, 14.0 and 15.3
req/s (±20 %), and 8.2, 13.4 and 8.2 req/s (±63 %) with the front end and client moved off the worker's core; with
everything on one core, ±12 %, ±13 % and (with --cpus 1 itself) ±19 % in three bench runs, at 40-57 req/s. Each
request hands over between the API server, the engine core and the worker several times, and (our reading, not measured
apart) a hand-over to another core of a VM waits for that core to wake.

`--client-cpus` starts the benchmark client on cores of its own (`starting_on`): a load generator on the server's core
takes CPU time from it that grows with the rate, and its clock waits while the server runs (its CPU calibration read
about 20 ms beside the server's levels there, 10 ms on a core of its own). Measured, the client apart found 67-100
req/s where the shared core found 46-66, but on this 2-core VM a boot then served either about 70 or about 95 req/s,
so the bench keeps the client on the server's core (site_src/docs/methodology/passport.md, "CPU placement").

Containers are docker's to place (`--cpuset-cpus` in `serving.container.options`): `--cpus` and `--client-cpus` are
for local runs only."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


def parse_cpus(text: str) -> frozenset[int]:
    """`1`, `0-3` or `0,2-3` as a set of CPU numbers; ValueError naming what is wrong."""
    cpus: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"not a CPU list: {text!r} (e.g. 1, 0-3 or 0,2-3)")
        low, high = int(first), int(last) if dash else int(first)
        if high < low:
            raise ValueError(f"not a CPU list: {text!r} ({part.strip()} runs backwards)")
        cpus.update(range(low, high + 1))
    return frozenset(cpus)


def usable(cpus: frozenset[int]) -> frozenset[int]:
    """`cpus` when this process may use them all; ValueError naming the cores it may use otherwise."""
    allowed = frozenset(os.sched_getaffinity(0))
    if not cpus or not cpus <= allowed:
        raise ValueError(f"CPU {describe(cpus)} is not for this process: it may use CPU {describe(allowed)} only")
    return cpus


def keep_on(cpus: frozenset[int]) -> frozenset[int]:
    """Set every thread of this process to `cpus` (what it starts from now on inherits them); the cores it had.
    ValueError when `cpus` are not all cores this process may use."""
    allowed = frozenset(os.sched_getaffinity(0))
    _set_own(usable(cpus))
    return allowed


@contextmanager
def starting_on(cpus: frozenset[int] | None) -> Iterator[None]:
    """Inside the block, what this process starts inherits `cpus` (none: unchanged); its own cores come back after.
    A child inherits its parent's affinity at fork, so there is no moment when it runs elsewhere."""
    if not cpus:
        yield
        return
    had = frozenset(os.sched_getaffinity(0))  # `--cpus` may have narrowed it: the command line checked `cpus`
    _set_own(cpus)
    try:
        yield
    finally:
        _set_own(had)


def restore(cpus: frozenset[int] | None) -> None:
    """Give this process's threads the cores `keep_on` returned (a refresh inside a longer process, as in tests)."""
    if cpus is not None:
        _set_own(cpus)


def _set_own(cpus: frozenset[int]) -> None:
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except (ProcessLookupError, PermissionError):  # a thread that ended meanwhile
            continue


def note(cpus: frozenset[int] | None, client_cpus: frozenset[int] | None) -> str:
    """The run's note of where its processes ran (`--cpus`, `--client-cpus`)."""
    if not client_cpus:
        assert cpus
        return f"CPU placement: the runner, its servers and client on CPU {describe(cpus)} (--cpus)"
    rest = f"on CPU {describe(cpus)} (--cpus)" if cpus else "where the system placed them"
    return (
        f"CPU placement: the benchmark client on CPU {describe(client_cpus)} (--client-cpus), "
        f"the runner and its servers {rest}"
    )


def describe(cpus: Iterable[int]) -> str:
    """CPU numbers as the kernel's lists write them: 0-3,6."""
    ordered = sorted(cpus)
    runs: list[list[int]] = []
    for cpu in ordered:
        if runs and cpu == runs[-1][-1] + 1:
            runs[-1].append(cpu)
        else:
            runs.append([cpu])
    return ",".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)
