"""catalogue.policy.code_secrets: the owner's variables (serving.env_from_host) reach code of the recipe's choice only
with consent named by the variable and the code's source; the model repository under --trust-remote-code, and the
other repositories it runs code from, are such sources (attack44d finding 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from catalogue.models.platform import load_platform
from catalogue.models.recipe import Recipe
from catalogue.policy.check import check_launch, check_recipe_file, context_for, errors, required_allows
from catalogue.policy.code_secrets import code_sources, remote_repositories

REPO = Path(__file__).resolve().parents[1]
ATTACK = """title: Evil model with remote code
summary: A model whose repository ships its own modelling code.
status: community
model: attacker/innocent-looking-model
quantization: none
hardware: {name: NVIDIA DGX Spark, platform: dgx-spark, accelerator: GB10, memory_gb: 128.0,
  memory_type: LPDDR5x unified, memory_bandwidth_gbs: 273.0, nodes: 1}
topology: {kind: solo}
serving:
  image: vllm/vllm-openai:v0.11.0
  container: {options: [--gpus, all]}
  env_from_host: [HF_TOKEN]
  flags: {host: 127.0.0.1, port: 8000, trust-remote-code: true}
publish: false
sweep: {concurrency: [1], input_len: 32, output_len: 16, prompts_per_level: 8}
"""
NAME = "env_from_host HF_TOKEN to remote code attacker/innocent-looking-model"
SPARK = context_for(load_platform("dgx-spark", REPO / "platforms"))


def launch(flags: dict, env: dict | None = None, image: str = "vllm/vllm-openai:v0.11.0", consent=None, **kw):
    return check_launch(
        [], env or {}, flags, image, consent, source="r", env_from_host=["HF_TOKEN"], context=SPARK, **kw
    )


def test_the_owners_token_reaches_a_strangers_repository_code_only_with_consent_naming_both(tmp_path):
    """The attacker's recipe (trusted image, own repository, --trust-remote-code, HF_TOKEN) got only a note."""
    path = tmp_path / "recipe.yaml"
    path.write_text(ATTACK)
    recipe = Recipe.model_validate(yaml.safe_load(ATTACK))
    platform = load_platform("dgx-spark", REPO / "platforms")
    found = check_recipe_file(path, recipe.serving, ATTACK, platform, model=recipe.model_arg)
    (stops,) = errors(found)
    assert stops.option == NAME and stops.cls == "consent" and stops.lineno == 12
    assert "HF_TOKEN" in stops.why and "attacker/innocent-looking-model" in stops.line()
    assert required_allows(found) == [NAME]
    declared = ATTACK.replace(
        "  flags:", f"  consent:\n  - option: {NAME}\n    reason: the repository is ours.\n  flags:"
    )
    recipe = Recipe.model_validate(yaml.safe_load(declared))
    found = check_recipe_file(path, recipe.serving, declared, platform, model=recipe.model_arg)
    assert errors(found) == [] and required_allows(found) == [NAME]  # the owner still allows it by name
    without = ATTACK.replace("env_from_host: [HF_TOKEN]", "env_from_host: []")
    recipe = Recipe.model_validate(yaml.safe_load(without))
    assert errors(check_recipe_file(path, recipe.serving, without, platform, model=recipe.model_arg)) == []


def test_no_remote_code_no_consent_and_each_secret_is_named_apart():
    assert [f.option for f in launch({"host": "127.0.0.1"}, model="m/x") if f.cls == "consent"] == []
    both = check_launch(
        [],
        {},
        {"trust_remote_code": True},  # vLLM's own spelling
        "vllm/vllm-openai:v0.11.0",
        None,
        source="r",
        env_from_host=["HF_TOKEN", "VLLM_API_KEY"],
        context=SPARK,
        model="m/x",
    )
    assert required_allows(both) == [
        "env_from_host HF_TOKEN to remote code m/x",
        "env_from_host VLLM_API_KEY to remote code m/x",
    ]


@pytest.mark.parametrize(
    ("flags", "env", "source"),
    [
        ({"compilation-config": {"backend": "evil.mod"}}, {}, "--compilation-config backend"),
        ({"tool-parser-plugin": "/r/p.py"}, {}, "--tool-parser-plugin"),
        ({}, {"VLLM_PLUGINS": "evil"}, "VLLM_PLUGINS"),
    ],
)
def test_any_code_of_the_recipes_choice_is_a_source(flags, env, source):
    found = launch(flags, env, model="m/x")
    assert f"env_from_host HF_TOKEN to {source}" in required_allows(found)


def test_the_repositories_remote_code_runs_from():
    flags = {
        "tokenizer": "other/tok",
        "hf_config_path": "third/cfg",
        "speculative-config": '{"model": "draft/m", "num_speculative_tokens": 2}',
    }
    assert remote_repositories(flags, "m/x") == ["m/x", "other/tok", "third/cfg", "draft/m"]
    assert remote_repositories({"speculative-config.model": "d/m"}, None) == ["the recipe's model", "d/m"]
    assert remote_repositories({"speculative-config": "[[[" * 3000}, "m/x") == ["m/x"]  # not JSON: no draft named
    found = launch({"trust-remote-code": True, "tokenizer": "other/tok"}, model="m/x")
    assert code_sources(found, {"trust-remote-code": True, "tokenizer": "other/tok"}, "m/x") == [
        "remote code m/x",
        "remote code other/tok",
    ]


def test_an_untrusted_images_own_consent_names_the_secret_and_no_second_one_is_asked():
    found = launch({}, image="ghcr.io/someone/vllm:1", model="m/x")
    assert required_allows(found) == ["image ghcr.io/someone/vllm"]
    assert "HF_TOKEN" in found[0].why
