"""catalogue.policy.docker_options: `docker run` options walked as docker reads them (long and short forms, joined
and separate values, unknown words), grouped into options, and each option's name, value and key."""

from __future__ import annotations

import pytest

from catalogue.policy.docker_options import option_key, option_name, option_value, split_options, walk_options


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["--ipc=host"], [(0, "ipc", "host")]),
        (["--ipc", "host"], [(0, "ipc", "host")]),
        (["--ipc"], [(0, "!ipc", None)]),  # no word left for its value: docker would take what follows
        (["--ipc="], [(0, "ipc", "")]),
        (["--privileged"], [(0, "privileged", None)]),
        (["--privileged=true"], [(0, "privileged", "true")]),
        (["--net=host"], [(0, "network", "host")]),
        (["--net-alias", "a"], [(0, "network-alias", "a")]),
        (["--nope", "x"], [(0, "?--nope", None), (1, "?x", None)]),
        (["-v", "/a:/b"], [(0, "volume", "/a:/b")]),
        (["-v/a:/b"], [(0, "volume", "/a:/b")]),
        (["-e=K=V"], [(0, "env", "K=V")]),
        (["-v"], [(0, "!volume", None)]),
        (["-itv"], [(0, "interactive", None), (0, "tty", None), (0, "!volume", None)]),
        (["-it"], [(0, "interactive", None), (0, "tty", None)]),
        (["-ite", "K=V"], [(0, "interactive", None), (0, "tty", None), (0, "env", "K=V")]),
        (["-iQ", "x"], [(0, "interactive", None), (0, "?-Q", None), (1, "?x", None)]),
        (["-"], [(0, "?-", None)]),
        (["image"], [(0, "?image", None)]),
        (
            ["--ipc", "host", "-p8000:8000", "--rm", "-e", "A=1"],
            [(0, "ipc", "host"), (2, "publish", "8000:8000"), (3, "rm", None), (4, "env", "A=1")],
        ),
    ],
)
def test_walk_options(words, expected):
    assert walk_options(words) == expected


def test_split_options_groups_the_words_of_each_option():
    words = ["--ipc", "host", "--ipc=host", "-v", "a:b", "-p8000:8000", "-it", "--rm"]
    assert split_options(words) == [
        ["--ipc", "host"],
        ["--ipc=host"],
        ["-v", "a:b"],
        ["-p8000:8000"],
        ["-it"],
        ["--rm"],
    ]
    assert split_options([]) == []


@pytest.mark.parametrize(
    ("group", "name", "value"),
    [
        (["-v", "a:b"], "volume", "a:b"),
        (["--net=host"], "network", "host"),
        (["--rm"], "rm", ""),
        (["-it"], "tty", ""),
        ([], None, ""),
    ],
)
def test_option_name_and_value(group, name, value):
    if group:
        assert option_name(group) == name
    assert option_value(group) == value


@pytest.mark.parametrize(
    ("group", "key"),
    [
        (["--ulimit", "memlock=-1:-1"], "ulimit:memlock"),
        (["--ulimit=stack"], "ulimit:stack"),
        (["--ulimit", "a=b=c"], "ulimit:a"),
        (["-v", "/host:/dst:ro"], "volume:/dst"),
        (["-v", "named"], "volume:named"),
        (["-v", "/host:/dst"], "volume:/dst"),
        (["--device", "/dev/x"], "device:/dev/x"),
        (["--cap-add", "IPC_LOCK"], "cap-add:IPC_LOCK"),
        (["--label", "a=b"], "label:a=b"),
        (["--add-host", "h:1.2.3.4"], "add-host:h:1.2.3.4"),
        (["--mount", "type=bind,src=/a,dst=/b"], "mount:type=bind,src=/a,dst=/b"),
        (["--ipc=host"], "ipc"),
        (["--shm-size", "8g"], "shm-size"),
    ],
)
def test_option_key(group, key):
    assert option_key(group) == key
