"""Paths the server writes, judged against where they land (catalogue/policy/written_paths.py): never inside a bind
the runner adds (read from the one place it defines them), consent inside the recipe's own binds, nothing in the
container's own files, never on the owner's machine; and the runner's binds as the policy knows them are the ones
the plan mounts."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalogue.models.loading import load_entry
from catalogue.models.platform import load_platform
from catalogue.models.runner_mounts import COMPILE_CACHE, runner_binds
from catalogue.policy.check import check_launch, context_for
from catalogue.policy.written_paths import Landing, container_paths, judge_written, landing_for
from runner.planning.plan import make_plan

REPO = Path(__file__).resolve().parents[1]
HUB = "/root/.cache/huggingface/hub"
LANDING = Landing((("/srv/hf/hub", HUB), ("/var/cache/cc", COMPILE_CACHE)), (("/srv/models", "/models"),), "/work")


def verdicts(value: str, landing: Landing | None = LANDING) -> list[tuple[str, str]]:
    return [(f.cls, f.option) for f in judge_written("--download-dir", [value], landing, {}, ("f",))]


@pytest.mark.parametrize(
    ("value", "workdir", "expected"),
    [
        ("/a//b/../c/", "/", ["/a/c"]),
        ("cache/x", "/work", ["/work/cache/x"]),
        ("../root/.cache", "/work", ["/root/.cache"]),
        ("~/.cache/huggingface/hub", "/w", ["/w/~/.cache/huggingface/hub", HUB]),
        ("$HOME/x", "/", ["/$HOME/x", "/root/x"]),
        ("x", "rel", ["/rel/x"]),
    ],
)
def test_a_value_is_every_path_the_container_can_read_it_as(value, workdir, expected):
    assert container_paths(value, workdir) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (f"{HUB}/models--other--m/snapshots", [("never", "--download-dir /srv/hf/hub/models--other--m/snapshots")]),
        ("/root/.cache/x/..//huggingface/hub", [("never", "--download-dir /srv/hf/hub")]),
        ("~/.cache/huggingface/hub/a", [("never", "--download-dir /srv/hf/hub/a")]),
        ("../catalogue-cache/vllm", [("never", "--download-dir /var/cache/cc/vllm")]),
        ("/models/m", [("consent", "--download-dir /srv/models/m")]),
        ("/root/.cache/huggingface", []),  # above the hub bind: the container's own folder
        ("/tmp/dl", []),
        ("relative", []),  # /work/relative
        ("gs://bucket/traces", [("consent", "--download-dir")]),
        ("", []),
    ],
)
def test_a_written_path_in_a_container_is_judged_by_the_bind_it_lands_in(value, expected):
    assert verdicts(value) == expected


def test_the_runners_bind_wins_over_a_recipe_bind_inside_it():
    nested = Landing(LANDING.runner_binds, (("/srv/x", f"{HUB}/x"),))
    assert verdicts(f"{HUB}/x/y", nested) == [("never", "--download-dir /srv/hf/hub/x/y")]


def test_on_the_owners_machine_every_written_path_is_never_and_a_uri_is_consent():
    assert verdicts("/tmp/dl", None) == [("never", "--download-dir /tmp/dl")]
    assert verdicts("out", None) == [("never", "--download-dir out")]
    assert verdicts("s3://b/t", None) == [("consent", "--download-dir")]


def test_the_line_names_the_flag_and_the_host_folder():
    found = judge_written("--compilation-config cache_dir", [f"{HUB}/m"], LANDING, {}, ("f",))
    line = str(found[0])
    assert "never: --compilation-config cache_dir /srv/hf/hub/m: writes into /srv/hf/hub/m" in line
    assert f"mounts at {HUB}" in line


def test_the_static_landing_reads_the_workdir_and_the_platforms_binds():
    platform = load_platform("dgx-spark")
    context = context_for(platform)
    landing = landing_for(["-w", "/root/.cache/huggingface", "-v", "/srv/m:/m"], context)
    assert landing.workdir == "/root/.cache/huggingface"
    assert landing.recipe_binds == (("/srv/m", "/m"),)
    assert landing.runner_binds == runner_binds(platform.hf_cache)
    assert landing_for([], None).runner_binds == runner_binds(None)


@pytest.mark.parametrize("recipe", ["examples/tiny-cpu-docker", "recipes/gptoss-120b", "recipes/glm4-9b-chat-ngc-2510"])
def test_the_policy_knows_every_bind_the_plan_adds(recipe):
    """The targets the policy refuses writes into are exactly the runner's own mounts of a planned server."""
    entry = load_entry(REPO / recipe)
    plan = make_plan(entry)
    planned = {m.target for node in plan.nodes for m in node.own_mounts}
    known = {target for _, target in context_for(entry.platform).runner_binds}
    assert planned == known, (planned, known)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"download-dir": f"{HUB}/x"}, ("never", "--download-dir ~/.cache/huggingface/hub/x")),
        ({"compilation-config": {"debug_dump_path": "hub/d"}}, ("never", "--compilation-config debug_dump_path")),
        ({"profiler-config": {"torch_profiler_dir": f"{HUB}"}}, ("never", "--profiler-config torch_profiler_dir")),
        ({"mm-encoder-fp8-scale-save-path": f"{HUB}/s.json"}, ("never", "--mm-encoder-fp8-scale-save-path")),
        ({"watchdog-config": '{"dump_dir": "/catalogue-cache/d"}'}, ("never", "--watchdog-config dump_dir")),
    ],
)
def test_every_writing_flag_and_key_is_judged_in_a_launch(flags, expected):
    """Each class of writer through check_launch (a flag, a JSON key as a mapping and as text), workdir included."""
    context = context_for(load_platform("dgx-spark"))
    found = check_launch(
        ["-w", "/root/.cache/huggingface"], {}, flags, "vllm/vllm-openai:v1", {}, source="r", context=context
    )
    assert any(f.cls == expected[0] and f.option.startswith(expected[1]) for f in found), found
