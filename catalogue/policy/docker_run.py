"""`docker run` words -> container name, options, environment, image and the command after it.

Which options take a value comes from `snapshots/docker-run.json`, written from the docker CLI's own
`docker run --help` by `tools/docker_run_snapshot.py` (a test compares it with the installed docker)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from catalogue.models.errors import CatalogueError

SNAPSHOT = Path(__file__).resolve().parents[2] / "snapshots" / "docker-run.json"
HELP_LINE = re.compile(r"^\s+(?:-(\w), )?--([a-z0-9-]+)(?: ([\w-]+))?\s{2,}")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class DockerRunOptions:
    """The options of `docker run`: long name -> takes a value; short letter -> long name."""

    version: str
    takes_value: dict[str, bool]
    short: dict[str, str]

    @classmethod
    def from_help(cls, text: str, version: str) -> DockerRunOptions:
        """Parse `docker run --help`: an option with a type word after it takes a value."""
        takes: dict[str, bool] = {}
        short: dict[str, str] = {}
        for line in text.splitlines():
            m = HELP_LINE.match(line)
            if m:
                takes[m.group(2)] = m.group(3) is not None
                if m.group(1):
                    short[m.group(1)] = m.group(2)
        return cls(version, takes, short)

    @classmethod
    def committed(cls, path: Path = SNAPSHOT) -> DockerRunOptions:
        """The committed snapshot."""
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(data["docker_version"], data["takes_value"], data["short"])

    def to_json(self) -> str:
        """The snapshot file's text."""
        body = {"docker_version": self.version, "takes_value": self.takes_value, "short": self.short}
        return json.dumps(body, indent=1, sort_keys=True) + "\n"


@dataclass
class DockerRun:
    """What a `docker run` command says."""

    image: str
    name: str | None = None
    options: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    command: list[str] = field(default_factory=list)


def read_docker_run(words: list[str], known: DockerRunOptions, label: str, line: int) -> DockerRun:
    """Walk the options up to the image; `-e K=V` goes to env, `--name` to the name, the rest stays as written."""
    options: list[str] = []
    env: dict[str, str] = {}
    name: str | None = None
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        word = words[i]
        if word.startswith("--"):
            long, has_value, value = word[2:].partition("=")
            if long not in known.takes_value:
                raise CatalogueError(label, f"`docker run` has no option --{long} (docker {known.version})", line=line)
            group = [word]
            if known.takes_value[long] and not has_value:
                if i + 1 >= len(words):
                    raise CatalogueError(label, f"`docker run --{long}` needs a value", line=line)
                value = words[i + 1]
                group.append(value)
                i += 1
        else:
            long, value, group = _short(word, words, i, known, label, line)
            i += len(group) - 1
        i += 1
        if long == "env" and "=" in value and ENV_NAME.match(value.split("=", 1)[0]):
            key, _, val = value.partition("=")
            env[key] = val
        elif long == "name":
            name = value
        else:
            options += group
    if i >= len(words):
        raise CatalogueError(label, "`docker run` names no image", line=line)
    return DockerRun(image=words[i], name=name, options=options, env=env, command=words[i + 1 :])


def _short(
    word: str, words: list[str], i: int, known: DockerRunOptions, label: str, line: int
) -> tuple[str, str, list[str]]:
    """`-d`, `-it`, `-p8000:8000`, `-e K=V`: (long name of the option with a value, its value, the words)."""
    letters = word[1:]
    for j, letter in enumerate(letters):
        long = known.short.get(letter)
        if long is None:
            raise CatalogueError(label, f"`docker run` has no option -{letter} (docker {known.version})", line=line)
        if known.takes_value[long]:
            rest = letters[j + 1 :].removeprefix("=")
            if rest:
                return long, rest, [word]
            if i + 1 >= len(words):
                raise CatalogueError(label, f"`docker run -{letter}` needs a value", line=line)
            return long, words[i + 1], [word, words[i + 1]]
    return "", "", [word]
