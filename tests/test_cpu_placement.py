"""runner.hosts.cpu_placement (`refresh --cpus`): CPU lists, and the runner's own affinity, which every process it
starts afterwards inherits, checked on real processes; the refusals in one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from catalogue.commands.cli import main
from runner.hosts import cpu_placement
from tests.test_runner import REPO

CPUS = sorted(os.sched_getaffinity(0))
two_cores = pytest.mark.skipif(len(CPUS) < 2, reason="needs two cores to keep a run on one")


@pytest.mark.parametrize(
    ("text", "cpus"), [("1", {1}), ("0-3", {0, 1, 2, 3}), ("0,2-3", {0, 2, 3}), (" 4 , 6-7", {4, 6, 7})]
)
def test_cpu_lists_read_as_the_kernel_writes_them(text: str, cpus: set[int]) -> None:
    assert cpu_placement.parse_cpus(text) == cpus


@pytest.mark.parametrize(
    ("text", "why"), [("a", "e.g. 1, 0-3"), ("3-1", "3-1 runs backwards"), ("1-", "e.g."), ("", "")]
)
def test_a_bad_cpu_list_says_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(ValueError, match="not a CPU list") as caught:
        cpu_placement.parse_cpus(text)
    assert why in str(caught.value)


def test_cpu_lists_are_written_in_ranges() -> None:
    assert cpu_placement.describe({6, 0, 1, 2, 3}) == "0-3,6"
    assert cpu_placement.describe({1}) == "1"
    assert cpu_placement.describe({0, 2}) == "0,2"


def _affinities(pid: int) -> set[frozenset[int]]:
    return {frozenset(os.sched_getaffinity(int(tid))) for tid in os.listdir(f"/proc/{pid}/task")}


@two_cores
def test_the_runner_and_what_it_starts_stay_on_the_cores_given() -> None:
    last = frozenset({CPUS[-1]})
    had = cpu_placement.keep_on(last)
    try:
        assert had == frozenset(CPUS)
        assert _affinities(os.getpid()) == {last}  # every thread of the runner
        child = subprocess.run(
            [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert child.stdout.strip() == str(sorted(last))  # a process started afterwards inherits them
    finally:
        cpu_placement.restore(had)
    assert _affinities(os.getpid()) == {frozenset(CPUS)}


@two_cores
def test_a_client_started_apart_runs_on_its_own_cores_and_the_runner_keeps_its() -> None:
    first, last = frozenset({CPUS[0]}), frozenset({CPUS[-1]})
    had = cpu_placement.keep_on(last)
    try:
        with cpu_placement.starting_on(first):
            child = subprocess.Popen(
                [sys.executable, "-c", "import os, sys; sys.stdin.read(); print(sorted(os.sched_getaffinity(0)))"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        assert _affinities(os.getpid()) == {last}  # the runner is back on the server's core
        assert _affinities(child.pid) == {first}  # every thread of the client, from its first instruction
        out, _ = child.communicate("")
        assert out.strip() == str(sorted(first))
    finally:
        cpu_placement.restore(had)


def test_starting_on_nothing_changes_nothing() -> None:
    with cpu_placement.starting_on(None):
        assert _affinities(os.getpid()) == {frozenset(CPUS)}


def test_the_runs_note_says_where_each_part_ran() -> None:
    assert cpu_placement.note(frozenset({1}), None) == (
        "CPU placement: the runner, its servers and client on CPU 1 (--cpus)"
    )
    assert cpu_placement.note(frozenset({1}), frozenset({0})) == (
        "CPU placement: the benchmark client on CPU 0 (--client-cpus), the runner and its servers on CPU 1 (--cpus)"
    )
    assert cpu_placement.note(None, frozenset({0, 2, 3})) == (
        "CPU placement: the benchmark client on CPU 0,2-3 (--client-cpus), the runner and its servers where the "
        "system placed them"
    )


def test_cores_this_process_may_not_use_are_refused() -> None:
    outside = max(CPUS) + 1
    with pytest.raises(ValueError, match=f"CPU {outside} is not for this process: it may use CPU "):
        cpu_placement.keep_on(frozenset({outside}))
    assert _affinities(os.getpid()) == {frozenset(CPUS)}


def test_a_bad_cpus_option_is_one_line_and_starts_nothing(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--root", str(REPO / "examples"), "refresh", "tiny-cpu", "--cpus", "3-1"])
    assert exited.value.code == 2
    assert "argument --cpus: not a CPU list: '3-1' (3-1 runs backwards)" in capsys.readouterr().err


def test_cores_this_process_may_not_use_are_a_command_line_error(capsys) -> None:
    outside = max(CPUS) + 1
    with pytest.raises(SystemExit) as exited:
        main(["--root", str(REPO / "examples"), "refresh", "tiny-cpu", "--cpus", str(outside), "--dry-run"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith(
        f"argument --cpus: CPU {outside} is not for this process: it may use CPU {cpu_placement.describe(CPUS)} only"
    ), err
    assert "recipe.yaml" not in err


def test_cpus_with_a_container_is_refused(capsys) -> None:
    code = main(["--root", str(REPO / "examples"), "refresh", "tiny-cpu-docker", "--cpus", "0", "--dry-run"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1, err
    assert err[0].endswith(
        "--cpus places a local run; docker places a container (--cpuset-cpus in serving.container.options)"
    )
    assert "tiny-cpu-docker/recipe.yaml" in err[0]


def test_client_cpus_with_a_client_in_the_image_is_refused(capsys) -> None:
    code = main(["--root", str(REPO / "examples"), "refresh", "tiny-cpu-docker", "--client-cpus", "0", "--dry-run"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1, err
    assert err[0].endswith(
        "--client-cpus places a local benchmark client; this one runs in the recipe's image "
        "(--client host runs it in this Python)"
    )
