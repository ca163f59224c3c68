"""Pasted text -> one launch: `[export K=V]... [docker run OPTIONS IMAGE] vllm serve MODEL FLAGS`.

Accepted: the launch in one command (`docker run ... IMAGE vllm serve ...`, or `bash -c "vllm serve ..."` as the
container's command), or `docker run -it ... IMAGE` followed by the `vllm serve` typed in its shell; `export` lines
and `K=V` / `env K=V` / `sudo` prefixes; `docker pull` and `mkdir` (ignored, noted). Lines that start with an
option continue the command above them (web pages often drop the trailing backslashes). The `vllm/vllm-openai`
image starts `vllm serve` itself (its entrypoint), so the words after that image are read as `vllm serve`'s.
A container that runs a script (`bash /start.sh ...`) is refused with the script named: its `vllm serve` is not in
the paste. Anything else is refused."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from catalogue.models.errors import CatalogueError
from catalogue.models.recipe import ENV_NAME
from catalogue.models.topology import runs_serve_itself
from catalogue.paste.shell import Command, split_commands
from catalogue.policy.docker_options import option_name, option_value, split_options
from catalogue.policy.docker_run import DockerRun, DockerRunOptions, read_docker_run

SHELLS = ("bash", "sh", "dash", "zsh")


@dataclass
class Launch:
    """The parts of a pasted launch."""

    serve: list[str]
    """Words after `vllm serve`."""
    line: int
    """Line of the `vllm serve` command."""
    docker: DockerRun | None = None
    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _merge_continuations(commands: list[Command], notes: list[str]) -> list[Command]:
    out: list[Command] = []
    joined: list[int] = []
    for command in commands:
        if out and command.after_newline and command.words[0].startswith("-"):
            out[-1].words += command.words
            out[-1].expanded += command.expanded
            joined.append(command.line)
        else:
            out.append(command)
    if joined:
        lines = f"line {joined[0]}" if len(joined) == 1 else f"lines {joined[0]}–{joined[-1]}"
        notes.append(f"{lines} start with an option: read as continuing the command above (no backslash)")
    return out


def _strip_prefixes(words: list[str], env: dict[str, str]) -> list[str]:
    """`sudo`, `env`, and `K=V` assignments before a command."""
    while words:
        head = words[0]
        key, eq, value = head.partition("=")
        if head in ("sudo", "env"):
            words = words[1:]
        elif eq and ENV_NAME.match(key):
            env[key] = value
            words = words[1:]
        else:
            break
    return words


def _without_empty_entrypoint(options: list[str]) -> list[str]:
    """`--entrypoint ''` only clears the entrypoint of an image that runs `vllm serve` itself; the catalogue
    renders it for such images, so a recipe does not keep it."""
    groups = split_options(options)
    return [w for g in groups if not (option_name(g) == "entrypoint" and option_value(g) == "") for w in g]


def serve_words(words: list[str]) -> list[str] | None:
    """The words after `vllm serve` (or `/path/to/vllm serve`), or None."""
    for i in range(len(words) - 1):
        if words[i].endswith("vllm") and words[i + 1] == "serve":
            return words[i + 2 :]
    return None


def _is_shell(word: str) -> bool:
    """A shell, by name or path (`bash`, `/bin/sh`)."""
    return word.rsplit("/", 1)[-1] in SHELLS


def _shell_command_string(words: list[str]) -> str | None:
    """The command string of `bash -c [-i -l ...] "..."` (options may follow -c; the first other word is it)."""
    if len(words) < 3 or not _is_shell(words[0]):
        return None
    options = []
    for i, word in enumerate(words[1:], start=1):
        if word.startswith("-"):
            options.append(word)
            continue
        return word if "-c" in options and i == len(words) - 1 else None
    return None


def docker_launch(
    words: list[str], docker_options: DockerRunOptions, label: str, line: int, env: dict[str, str], notes: list[str]
) -> tuple[DockerRun, list[str] | None]:
    """The words after `docker run`: the container, and the words after `vllm serve` when the container runs it
    (None when it runs nothing: `vllm serve` is then typed in its shell)."""
    docker = read_docker_run(words, docker_options, label, line)
    if runs_serve_itself(docker.image):
        docker.options = _without_empty_entrypoint(docker.options)
    inner = docker.command
    script = _shell_command_string(inner)
    if script is not None:
        inner = [w for c in split_commands(script, label) for w in _strip_prefixes(c.words, env)]
    if not inner:
        return docker, None
    serve = serve_words(inner)
    if serve is None and len(inner) > 1 and _is_shell(inner[0]) and not inner[1].startswith("-"):
        raise CatalogueError(
            label,
            f"the container runs the script {inner[1]}, which the paste does not show: paste the `vllm serve` "
            "command it runs (and say in the recipe what else the script does)",
            line=line,
        )
    if serve is None and runs_serve_itself(docker.image) and not _is_shell(inner[0]) and inner[0] != "vllm":
        serve = inner
        notes.append(
            f"line {line}: {docker.image} runs `vllm serve` as its entrypoint: "
            "the words after the image are read as its model and flags"
        )
    if serve is None:
        raise CatalogueError(label, f"the container runs {' '.join(inner[:2])!r}, not `vllm serve`", line=line)
    return docker, serve


HOME_WORD = re.compile(r"^(\$HOME|\$\{HOME\})(?=/)")
"""A word that starts with the home folder as a variable: written `~/...`, which the runner expands as a shell."""


def home_as_tilde(words: list[str], line: int, notes: list[str]) -> list[str]:
    """`$HOME/...` and `${HOME}/...` at the start of a word become `~/...` (said in a note)."""
    out = []
    for word in words:
        tilde = HOME_WORD.sub("~", word)
        if tilde != word:
            notes.append(f"line {line}: {word!r} written as {tilde!r} (the reader's home folder)")
        out.append(tilde)
    return out


def read_launch(text: str, label: str, docker_options: DockerRunOptions) -> Launch:
    """The one launch in the text, or a one-line error saying what is not understood."""
    notes: list[str] = []
    commands = _merge_continuations(split_commands(text, label), notes)
    env: dict[str, str] = {}
    host_env: dict[str, str] = {}
    docker: DockerRun | None = None
    serve: list[str] | None = None
    serve_line = 0
    for command in commands:
        command.words = home_as_tilde(command.words, command.line, notes)
        notes += [
            f"line {command.line}: {word!r} is expanded by a shell; the recipe keeps it as written"
            for word in command.expanded
            if not HOME_WORD.match(word)
        ]
        words = _strip_prefixes(command.words, env)
        if not words:
            continue
        if words[0] == "export":
            for assignment in words[1:]:
                key, eq, value = assignment.partition("=")
                if not eq or not ENV_NAME.match(key):
                    raise CatalogueError(label, f"`export {assignment}` sets no value", line=command.line)
                (env if docker is not None else host_env)[key] = value
            continue
        if words[:2] == ["docker", "pull"]:
            continue
        if words[0] == "mkdir" and serve is None:
            notes.append(f"line {command.line}: `{' '.join(words)}` prepares a host folder: left out of the recipe")
            continue
        if serve is not None:
            raise CatalogueError(
                label, f"`{' '.join(words[:2])}` comes after the launch: paste one launch", line=command.line
            )
        if words[:2] == ["docker", "run"]:
            if docker is not None:
                raise CatalogueError(label, "a second `docker run`: paste one launch", line=command.line)
            docker, inner_serve = docker_launch(words[2:], docker_options, label, command.line, env, notes)
            if inner_serve is not None:
                serve, serve_line = inner_serve, command.line
            continue
        found = serve_words(words)
        if found is None:
            raise CatalogueError(
                label,
                f"`{' '.join(words[:2])}` is not part of a launch: paste the `docker run` / `vllm serve` "
                "command (and its `export` lines)",
                line=command.line,
            )
        if docker is not None:
            notes.append(f"line {command.line}: `vllm serve` read as typed in the shell of the container above")
        serve, serve_line = found, command.line
    if serve is None:
        raise CatalogueError(label, "no `vllm serve` in the command")
    if docker is not None:
        if host_env:
            notes.append(f"exported before `docker run`, so not inside the container: {', '.join(host_env)} (left out)")
        env = {**env, **docker.env}
    else:
        env = {**host_env, **env}
    return Launch(serve=serve, line=serve_line, docker=docker, env=env, notes=notes)
