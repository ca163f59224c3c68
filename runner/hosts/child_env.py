"""The environment of every process the runner starts: the docker CLI, ssh (through docker), local `vllm serve`
servers, the benchmark client, the router, the quality and arena tools, probes.

Nothing of the owner's shell is copied by default: a child gets what it needs to run and to reach the engine
(PATH, HOME, the locale, TMPDIR; DOCKER_HOST, DOCKER_CONFIG, DOCKER_CONTEXT and docker's TLS settings;
SSH_AUTH_SOCK only for a docker CLI that reaches another host), then exactly the values the runner passes (the
recipe's env, the keys it made) and the variables the recipe takes from the owner by name (serving.env_from_host,
already judged by the run policy). A token in the owner's shell reaches no container and no server otherwise."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

BASE = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
"""What any program needs to start: where programs are, the home folder, the locale, the temporary folder."""
DOCKER = ("DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY")
"""How the docker CLI finds its engine and its own settings (never passed into a container by the runner)."""
SSH = ("SSH_AUTH_SOCK",)
"""The ssh agent: only for a docker CLI that reaches another host (`docker -H ssh://...`, a context)."""


def child_env(
    values: Mapping[str, str] | None = None,
    *,
    by_name: Iterable[str] = (),
    remote: bool = False,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for one child: BASE and DOCKER from this process (SSH too when `remote`), the variables
    named in `by_name` from this process, then `values`."""
    source = os.environ if environ is None else environ
    names = [*BASE, *DOCKER, *(SSH if remote else ()), *by_name]
    env = {name: source[name] for name in names if name in source}
    env.update(values or {})
    return env


def reaches_another_host(argv: Sequence[str]) -> bool:
    """A docker CLI command addressed to another engine (runner.hosts.hosts.Host.docker_cli)."""
    return len(argv) > 2 and os.path.basename(argv[0]) == "docker" and argv[1] in ("-H", "--context")


def for_argv(argv: Sequence[str], values: Mapping[str, str] | None = None, by_name: Iterable[str] = ()) -> dict:
    """child_env for the command `argv` (SSH_AUTH_SOCK when it is a docker CLI reaching another host)."""
    return child_env(values, by_name=by_name, remote=reaches_another_host(argv))
