"""Paths the server writes (vLLM flags and JSON keys of class writes-path in catalogue/policy/flags.yaml: a model
download folder, compile and profiler caches, dumps, a socket), judged against where they land.

In a container a path is resolved as the server would open it (`..` and `//` normalised, a relative path from the
container's working folder; `~` and `$HOME` both as root's home and as the literal folder name, since vLLM expands
neither everywhere): inside a bind the runner adds itself (catalogue.models.runner_mounts: the Hugging Face cache's
hub, the compile cache) it is never (what a recipe writes there, other recipes' runs load later); inside a bind of
the recipe's own it is consent, named by the host folder it reaches; anywhere else it is the container's own file.
On the owner's machine (no image, or `--local`) every written path is never: the run's own folder is not known
before the run, and a path the recipe names could be any of the owner's files. A URI (`gs://...`, which vLLM's
profiler uploads to) sends data: consent."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from catalogue.models.runner_mounts import runner_binds
from catalogue.policy import rules
from catalogue.policy.docker_options import walk_options
from catalogue.policy.finding import PolicyFinding, consent, never
from catalogue.policy.flag_classes import classes_file
from catalogue.policy.mounts import PolicyContext, host_binds, host_path, through_binds

HOME_WORD = re.compile(r"^(~|\$HOME|\$\{HOME\})(?=/|$)")
CONTAINER_HOME = "/root"
"""The home folder of the user the images run vLLM as (root, unless the recipe says otherwise)."""


@dataclass(frozen=True)
class Landing:
    """Where a container's paths reach the host."""

    runner_binds: tuple[tuple[str, str], ...] = ()
    """(host folder, container folder) of each bind the runner adds itself."""
    recipe_binds: tuple[tuple[str, str], ...] = ()
    """(host folder, container folder) of each bind of the recipe's own options."""
    workdir: str = "/"
    """The container's working folder, where a relative path starts."""


def landing_for(options: list[str], context: PolicyContext | None) -> Landing:
    """The landing of a recipe's container before it exists: the runner's binds on the context's platform (or the
    compile cache alone), the recipe's binds, and its `--workdir` (else `/`; docker's own view is judged again)."""
    workdir = next((value or "/" for _, name, value in walk_options(options) if name == "workdir"), "/")
    own = context.runner_binds if context is not None else runner_binds(None)
    return Landing(tuple(own), tuple(host_binds(options, context)), workdir)


def container_paths(value: str, workdir: str) -> list[str]:
    """Every path `value` can name inside the container, normalised: `~/x` as root's home and as a folder named `~`."""
    start = workdir if workdir.startswith("/") else "/" + workdir
    found = [posixpath.normpath(posixpath.join(start, re.sub("/+", "/", value)))]
    if HOME_WORD.match(value):
        found.append(posixpath.normpath(HOME_WORD.sub(CONTAINER_HOME, value)))
    return found


def judge_written(
    shown: str, values: Iterable[str], landing: Landing | None, declared: Mapping[str, str], field: tuple
) -> list[PolicyFinding]:
    """The findings for a flag or key `shown` (`--download-dir`, `--compilation-config cache_dir`) whose values the
    server writes; `landing` None for a server on the owner's machine."""
    text = classes_file()["texts"]
    out: list[PolicyFinding] = []
    for value in (v for v in values if v.strip()):
        if "://" in value:
            out.append(consent(shown, text["writes-url"], rules.FLAGS_BASIS, declared, field))
        elif landing is None:
            out.append(never(f"{shown} {host_path(value)}", text["writes-host"], rules.FLAGS_BASIS, field))
        else:
            out += _in_container(shown, value, landing, declared, field)
    return out


def _in_container(
    shown: str, value: str, landing: Landing, declared: Mapping[str, str], field: tuple
) -> list[PolicyFinding]:
    text = classes_file()["texts"]
    paths = container_paths(value, landing.workdir)
    for path in paths:
        reached = through_binds(path, list(landing.runner_binds))
        if reached is not None:
            why = text["writes-runner-bind"].format(host=reached[0], target=reached[1])
            return [never(f"{shown} {reached[0]}", why, rules.FLAGS_BASIS, field, text["writes-how"])]
    for path in paths:
        reached = through_binds(path, list(landing.recipe_binds))
        if reached is not None:
            why = text["writes-bind"].format(host=reached[0], target=reached[1])
            return [consent(f"{shown} {reached[0]}", why, rules.FLAGS_BASIS, declared, field)]
    return []
