"""What a test needs from the machine (vLLM, a pinned tool) and what happens without it: a developer's machine skips
the test, or takes the branch that says "not installed"; under CI, where `nox -s tests` installs everything, a missing
part fails the test instead of passing it quietly (as conftest.py's `engine` fixture does for docker)."""

from __future__ import annotations

import os
import signal

import pytest

from catalogue.flags.snapshot import installed_vllm_version

IN_CI = bool(os.environ.get("CI"))
VLLM_MISSING = installed_vllm_version() is None

needs_vllm = pytest.mark.usefixtures("vllm_installed")
"""A test that needs vLLM: skipped without it, failed without it under CI (conftest.py's `vllm_installed`)."""


def missing(why: str) -> None:
    """Skip on a developer's machine; fail under CI."""
    if IN_CI:
        pytest.fail(f"{why}, under CI (.ci/run installs it through nox -s tests)")
    pytest.skip(why)


def vllm_or_fail() -> None:
    """Call first in a test that needs vLLM: under CI a missing vLLM is a failure with its reason."""
    if VLLM_MISSING:
        missing("vLLM not installed")


def tool(variable: str, name: str) -> str | None:
    """The command of a pinned tool that `nox -s tests` installs ($CATALOGUE_...): None on a developer's machine
    without it (the test takes its "not installed" branch); under CI a missing tool fails the test."""
    command = os.environ.get(variable)
    if not command and IN_CI:
        pytest.fail(f"{name} not installed (${variable} unset) under CI; nox -s tests installs it")
    return command or None


def tool_or_skip(variable: str, name: str) -> str:
    """The tool's command, or a skip (a developer's machine) / a failure (CI) without it."""
    command = tool(variable, name)
    if command is None:
        missing(f"{name} not installed (${variable}); nox -s tests installs it")
    assert command is not None
    return command


def as_at_a_terminal() -> None:
    """`preexec_fn` of a child that a test stops with Ctrl-C: SIGINT at its default, as a shell at a terminal leaves
    it. A command started in the background of a non-interactive shell (`nohup bash .ci/run &`) inherits SIGINT
    ignored, and so does every Python it starts: the runner then never sees the test's Ctrl-C (two fresh-clone runs
    of the suite started that way failed both Ctrl-C tests on a timeout)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
