"""The inspect gate's reading of the `vllm serve` flags docker holds: every committed recipe's server command reads
back with no verdict the static policy did not give, and words the recipe never showed (a flag smuggled after a list
value, an abbreviation, a dotted JSON key, a file read from the ssh folder) are judged as vLLM would read them. The
gate on the real engine: tests/test_inspect_gate.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalogue.models.loading import load_catalogue
from catalogue.models.topology import layout, placeholder_nodes
from catalogue.policy.check import PolicyContext, check_env_paths, check_serving
from runner.hosts.docker_view import read_view
from runner.planning.inspect_gate import Container, Verdicts, judge
from runner.planning.served_flags import judge_command, served_flags

REPO = Path(__file__).resolve().parents[1]
IMAGE = "local/debian-py:bookworm"


def _entries():
    return [e for e in load_catalogue([REPO / "recipes", REPO / "examples"]) if e.recipe.serving.image]


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e.id)
def test_every_committed_server_command_reads_back_with_no_new_verdict(entry):
    static = check_serving(entry.recipe.serving, source="x", platform=entry.platform)
    declared = {f.option: f.reason or "declared" for f in static if f.cls == "consent"}
    lay = layout(entry.recipe, placeholder_nodes(entry.recipe), platform=entry.platform)
    for server in lay.servers:
        for command in (server.serve, server.exec_serve or []):
            found = judge_command(command, str(server.image), declared)
            assert [str(f) for f in found if f.is_error] == [], (entry.id, command)


def test_a_command_without_vllm_serve_has_no_flags():
    assert served_flags(["python3", "/catalogue/driver.py", "--serve"], IMAGE) is None
    assert served_flags(["vllm", "bench", "serve", "--worker-cls", "x"], IMAGE) is None


SMUGGLED = [
    "vllm",
    "serve",
    "/models/m",
    "--served-model-name",
    "m",
    "--worker-cls",
    "evil.W",
    "--tool_parser_plug",
    "/x.py",
    "--compilation-config.backend",
    "evil.compile",
    "--chat-template",
    "~/.ssh/id_ed25519",
    "--port",
    "8000",
]


def test_words_the_recipe_never_showed_are_judged_as_vllm_reads_them():
    found = {(f.cls, f.option) for f in judge_command(SMUGGLED, IMAGE, {})}
    assert found == {
        ("consent", "--worker-cls"),
        ("consent", "--tool-parser-plugin"),
        ("consent", "--compilation-config backend"),
        ("never", "--chat-template ~/.ssh/id_ed25519"),
    }
    declared = judge_command(SMUGGLED[:7], IMAGE, {"--worker-cls": "a reason"})
    assert [(f.cls, f.is_error) for f in declared] == [("consent", False)]


def test_a_command_vllm_would_read_otherwise_is_refused():
    found = judge_command(["vllm", "serve", "m", "--port", "8000", "stray"], IMAGE, {})
    assert [(f.cls, f.option) for f in found] == [("never", "vllm serve")]
    assert "unexpected word 'stray'" in found[0].why


def test_the_gate_judges_the_command_and_path_variables_docker_shows():
    """A `docker inspect` document (as the engine writes it) through read_view and judge: the command's flags and a
    path variable that reaches a host folder through a bind are refused; the same variable elsewhere is data."""
    document = {
        "Path": "vllm",
        "Args": SMUGGLED[1:7],
        "Config": {"Image": IMAGE, "Env": ["HF_HOME=/data/.ssh", "VLLM_CACHE_ROOT=/tmp/vllm"], "Labels": {}},
        "HostConfig": {"LogConfig": {"Type": "json-file", "Config": {}}, "Binds": ["/srv/d:/data"]},
        "Mounts": [
            {
                "Type": "bind",
                "Source": "/srv/d",
                "Destination": "/data",
                "Mode": "",
                "RW": True,
                "Propagation": "rprivate",
            }
        ],
    }
    view = read_view(document, resolve=False)
    base = read_view({"Path": "true", "Args": [], "Config": {"Image": IMAGE}, "HostConfig": {}}, resolve=False)
    found = {(f.cls, f.option) for f in judge(Container("server", None, [], {}, {}), view, base, Verdicts({}, []))}
    assert ("consent", "--worker-cls") in found
    assert ("never", "HF_HOME /srv/d/.ssh") in found
    assert not any(option.startswith("VLLM_CACHE_ROOT") for _, option in found)


def test_the_gate_reads_a_path_in_the_profiles_hf_cache_as_the_static_gate_does():
    """The static gate folds a recipe's cache mount into the profile's (the runner's own); a path variable below it
    reaches the owner's cache, where a model download puts any repository's files: consent in docker's view too
    (named by the container path, as the static gate names it), and with no profile cache, by the host path."""
    hub = "/root/.cache/huggingface/hub"
    document = {
        "Path": "true",
        "Config": {"Image": IMAGE, "Env": [f"HF_HOME={hub}/x"]},
        "HostConfig": {"LogConfig": {"Type": "json-file", "Config": {}}, "Binds": [f"/srv/hf/hub:{hub}"]},
        "Mounts": [
            {"Type": "bind", "Source": "/srv/hf/hub", "Destination": hub, "RW": True, "Propagation": "rprivate"}
        ],
    }
    view = read_view(document, resolve=False)
    base = read_view({"Path": "true", "Config": {"Image": IMAGE}, "HostConfig": {}}, resolve=False)
    folded = Verdicts({}, [], PolicyContext("/root/.cache/huggingface"))
    found = judge(Container("server", None, [], {}, {}), view, base, folded)
    assert [(f.cls, f.option) for f in found if f.option.startswith("HF_HOME")] == [("consent", f"HF_HOME {hub}/x")]
    static = check_env_paths({"HF_HOME": f"{hub}/x"}, [], PolicyContext("/root/.cache/huggingface"))
    assert [(f.cls, f.option) for f in static] == [("consent", f"HF_HOME {hub}/x")]
    elsewhere = judge(Container("server", None, [], {}, {}), view, base, Verdicts({}, [], PolicyContext(None)))
    assert [(f.cls, f.option) for f in elsewhere if f.option.startswith("HF_HOME")] == [
        ("consent", "HF_HOME /srv/hf/hub/x")
    ]
