"""Shell splitting and `docker run` reading of `catalogue new`, and the committed docker option snapshot."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from catalogue.models.errors import CatalogueError
from catalogue.paste.shell import split_commands
from catalogue.policy.docker_run import DockerRunOptions, read_docker_run

DOCKER = DockerRunOptions.committed()


def test_words_follow_shell_quoting_and_continuations():
    text = 'export A=\'x y\'\ndocker run -e "B=\\"q\\"" \\\n  img vllm serve m/x --c \'{"k": [1, 2]}\' # note\n'
    first, second = split_commands(text, "t")
    assert first.words == ["export", "A=x y"]
    assert second.words == ["docker", "run", "-e", 'B="q"', "img", "vllm", "serve", "m/x", "--c", '{"k": [1, 2]}']
    assert second.line == 2


def test_operators_and_newlines_end_commands_and_expansions_are_noted():
    commands = split_commands("a $HOME; b ~/x && c x#y\nd", "t")
    assert [c.words for c in commands] == [["a", "$HOME"], ["b", "~/x"], ["c", "x#y"], ["d"]]
    assert commands[0].expanded == ["$HOME"] and commands[1].expanded == ["~/x"]
    assert [c.after_newline for c in commands] == [False, False, False, True]


def test_unbalanced_quote_names_its_line():
    with pytest.raises(CatalogueError) as caught:
        split_commands('a\nb "c\n\nd', "paste.sh")
    assert str(caught.value) == 'paste.sh:2: unbalanced quotes: a " is never closed'


def test_docker_run_options_env_name_and_image():
    run = read_docker_run(
        ["-dit", "--name=x", "-p8000:8000", "-e", "K=V", "--env=L=W", "--gpus", "all", "img:1", "vllm", "serve"],
        DOCKER,
        "t",
        1,
    )
    assert (run.image, run.name, run.env) == ("img:1", "x", {"K": "V", "L": "W"})
    assert run.options == ["-dit", "-p8000:8000", "--gpus", "all"]
    assert run.command == ["vllm", "serve"]


@pytest.mark.skipif(shutil.which("docker") is None, reason="no docker CLI")
def test_committed_docker_snapshot_agrees_with_the_installed_docker():
    text = subprocess.run(["docker", "run", "--help"], capture_output=True, text=True, check=True).stdout
    installed = DockerRunOptions.from_help(text, "installed")
    assert len(installed.takes_value) > 80
    for name, takes in DOCKER.takes_value.items():
        assert installed.takes_value.get(name, takes) == takes, name
    assert {k: v for k, v in DOCKER.short.items() if k in installed.short} == {
        k: v for k, v in installed.short.items() if k in DOCKER.short
    }
