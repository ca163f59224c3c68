"""catalogue.policy.docker_run: the `docker run --help` reading (which options take a value, the short letters),
the snapshot's round trip, and `docker run` words split into name, options, environment, image and command, with
one-line refusals naming the file, its line and the option."""

from __future__ import annotations

import json

import pytest

from catalogue.models.errors import CatalogueError
from catalogue.policy.docker_run import SNAPSHOT, DockerRunOptions, read_docker_run

HELP = """
Usage:  docker run [OPTIONS] IMAGE [COMMAND] [ARG...]

Options:
      --add-host list                    Add a custom host-to-IP mapping
  -d, --detach                           Run container in background
  -e, --env list                         Set environment variables
      --ipc string                       IPC mode to use
      --rm                               Automatically remove the container
  -v, --volume list                      Bind mount a volume
      --gpus gpu-request                 GPU devices to add
--not-indented string  ignored
      --one-space string ignored
"""


def test_from_help_reads_value_options_and_letters():
    options = DockerRunOptions.from_help(HELP, "28.0")
    assert options.version == "28.0"
    assert options.takes_value == {
        "add-host": True,
        "detach": False,
        "env": True,
        "ipc": True,
        "rm": False,
        "volume": True,
        "gpus": True,
    }
    assert options.short == {"d": "detach", "e": "env", "v": "volume"}


def test_the_snapshot_round_trips():
    KNOWN = DockerRunOptions.committed()
    assert KNOWN.version == "28.2.2"
    assert KNOWN.takes_value["ipc"] is True and KNOWN.takes_value["rm"] is False
    assert KNOWN.short["v"] == "volume"
    assert KNOWN.to_json() == SNAPSHOT.read_text(encoding="utf-8")
    body = json.loads(KNOWN.to_json())
    assert body["docker_version"] == KNOWN.version
    assert KNOWN.to_json().endswith("}\n")


def read(words: list[str]):
    return read_docker_run(words, DockerRunOptions.committed(), "run.sh", 7)


def test_a_full_command():
    run = read(
        [
            "--name",
            "box",
            "-e",
            "A=1",
            "--env=B=2",
            "-eC=3",
            "--ipc",
            "host",
            "-it",
            "-p8000:8000",
            "--rm",
            "img:1",
            "vllm",
            "serve",
            "-x",
        ]
    )
    assert run.name == "box"
    assert run.env == {"A": "1", "B": "2", "C": "3"}
    assert run.options == ["--ipc", "host", "-it", "-p8000:8000", "--rm"]
    assert run.image == "img:1"
    assert run.command == ["vllm", "serve", "-x"]


def test_the_name_in_any_spelling():
    assert read(["--name=box", "img"]).name == "box"
    assert read(["img"]).name is None


def test_an_env_word_that_is_no_assignment_stays_an_option():
    run = read(["-e", "HF_TOKEN", "--env", "1BAD=x", "img"])
    assert run.env == {}
    assert run.options == ["-e", "HF_TOKEN", "--env", "1BAD=x"]


def test_an_env_value_keeps_its_own_equals_signs():
    assert read(["-e", "A=b=c", "img"]).env == {"A": "b=c"}


def test_a_dash_is_the_image():
    run = read(["--rm", "-", "x"])
    assert run.image == "-" and run.command == ["x"]


def test_a_short_switch_group_then_a_value_letter():
    run = read(["-dv", "/a:/b", "img"])
    assert run.options == ["-dv", "/a:/b"] and run.image == "img"
    assert read(["-v=/a:/b", "img"]).options == ["-v=/a:/b"]


def test_a_joined_short_env_value_drops_one_equals_sign():
    run = read(["-e=A=1", "-eB==2", "img"])
    assert run.env == {"A": "1", "B": "=2"}


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["--nope", "img"], "run.sh:7: `docker run` has no option --nope (docker 28.2.2)"),
        (["-Z", "img"], "run.sh:7: `docker run` has no option -Z (docker 28.2.2)"),
        (["-dZ", "img"], "run.sh:7: `docker run` has no option -Z (docker 28.2.2)"),
        (["--ipc"], "run.sh:7: `docker run --ipc` needs a value"),
        (["-v"], "run.sh:7: `docker run -v` needs a value"),
        (["--rm"], "run.sh:7: `docker run` names no image"),
        ([], "run.sh:7: `docker run` names no image"),
        (["--ipc", "host"], "run.sh:7: `docker run` names no image"),
        (["-v", "/a:/b"], "run.sh:7: `docker run` names no image"),
    ],
)
def test_refusals_name_the_file_line_and_option(words, message):
    with pytest.raises(CatalogueError) as caught:
        read(words)
    assert str(caught.value) == message
