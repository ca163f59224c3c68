"""`--hosts` and the hosts file: each host reached through the docker CLI's own remote support."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

import runner.hosts.hosts as hosts_module
from catalogue.commands.cli import main
from catalogue.models.errors import CatalogueError
from runner.hosts.hosts import LOCAL, Host, parse_hosts

REPO = Path(__file__).resolve().parents[1]


def test_no_hosts_means_this_machine():
    assert parse_hosts(None) == [LOCAL] and LOCAL.docker_cli() == ["docker"]


def test_ssh_urls_bare_names_contexts_and_local(monkeypatch):
    monkeypatch.setattr(hosts_module, "docker_contexts", lambda: frozenset({"default", "lab"}))
    hosts = parse_hosts("local,ssh://me@10.0.0.2:2222,spark2,10.0.0.1,lab")
    assert hosts[0] == LOCAL
    assert hosts[1] == Host("10.0.0.2", "ssh://me@10.0.0.2:2222", "10.0.0.2")
    assert hosts[1].docker_cli() == ["docker", "-H", "ssh://me@10.0.0.2:2222"]
    # A bare name or address is an ssh host (the owner's ssh config applies), unless a context has that name.
    assert hosts[2].docker_cli() == ["docker", "-H", "ssh://spark2"] and hosts[2].address == "spark2"
    assert hosts[3].docker_cli() == ["docker", "-H", "ssh://10.0.0.1"] and hosts[3].address == "10.0.0.1"
    assert hosts[4].docker_cli() == ["docker", "--context", "lab"]


def test_contexts_come_from_the_docker_cli():
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI")
    hosts_module.docker_contexts.cache_clear()
    assert "default" in hosts_module.docker_contexts()  # docker always has this one
    assert parse_hosts("default")[0].docker_cli() == ["docker", "--context", "default"]


def test_hosts_file_names_engines_and_addresses(tmp_path):
    path = tmp_path / "hosts.yaml"
    path.write_text(
        "hosts:\n  spark1: {docker: local, address: 192.0.2.1, interface: enp1s0f1np1, hca: rocep1s0f1}\n"
        "  spark2: {docker: 'ssh://me@spark2.lan', address: 192.0.2.2, interface: enp1s0f1np1, hf_home: /data/hf}\n"
        "  spark3: {docker: spark3.lan}\n"
    )
    one, two, three = parse_hosts("spark1,spark2,spark3", path)
    assert one == Host("spark1", None, "192.0.2.1", "enp1s0f1np1", "rocep1s0f1") and one.is_local
    assert two == Host("spark2", "ssh://me@spark2.lan", "192.0.2.2", "enp1s0f1np1", None, "/data/hf")
    assert three.docker_cli() == ["docker", "-H", "ssh://spark3.lan"] and three.address == "spark3.lan"


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


SPARK = "hosts:\n  spark1: {docker: local, address: 192.0.2.1, interface: enp1s0f1np1}\n"


def test_the_hosts_file_is_the_owners_config_file(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert hosts_module.hosts_file_path() == tmp_path / "config" / "catalogue" / "hosts.yaml"
    hosts_module.hosts_file_path().parent.mkdir(parents=True)
    hosts_module.hosts_file_path().write_text(SPARK)
    assert parse_hosts("spark1") == [Host("spark1", None, "192.0.2.1", "enp1s0f1np1")]


@pytest.mark.parametrize("xdg", [None, "", "relative/config"])
def test_without_xdg_config_home_it_is_under_dot_config(tmp_path, monkeypatch, xdg):
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CONFIG_HOME", xdg)  # empty or relative: ignored, as the XDG specification says
    assert hosts_module.hosts_file_path() == tmp_path / ".config" / "catalogue" / "hosts.yaml"


def test_a_hosts_file_in_the_working_folder_is_not_read(tmp_path, monkeypatch, capsys):
    """A `hosts.yaml` committed in the repository (or a pull request) must not say which engines the runner drives."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(hosts_module, "docker_contexts", lambda: frozenset({"default"}))
    (tmp_path / "hosts.yaml").write_text("hosts:\n  spark1: {docker: 'tcp://203.0.113.9:2375'}\n")
    (host,) = parse_hosts("spark1")
    assert host.docker_cli() == ["docker", "-H", "ssh://spark1"]  # the bare name, not the file's tcp:// engine
    assert capsys.readouterr().err.strip() == (
        f"note: ./hosts.yaml is not read (the hosts file lives in {tmp_path}/config/catalogue/hosts.yaml; "
        "or pass --hosts-file)"
    )
    assert parse_hosts("spark1", tmp_path / "hosts.yaml")[0].docker_cli() == ["docker", "-H", "tcp://203.0.113.9:2375"]


def test_hosts_yaml_is_ignored_by_git():
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run(["git", "check-ignore", "-q", "hosts.yaml"], cwd=repo, check=False)
    assert done.returncode == 0


def test_folders_the_owner_names_in_the_hosts_file_mount_without_consent(tmp_path, capsys):
    root = tmp_path / "examples"
    shutil.copytree(
        REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker", ignore=shutil.ignore_patterns("runs")
    )
    path = root / "tiny-cpu-docker" / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    data["serving"]["container"]["options"] += ["-v", "/srv/weights/tiny:/weights:ro"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    args = ["--root", str(root), "refresh", "tiny-cpu-docker", "--dry-run", "--allow", "--cap-add IPC_LOCK"]
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("hosts:\n  box: {docker: local}\n")
    assert main([*args, "--hosts", "box", "--hosts-file", str(hosts)]) == 0
    assert "consent: --volume /srv/weights/tiny: mounts a host folder" in capsys.readouterr().out
    hosts.write_text("hosts:\n  box: {docker: local, allow_mounts: [/srv/weights]}\n")
    assert main([*args, "--hosts", "box", "--hosts-file", str(hosts)]) == 0
    assert "--volume /srv/weights" not in capsys.readouterr().out.split("run policy")[-1]
