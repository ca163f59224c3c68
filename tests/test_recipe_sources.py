"""Recipes transcribed from public launch commands (issue 30): each serves exactly what its committed source file
(tests/data/commands, which names the source, the lines and the commit) reads into with `catalogue new`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.models.loading import parse_recipe

REPO = Path(__file__).resolve().parents[1]
COMMANDS = REPO / "tests" / "data" / "commands"
SNAPSHOT = REPO / "snapshots" / "vllm-0.32.0.json"
# Read with the newest release's snapshot, a flag that only older releases spell that way (--no-enable-prefix-caching)
# lands in serving.image_flags, declared as provided by the recipe's image.
NEWEST = REPO / "snapshots" / "vllm-0.33.0.json"
PARTS = {"image", "env", "env_from_host", "flags", "image_flags", "container", "model_path"}

# recipe id -> (source file, extra `catalogue new` arguments)
PASTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "llama33-70b-bf16-2x-spark-tp2": (
        "nvidia-playbook-two-sparks-llama33-70b.sh",
        ("--image", "nvcr.io/nvidia/vllm:26.05-py3"),
    ),
    "llama31-405b-awq-2x-spark-tp2": (
        "nvidia-playbook-two-sparks-llama31-405b-awq.sh",
        ("--image", "nvcr.io/nvidia/vllm:26.05-py3"),
    ),
    "qwen36-35b-a3b-nvfp4-nvidia-playbook": ("nvidia-playbook-vllm-qwen36-nvfp4.sh", ()),
    "minimax-m2-awq-2x-spark-tp2": ("eugr-readme-cluster-minimax-m2-awq.sh", ("--image", "vllm-node")),
    "qwen3-vl-235b-a22b-nvfp4-2x-spark-tp2": ("eugr-readme-cluster-qwen3-vl-235b-nvfp4.sh", ("--image", "vllm-node")),
    "gptoss-120b-2x-spark-tp2-fastsafetensors": ("eugr-readme-cluster-gptoss-120b.sh", ("--image", "vllm-node")),
    "qwen3-vl-30b-a3b-awq-eugr": ("eugr-readme-single-node.sh", ()),
    "gptoss-20b-mxfp4-inference-stack": ("jdaln-inference-stack-models-gpt.yml", ("--service", "vllm-oss20b")),
    "deepseek-r1-distill-qwen-32b-ngc-2510": (
        "jdaln-inference-stack-models-deepseek.yml",
        ("--service", "vllm-deepseek-r1-32b"),
    ),
    "deepseek-r1-distill-qwen-14b-ngc-2510": (
        "jdaln-inference-stack-models-deepseek.yml",
        ("--service", "vllm-deepseek-r1-14b"),
    ),
    "qwen25-coder-7b-ngc-2510": ("jdaln-inference-stack-models-qwen.yml", ("--service", "vllm-qwen25-coder-7b")),
    "mistral-nemo-12b-bf16-ngc-2510": (
        "jdaln-inference-stack-models-mistral.yml",
        ("--service", "vllm-mistral-nemo-12b"),
    ),
    "gptoss-120b-mxfp4-inference-stack": ("jdaln-inference-stack-models-gpt.yml", ("--service", "vllm-oss120b")),
    "glm4-9b-chat-ngc-2510": ("jdaln-inference-stack-models-glm.yml", ("--service", "vllm-glm4-9b")),
    "qwen25-vl-7b-awq-ngc-2510": ("jdaln-inference-stack-models-qwen.yml", ("--service", "vllm-qwen25-vl-7b")),
    "gemma4-26b-a4b-online-fp8-inference-stack": (
        "jdaln-inference-stack-models-gemma.yml",
        ("--service", "vllm-gemma4-26b-a4b"),
    ),
    "gemma4-31b-online-fp8-inference-stack": (
        "jdaln-inference-stack-models-gemma.yml",
        ("--service", "vllm-gemma4-31b"),
    ),
    "qwen3-vl-30b-a3b-awq-inference-stack": (
        "jdaln-inference-stack-models-qwen.yml",
        ("--service", "vllm-qwen3-vl-30b"),
    ),
    "qwen25-math-1-5b-ngc-2510": ("jdaln-inference-stack-models-qwen.yml", ("--service", "vllm-qwen-math")),
    "qwen36-35b-a3b-fp8-ngc-2605": ("techpreacher-qwen-compose-single-spark.yml", ("--service", "vllm")),
    "qwen3-30b-a3b-thinking-fp8-2x-spark-tp2": (
        "techpreacher-launch-qwen-30b-thinking-2x.sh",
        ("--image", "nvcr.io/nvidia/vllm:25.11-py3"),
    ),
    "qwen35-122b-a10b-fp8-2x-spark-tp2": (
        "techpreacher-launch-qwen35-122b-2x.sh",
        ("--image", "nvcr.io/nvidia/vllm:25.11-py3"),
    ),
    "gemma4-26b-a4b-fp8-eugr-solo": ("eugr-recipe-gemma4-26b-a4b-solo.sh", ("--image", "vllm-node-tf5")),
    "gemma4-e2b-bf16-vllm-0271": (
        "inference-atlas-gemma4-e2b-bf16-vllm-0271.sh",
        ("--image", "vllm/vllm-openai:v0.27.1-aarch64"),
    ),
    "qwen36-35b-a3b-fp8-mtp-miaai": (
        "inference-atlas-qwen36-35b-a3b-fp8-mtp-miaai.sh",
        (
            "--image",
            "ghcr.io/miaai-lab/mia-vllm-gb10-linear-b12x@sha256:19627342e1da2607f4db50745dca30e57d7dd0ebff06062f03fd69b43a252931",
        ),
    ),
    "qwen38-flash-next-fp8-2x-spark-tp2": (
        "inference-atlas-qwen38-flash-next-fp8-2x.sh",
        ("--image", "qwen38fn:ray"),
    ),
    "granite41-8b-bf16-djangs": (
        "djangs-arena-granite-4.1-8b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "nemotron3-nano-30b-a3b-fp8-djangs": (
        "djangs-arena-nemotron-3-nano-30b-a3b-fp8.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "nemotron3-nano-30b-a3b-nvfp4-djangs": (
        "djangs-arena-nemotron-3-nano-30b-a3b-nvfp4.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "nemotron3-nano-30b-a3b-bf16-djangs": (
        "djangs-arena-nemotron-3-nano-30b-a3b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "nemotron3-nano-4b-bf16-djangs": (
        "djangs-arena-nemotron-3-nano-4b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "nemotron3-nano-4b-fp8-djangs": (
        "djangs-arena-nemotron-3-nano-4b-fp8.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "ministral3-8b-bf16-djangs": (
        "djangs-arena-ministral-3-8b-instruct-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "ministral3-3b-bf16-djangs": (
        "djangs-arena-ministral-3-3b-instruct-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "mistral-small4-119b-nvfp4-djangs": (
        "djangs-arena-mistral-small-4-119b-nvfp4.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen35-9b-bf16-djangs": (
        "djangs-arena-qwen-3.5-9b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen35-4b-bf16-djangs": (
        "djangs-arena-qwen-3.5-4b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen35-2b-bf16-djangs": (
        "djangs-arena-qwen-3.5-2b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen35-0-8b-bf16-djangs": (
        "djangs-arena-qwen-3.5-0.8b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen36-27b-bf16-djangs": (
        "djangs-arena-qwen-3.6-27b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen36-27b-fp8-djangs": (
        "djangs-arena-qwen-3.6-27b-fp8.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen38-27b-bf16-djangs": (
        "djangs-arena-qwen-3.8-27b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen38-27b-fp8-djangs": (
        "djangs-arena-qwen-3.8-27b-fp8.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "gemma4-e4b-bf16-djangs": (
        "djangs-arena-gemma-4-e4b-it-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "gemma4-31b-bf16-djangs": (
        "djangs-arena-gemma-4-31b-it-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "gptoss-20b-mxfp4-djangs": (
        "djangs-arena-gpt-oss-20b-mxfp4.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "lfm25-2-6b-bf16-djangs": (
        "djangs-arena-lfm2.5-2.6b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "nemotron-cascade2-30b-a3b-bf16-djangs": (
        "djangs-arena-nemotron-cascade-2-30b-a3b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "kat-coder-v25-dev-bf16-djangs": (
        "djangs-arena-kat-coder-v2.5-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "nemotron3-nano-omni-30b-a3b-bf16-djangs": (
        "djangs-arena-nemotron-3-nano-omni-30b-a3b-reasoning-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "nemotron3-nano-omni-30b-a3b-fp8-djangs": (
        "djangs-arena-nemotron-3-nano-omni-30b-a3b-reasoning-fp8.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "nemotron3-nano-omni-30b-a3b-nvfp4-djangs": (
        "djangs-arena-nemotron-3-nano-omni-30b-a3b-reasoning-nvfp4.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "gemma4-e2b-bf16-djangs": (
        "djangs-arena-gemma-4-e2b-it-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "gemma4-31b-nvfp4-djangs": (
        "djangs-arena-gemma-4-31b-it-nvfp4.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "gemma4-26b-a4b-bf16-djangs": (
        "djangs-arena-gemma-4-26b-a4b-it-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "gemma4-26b-a4b-nvfp4-djangs": (
        "djangs-arena-gemma-4-26b-a4b-it-nvfp4.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen36-35b-a3b-bf16-djangs": (
        "djangs-arena-qwen-3.6-35b-a3b-bf16.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen36-35b-a3b-fp8-marlin-djangs": (
        "djangs-arena-qwen-3.6-35b-a3b-fp8.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen36-35b-a3b-nvfp4-marlin-djangs": (
        "djangs-arena-qwen-3.6-35b-a3b-nvfp4.sh",
        ("--image", "vllm/vllm-openai:v0.26.0-aarch64-cu129-ubuntu2404", "--snapshot", str(NEWEST)),
    ),
    "qwen3-235b-a22b-gptq-int4-2x-spark-conselara": (
        "conselara-qwen3-235b-gptq-int4-2x.sh",
        ("--image", "nvcr.io/nvidia/vllm:26.04-py3"),
    ),
    "qwen36-35b-a3b-nvfp4-dflash-sbr": (
        "spark-bench-reproducers-qwen36-35b-a3b-nvfp4-dflash.sh",
        ("--model", "RedHatAI/Qwen3.6-35B-A3B-NVFP4"),
    ),
    "qwen36-27b-nvfp4-dflash-sbr": (
        "spark-bench-reproducers-qwen36-27b-nvfp4-dflash.sh",
        ("--model", "sakamakismile/Qwen3.6-27B-NVFP4"),
    ),
    "qwen36-35b-a3b-nvfp4-ar-sbr": (
        "spark-bench-reproducers-qwen36-35b-a3b-nvfp4-ar.sh",
        ("--model", "RedHatAI/Qwen3.6-35B-A3B-NVFP4"),
    ),
    "qwen35-27b-nvfp4-prefill-sbr": (
        "spark-bench-reproducers-qwen35-27b-nvfp4-prefill.sh",
        ("--model", "AxionML/Qwen3.5-27B-NVFP4"),
    ),
    "qwen38-27b-nvfp4-mtp-vllm-0271": (
        "inference-atlas-qwen38-27b-nvfp4-mtp-vllm-0271.sh",
        (
            "--image",
            "vllm/vllm-openai:v0.27.1-aarch64@sha256:1c8e60a0841b333c700488cb029d3664807249da0c071e862191b00fe34b228c",
        ),
    ),
    "qwen38-27b-nvfp4-dspark-eugr-atlas": (
        "inference-atlas-qwen38-27b-nvfp4-dspark-eugr.sh",
        (
            "--image",
            "eugr/spark-vllm:nightly-20260814@sha256:ab89584706575a7af48a3d5a2a92bc48a5432781fb87925a181d8bb5eab4f5d3",
        ),
    ),
    "qwen35-27b-nvfp4-flashqla-v2-sbr": (
        "spark-bench-reproducers-qwen35-27b-nvfp4-flashqla-v2.sh",
        ("--model", "AxionML/Qwen3.5-27B-NVFP4"),
    ),
    "qwen35-27b-nvfp4-flashqla-fusedo-sbr": (
        "spark-bench-reproducers-qwen35-27b-nvfp4-flashqla-fusedo.sh",
        ("--model", "AxionML/Qwen3.5-27B-NVFP4"),
    ),
    "qwen36-35b-a3b-nvfp4-dflash-thinkoff-sbr": (
        "spark-bench-reproducers-qwen36-35b-a3b-nvfp4-dflash-thinkoff.sh",
        ("--model", "RedHatAI/Qwen3.6-35B-A3B-NVFP4"),
    ),
    "qwen36-35b-a3b-nvfp4-dflash-gmu050-sbr": (
        "spark-bench-reproducers-qwen36-35b-a3b-nvfp4-dflash-gmu050.sh",
        ("--model", "RedHatAI/Qwen3.6-35B-A3B-NVFP4"),
    ),
    "gemma4-e2b-bf16-noprefix-vllm-0271": (
        "inference-atlas-gemma4-e2b-bf16-noprefix-vllm-0271.sh",
        ("--image", "vllm/vllm-openai:v0.27.1-aarch64", "--snapshot", str(REPO / "snapshots" / "vllm-0.33.0.json")),
    ),
    "qwen36-27b-aeon-nvfp4-ar-sbr": (
        "spark-bench-reproducers-aeon-qwen36-27b-ar-reference.sh",
        (
            "--image",
            "ghcr.io/aeon-7/vllm-aeon-ultimate-dflash:qwen36-v4",
            "--model",
            "AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored-Multimodal-NVFP4-MTP-XS",
            "--snapshot",
            str(REPO / "snapshots" / "vllm-0.33.0.json"),
        ),
    ),
    "qwen36-27b-aeon-nvfp4-dflash-sbr": (
        "spark-bench-reproducers-aeon-qwen36-27b-dflash.sh",
        (
            "--image",
            "ghcr.io/aeon-7/vllm-aeon-ultimate-dflash:qwen36-v4",
            "--model",
            "AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored-Multimodal-NVFP4-MTP-XS",
            "--snapshot",
            str(REPO / "snapshots" / "vllm-0.33.0.json"),
        ),
    ),
}

# recipe id -> source file: a recipe file of a launcher that `catalogue new --from-sparkrun` reads (sparkrun v1)
RECIPE_FILES: dict[str, str] = {
    "minimax-m27-awq-2x-spark-tp2": "eugr-recipe-minimax-m2.7-awq.yaml",
}


@pytest.fixture
def catalogue_copy(tmp_path: Path) -> Path:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


def serving(root: Path, recipe_id: str) -> dict:
    return parse_recipe(root / recipe_id / "recipe.yaml").serving.model_dump(include=PARTS)


@pytest.mark.parametrize("recipe_id", sorted(PASTED))
def test_each_recipe_serves_what_its_source_command_reads_into(recipe_id, catalogue_copy):
    source, extra = PASTED[recipe_id]
    args = ["--root", str(catalogue_copy), "new", "pasted", "--from-command", str(COMMANDS / source)]
    assert main([*args, "--snapshot", str(SNAPSHOT), *extra]) == 0
    ours, theirs = serving(catalogue_copy, "pasted"), serving(catalogue_copy, recipe_id)
    for part in sorted(PARTS):
        assert ours[part] == theirs[part], part


@pytest.mark.parametrize("recipe_id", sorted(RECIPE_FILES))
def test_each_recipe_serves_what_its_source_recipe_file_reads_into(recipe_id, catalogue_copy):
    source = COMMANDS / RECIPE_FILES[recipe_id]
    args = ["--root", str(catalogue_copy), "new", "drafted", "--from-sparkrun", str(source)]
    assert main([*args, "--snapshot", str(SNAPSHOT)]) == 0
    ours, theirs = serving(catalogue_copy, "drafted"), serving(catalogue_copy, recipe_id)
    for part in sorted(PARTS):
        assert ours[part] == theirs[part], part


@pytest.mark.parametrize("recipe_id", sorted(PASTED) + sorted(RECIPE_FILES))
def test_each_source_file_names_its_commit_or_page_and_the_recipe_cites_it(recipe_id):
    """A repository's file by its commit; a web page (no commit) by its address."""
    name = PASTED[recipe_id][0] if recipe_id in PASTED else RECIPE_FILES[recipe_id]
    words = [word.strip("(),") for line in (COMMANDS / name).read_text().splitlines()[:2] for word in line.split()]
    commit = next((word for word in words if len(word) == 40), None)
    cited = commit or next(word for word in words if word.startswith("https://"))
    recipe = parse_recipe(REPO / "recipes" / recipe_id / "recipe.yaml")
    assert any(cited in source for source in recipe.sources)


def test_a_launch_run_through_docker_exec_is_refused_with_its_line(catalogue_copy, tmp_path, capsys):
    """The two-Spark playbook starts `vllm serve` with `docker exec` in the Ray container: refused, one line."""
    pasted = tmp_path / "exec.sh"
    pasted.write_text("docker exec -it $VLLM_CONTAINER /bin/bash -c '\n  vllm serve org/m --tensor-parallel-size 2'\n")
    assert main(["--root", str(catalogue_copy), "new", "x", "--from-command", str(pasted)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "`docker exec` is not part of a launch" in err[0]
