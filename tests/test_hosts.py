"""`--hosts` and the hosts file: each host reached through the docker CLI's own remote support."""

from __future__ import annotations

import pytest

from catalogue.errors import CatalogueError
from runner.hosts import LOCAL, Host, parse_hosts


def test_no_hosts_means_this_machine():
    assert parse_hosts(None) == [LOCAL] and LOCAL.docker_cli() == ["docker"]


def test_ssh_urls_contexts_and_local():
    hosts = parse_hosts("local,ssh://me@10.0.0.2:2222,spark2")
    assert hosts[0] == LOCAL
    assert hosts[1] == Host("10.0.0.2", "ssh://me@10.0.0.2:2222", "10.0.0.2")
    assert hosts[1].docker_cli() == ["docker", "-H", "ssh://me@10.0.0.2:2222"]
    assert hosts[2].docker_cli() == ["docker", "--context", "spark2"] and hosts[2].address == "spark2"


def test_hosts_file_names_engines_and_addresses(tmp_path):
    path = tmp_path / "hosts.yaml"
    path.write_text(
        "hosts:\n  spark1: {docker: local, address: 192.0.2.1}\n"
        "  spark2: {docker: 'ssh://me@spark2.lan', address: 192.0.2.2}\n"
    )
    one, two = parse_hosts("spark1,spark2", path)
    assert one == Host("spark1", None, "192.0.2.1") and one.is_local
    assert two == Host("spark2", "ssh://me@spark2.lan", "192.0.2.2")


@pytest.mark.parametrize(
    "text, message",
    [
        ("hosts:\n  a: {docker: local, adress: x}\n", "hosts.a.adress: Extra inputs are not permitted"),
        ("hosts: [a\n", "YAML syntax error"),
        ("hosts:\n  a: {docker: local}\n  a: {docker: local}\n", "hosts.yaml:3: YAML: key 'a' is written twice"),
        ("hostz: {}\n", "hosts: Field required"),
    ],
)
def test_bad_hosts_file_is_one_line_naming_the_field(tmp_path, text, message):
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    with pytest.raises(CatalogueError) as err:
        parse_hosts("a", path)
    assert str(err.value).startswith(str(path)) and message in str(err.value) and "\n" not in str(err.value)


def test_empty_host_word_is_an_error():
    with pytest.raises(CatalogueError, match="empty host name"):
        parse_hosts("a,,b")
