"""Every process the runner starts gets runner.hosts.child_env's environment: nothing of the owner's shell but what it
needs, the values the runner passes and the recipe's by-name variables. The docker run below sets twenty fake
credentials in this process and reads, inside the running containers and in the docker CLIs the runner started,
that none arrived but the one the recipe takes by name; in the same boot it reads each running container's
capabilities, mounts and variable names against a plain container of the image (the local `vllm serve` is read the
same way in tests/test_runner.py's end-to-end run)."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.models.loading import load_entry
from runner.hosts import server as srv
from runner.hosts.child_env import child_env, for_argv
from runner.planning.plan import make_plan
from tests.env_probe import FAKE, environ_of, inside, leaks, plain, probing, set_fake_credentials

REPO = Path(__file__).resolve().parents[1]


def test_a_child_gets_what_it_needs_and_nothing_of_the_owners_shell(monkeypatch):
    set_fake_credentials(monkeypatch)
    monkeypatch.setenv("DOCKER_HOST", "unix:///run/user/1000/docker.sock")
    env = child_env({"OPENAI_API_KEY": "sk-run"}, by_name=["HF_TOKEN", "NOT_SET_HERE"])
    assert env["PATH"] and env["DOCKER_HOST"] == "unix:///run/user/1000/docker.sock"
    assert env["OPENAI_API_KEY"] == "sk-run" and env["HF_TOKEN"] == FAKE["HF_TOKEN"]
    assert "NOT_SET_HERE" not in env
    assert leaks({"child": env}, {"HF_TOKEN"}) == []
    assert "SSH_AUTH_SOCK" not in for_argv(["docker", "ps"])
    assert for_argv(["docker", "-H", "ssh://spark2", "ps"])["SSH_AUTH_SOCK"] == FAKE["SSH_AUTH_SOCK"]
    assert "SSH_AUTH_SOCK" in for_argv(["docker", "--context", "spark2", "ps"])


def test_a_process_the_runner_starts_has_that_environment(monkeypatch, tmp_path):
    set_fake_credentials(monkeypatch)
    process = srv.start(
        [sys.executable, "-c", "import time; time.sleep(30)"], {"VLLM_CPU_KVCACHE_SPACE": "1"}, tmp_path / "p.log",
        by_name=["HF_TOKEN"],
    )  # fmt: skip
    try:  # read until the kernel shows the new program's environment (CI once read one without the recipe's value)
        deadline = time.monotonic() + 10
        seen = environ_of(process.pid)
        while "VLLM_CPU_KVCACHE_SPACE" not in seen and time.monotonic() < deadline:
            time.sleep(0.05)
            seen = environ_of(process.pid)
    finally:
        srv.stop_group(process, grace_s=1)
    assert seen.get("VLLM_CPU_KVCACHE_SPACE") == "1" and seen.get("HF_TOKEN") == FAKE["HF_TOKEN"], sorted(seen)
    assert leaks({"process": seen}, {"HF_TOKEN"}) == []
    assert set(seen) <= {*child_env(), "VLLM_CPU_KVCACHE_SPACE", "HF_TOKEN"}


def test_a_local_server_takes_only_the_owners_cache_setting_and_the_recipes_by_name_variables():
    (entry,) = [load_entry(REPO / "examples" / "tiny-cpu")]
    node = make_plan(entry, local=True).nodes[0]
    assert node.container is None and node.by_name == ["HF_HOME"]  # tiny-cpu takes nothing by name


def _example(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "examples"
    shutil.copytree(
        REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker", ignore=shutil.ignore_patterns("runs")
    )
    path = root / "tiny-cpu-docker" / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    data["serving"]["env_from_host"] = ["HF_TOKEN"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return root, root / "tiny-cpu-docker"


@pytest.mark.docker
@pytest.mark.server
def test_twenty_fake_credentials_reach_no_container_but_the_one_the_recipe_takes(engine, tmp_path, monkeypatch):
    """While the tiny docker example runs (one boot): no fake credential but the recipe's by-name HF_TOKEN in any
    container or docker CLI; inside the server and the client, the capabilities, mounts and variable names are
    exactly a plain container of the image plus what the policy allowed."""
    from tests.docker_support import free_port, labelled_containers

    root, folder = _example(tmp_path)
    set_fake_credentials(monkeypatch)
    seen: dict[str, dict[str, str]] = {}
    views: dict[str, tuple[int, set[str], set[str], str]] = {}
    server_name, client_name = "catalogue-tiny-cpu-docker", "catalogue-tiny-cpu-docker-client"

    def look_inside(_r) -> None:
        views.update({name: inside(name) for name in (server_name, client_name)})

    probing(monkeypatch, seen, stop=True, also=look_inside)
    args = ["--root", str(root), "refresh", "tiny-cpu-docker", "--port", str(free_port())]
    assert main([*args, "--allow", "--cap-add IPC_LOCK"]) == 1  # the probe ends the run once the server answers
    containers = {where: env for where, env in seen.items() if where.startswith("container ")}
    assert len(containers) >= 2, sorted(seen)  # the server and the benchmark client, both running
    server = next(env for where, env in containers.items() if "client" not in where and "snapshot" not in where)
    assert server["HF_TOKEN"] == FAKE["HF_TOKEN"] and server["VLLM_CPU_KVCACHE_SPACE"] == "1"  # the probe reads
    assert any(where.startswith("pid ") and "docker" in where for where in seen), sorted(seen)  # the CLIs too
    assert leaks(seen, {"HF_TOKEN"}) == []
    assert labelled_containers("catalogue.recipe=tiny-cpu-docker") == []
    assert not list((folder / "runs").glob("*.json"))  # stopped before any level: nothing recorded

    caps, points, names = plain("local/vllm-cpu:0.32.0", "catalogue-test.env=plain")
    ipc_lock = 1 << 14
    s_caps, s_points, s_names, s_nnp = views[server_name]
    assert s_caps == caps | ipc_lock and s_nnp == "1"  # docker's default set + the consented IPC_LOCK
    assert s_points - points == {"/catalogue-cache", "/root/.cache/huggingface/hub"}
    runner_env = {"VLLM_CACHE_ROOT", "TORCHINDUCTOR_CACHE_DIR", "HF_HOME"}
    recipe_env = {"HF_HUB_OFFLINE", "VLLM_CPU_KVCACHE_SPACE", "HF_TOKEN", *runner_env}
    assert s_names - names - {"HOSTNAME"} == recipe_env - names  # the image sets some of them itself
    c_caps, c_points, c_names, c_nnp = views[client_name]
    assert c_caps & ~caps == 0 and c_nnp == "1"  # nothing beyond docker's defaults
    assert c_points - points == {
        "/raw",
        "/catalogue/driver.py",
        "/catalogue/passport_probe.py",
        "/root/.cache/huggingface/hub",
    }
    assert "AWS_SECRET_ACCESS_KEY" not in s_names | c_names and "OPENAI_API_KEY" in c_names
