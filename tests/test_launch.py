"""The rendered launch command pastes into a shell and splits back to the recipe's argv."""

from __future__ import annotations

import json
import subprocess

from catalogue.models.launch import flag_words, shell_command, split_command
from catalogue.models.topology import launch_argv, layout, placeholder_nodes


def test_flag_words():
    assert flag_words("enable-prefix-caching", True) == ["--enable-prefix-caching"]
    assert flag_words("max-num-seqs", 256) == ["--max-num-seqs", "256"]
    assert flag_words("compilation-config", {"a": [1, 2]}) == ["--compilation-config", '{"a":[1,2]}']


def test_every_seed_command_round_trips(entries):
    for entry in entries.values():
        for platform in (None, entry.platform):
            argv = launch_argv(entry.recipe, platform)
            assert split_command(shell_command(argv)) == argv


def test_bash_sees_the_same_words_and_puts_the_home_folder_in_the_cache_mount(entries):
    entry = entries["gptoss-120b"]
    argv = launch_argv(entry.recipe, entry.platform)
    script = shell_command(argv).replace("docker run", "printf '%s\\n' docker run", 1)
    out = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True, env={"HOME": "/home/me"}
    ).stdout
    cache = "~/.cache/huggingface/hub:/root/.cache/huggingface/hub"
    assert cache in argv and out.splitlines() == [w.replace("~/", "/home/me/") for w in argv]


def test_a_word_starting_with_a_tilde_keeps_the_rest_quoted():
    text = shell_command(["docker", "run", "-v", "~/x y;$(id):/m"])
    assert text.endswith("~/'x y;$(id):/m'") and split_command(text) == ["docker", "run", "-v", "~/x y;$(id):/m"]


def test_docker_form_has_env_image_and_options(entries):
    argv = launch_argv(entries["gptoss-120b"].recipe)
    assert argv[:4] == ["docker", "run", "--name", "gptoss-120b"]
    image_at = argv.index("vllm-node-mxfp4")
    assert argv[image_at - 2 : image_at] == ["-e", "VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1"]
    assert argv[image_at + 1 : image_at + 4] == ["vllm", "serve", "openai/gpt-oss-120b"]
    config = json.loads(argv[argv.index("--compilation-config") + 1])
    assert 5 in config["cudagraph_capture_sizes"] and 10 in config["cudagraph_capture_sizes"]


def test_hostile_values_stay_single_words(entries):
    recipe = entries["gptoss-120b"].recipe.model_copy(deep=True)
    recipe.serving.flags["served-model-name"] = "x; rm -rf / $(id) `id` 'q'"
    argv = layout(recipe, placeholder_nodes(recipe)).servers[0].serve
    assert split_command(shell_command(argv)) == argv
