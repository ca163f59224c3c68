"""The runner's own binds in one place (catalogue/models/runner_mounts.py): the hub's `-v` words, read-only exactly
when the server may run the model repository's code or runs offline, and the binds the policy judges paths by."""

from __future__ import annotations

import pytest

from catalogue.models.platform import load_platform
from catalogue.models.runner_mounts import COMPILE_CACHE, hub_read_only, hub_volume, runner_binds


@pytest.mark.parametrize(
    ("flags", "env", "read_only"),
    [
        ({"trust-remote-code": True}, {}, "--trust-remote-code"),
        ({"trust_remote_code": True}, {}, "--trust-remote-code"),  # as vLLM's parser reads it
        ({"trust-remote": True}, {}, "--trust-remote-code"),  # an abbreviation of that one flag
        ({"trust-remote-code": "true"}, {}, "--trust-remote-code"),
        ({"trust-remote-code": False}, {}, None),
        ({}, {"HF_HUB_OFFLINE": "1"}, "HF_HUB_OFFLINE"),
        ({}, {"HF_HUB_OFFLINE": "yes"}, "HF_HUB_OFFLINE"),
        ({}, {"HF_HUB_OFFLINE": "0"}, None),
        ({"max-model-len": 512}, {"VLLM_CPU_KVCACHE_SPACE": "1"}, None),
    ],
)
def test_the_hub_is_read_only_when_repo_code_may_run_or_nothing_is_downloaded(flags, env, read_only):
    why = hub_read_only(flags, env)
    assert (why is None) == (read_only is None)
    assert read_only is None or why.startswith(read_only), why


def test_the_hub_volume_binds_the_hub_only_and_says_its_mode():
    assert hub_volume("~/.cache/huggingface/", "/root/.cache/huggingface", False) == [
        "-v",
        "~/.cache/huggingface/hub:/root/.cache/huggingface/hub",
    ]
    assert hub_volume("/srv/hf", "/hf/", True) == ["-v", "/srv/hf/hub:/hf/hub:ro"]


def test_the_runners_binds_are_the_compile_cache_and_the_profiles_hub():
    cache = load_platform("dgx-spark").hf_cache
    assert runner_binds(cache) == (
        ("~/.cache/catalogue/compile/<image>/<recipe>", COMPILE_CACHE),
        ("~/.cache/huggingface/hub", "/root/.cache/huggingface/hub"),
    )
    assert [target for _, target in runner_binds(None)] == [COMPILE_CACHE]


def test_the_hub_is_read_only_when_the_policy_found_code_of_the_recipes_choice():
    assert hub_read_only({}, {}, ["--tool-parser-plugin", "image ghcr.io/x/y"]) == (
        "--tool-parser-plugin runs code the recipe chooses, which must not rewrite other models' files"
    )
    assert hub_read_only({}, {}, []) is None
