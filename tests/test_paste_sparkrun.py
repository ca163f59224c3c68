"""`catalogue new --from-sparkrun`: every real sparkrun recipe under tests/data/sparkrun reads into a draft or is
refused with one line naming the file and the field; each field a draft cannot honour is one line naming both;
the draft is made as the paste path makes it (run policy, secrets, publish: false, TODOs)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.commands.new_sparkrun import draft_ids, recipe_files
from catalogue.models.loading import parse_recipe

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "sparkrun"
REGISTRY = DATA / "recipe-registry"
SNAPSHOT = REPO / "snapshots" / "vllm-0.32.0.json"

REFUSED = {
    "experimental-recipes/eugr-vllm/nemotron-3-nano-nvfp4-vllm.yaml": ":23: command: --reasoning-parser: 'nano_v3' is "
    "not a registered value [vLLM 0.32.0]",
    "experimental-recipes/eugr-vllm/qwen3.5-397b-a17b-fp8-4x-vllm.yaml": ":31: command: "
    "--compilation-config.cudagraph-mode: unknown flag (did you mean --compilation-config?) [vLLM 0.32.0]",
    "experimental-recipes/minimax-m3/minimax-m3-v0-nvfp4-2x-reap25.yaml": ":3: runtime: sglang: the catalogue serves "
    "with vLLM only",
    "experimental-recipes/minimax-m3/minimax-m3-v0-nvfp4-2x-reap50.yaml": ":3: runtime: sglang: the catalogue serves "
    "with vLLM only",
    "experimental-recipes/minimax-m3/minimax-m3-v0-nvfp4-4x.yaml": ":3: runtime: sglang: the catalogue serves with "
    "vLLM only",
    "experimental-recipes/qwen3.5/vllm-mesh/qwen3.5-397b-a17b-int4-autoround-3x-vllm.yaml": ":6: min_nodes: 3 machines "
    "with tensor-parallel-size 1: a cluster here splits the model across the machines by tensor parallelism",
}
"""Every refusal among the registry's 37 recipes, whole; the other 31 read into drafts."""
NOT_HONOURED = re.compile(r"^(?P<file>\S+\.yaml):\d+: (?P<field>[\w.]+): not honoured: \S")


@pytest.fixture
def catalogue_copy(tmp_path: Path) -> Path:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


def new(root: Path, recipe_id: str, source: Path) -> int:
    return main(["--root", str(root), "new", recipe_id, "--from-sparkrun", str(source), "--snapshot", str(SNAPSHOT)])


def test_every_registry_recipe_reads_into_a_draft_or_is_refused_in_one_line(catalogue_copy, capsys):
    files = recipe_files(REGISTRY)
    assert len(files) == 37 and not any("benchmarking" in str(p) for p in files)
    assert new(catalogue_copy, "sr", REGISTRY) == 1
    captured = capsys.readouterr()
    errors = captured.err.strip().splitlines()
    assert sorted(errors) == sorted(f"error: {REGISTRY / path}{said}" for path, said in REFUSED.items())
    assert captured.out.strip().endswith(f"{REGISTRY}: 37 sparkrun recipe file(s): 31 draft(s) written, 6 refused")
    drafts = 0
    for path, draft in zip(files, draft_ids("sr", REGISTRY, files)):
        written = catalogue_copy / draft / "recipe.yaml"
        if str(path.relative_to(REGISTRY)) in REFUSED:
            assert not written.parent.exists()
            continue
        recipe = parse_recipe(written)
        theirs = yaml.safe_load(path.read_text())
        assert recipe.publish is False and recipe.summary.startswith("TODO") and recipe.model == theirs["model"]
        assert recipe.serving.image == theirs["container"]
        assert written.read_text().startswith("# yaml-language-server: $schema=../../schemas/recipe.schema.json\n")
        drafts += 1
    assert drafts == 31
    lines = [line for line in captured.out.splitlines() if ": not honoured: " in line]
    assert lines and all(NOT_HONOURED.match(line) for line in lines)
    mods = {m["file"] for line in lines if (m := NOT_HONOURED.match(line)) and m["field"] == "mods"}
    with_mods = {str(p) for p in files if "\nmods:" in p.read_text() and str(p.relative_to(REGISTRY)) not in REFUSED}
    assert mods == with_mods


def test_a_registry_recipe_gives_the_launch_its_command_renders(catalogue_copy, capsys):
    source = REGISTRY / "experimental-recipes" / "eugr-vllm" / "openai-gpt-oss-120b-vllm.yaml"
    assert new(catalogue_copy, "gptoss", source) == 0
    recipe = parse_recipe(catalogue_copy / "gptoss" / "recipe.yaml")
    assert recipe.serving.env == {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8": "1"}
    assert recipe.serving.flags["gpu-memory-utilization"] == 0.70
    assert recipe.serving.flags["tensor-parallel-size"] == 1 and recipe.topology.kind == "solo"
    assert recipe.serving.image_flags == dict.fromkeys(["mxfp4-backend", "mxfp4-layers"], recipe.serving.image)
    assert "the sparkrun recipe" in (catalogue_copy / "gptoss" / "recipe.yaml").read_text().splitlines()[1]


def test_a_cluster_recipe_becomes_a_cluster_draft(catalogue_copy):
    source = REGISTRY / "official-recipes" / "minimax-m2.7" / "minimax-m2.7-nvfp4-vllm.yaml"
    assert new(catalogue_copy, "m27", source) == 0
    recipe = parse_recipe(catalogue_copy / "m27" / "recipe.yaml")
    assert recipe.topology.kind == "cluster" and recipe.topology.nodes == 2 and recipe.hardware.nodes == 2


def test_the_legacy_v1_format_reads(catalogue_copy, capsys):
    assert new(catalogue_copy, "v1", DATA / "eugr-v1") == 0
    out = capsys.readouterr().out
    glm = parse_recipe(catalogue_copy / "v1-glm-4-7-flash-awq" / "recipe.yaml")
    assert glm.serving.flags["served-model-name"] == "glm-4.7-flash" and glm.topology.kind == "solo"
    minimax = parse_recipe(catalogue_copy / "v1-minimax-m2-awq" / "recipe.yaml")  # cluster_only: true
    assert minimax.topology.kind == "cluster" and minimax.topology.tensor_parallel_size == 2
    v1 = DATA / "eugr-v1" / "glm-4.7-flash-awq.yaml"
    assert f"{v1}:28: build_args: not honoured: v1: arguments of the eugr image build" in out
    assert f"{v1}:33: mods: not honoured:" in out
    assert f"note: {v1}: sparkrun recipe v1 read" in out


def test_the_benchmark_block_becomes_the_sweep_and_secrets_stay_out(catalogue_copy, capsys):
    source = DATA / "constructed" / "arena-benchmark.yaml"
    assert new(catalogue_copy, "arena", source) == 0
    out = capsys.readouterr().out
    text = (catalogue_copy / "arena" / "recipe.yaml").read_text()
    recipe = parse_recipe(catalogue_copy / "arena" / "recipe.yaml")
    assert (recipe.sweep.concurrency, recipe.sweep.input_len, recipe.sweep.output_len) == ([1, 2, 5, 10], 2048, 128)
    for field in ("benchmark.args.depth", "benchmark.args.prefix_caching", "benchmark.args.runs", "benchmark.schedule"):
        assert f"{source}:36: {field}: not honoured: " in out
    assert recipe.serving.env_from_host == ["HF_TOKEN", "VLLM_API_KEY"]
    assert "hf_abc" not in text and "sk-live" not in text and "hf_abc" not in out and "sk-live" not in out
    assert recipe.serving.flags["revision"] == "0123456789abcdef0123456789abcdef01234567"
    assert recipe.serving.flags["compilation-config"] == {"cudagraph_capture_sizes": [1, 2, 4]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("recipe_version: '2'\nmodel: a/b\nruntime: sglang\ncommand: sglang serve\n", ":3: runtime: sglang"),
        ("recipe_version: '2'\nmodel: a/b\nruntime: vllm\n", ":1: command: none: sparkrun's runtime would build"),
        ("include: '@official/x'\nmodel: a/b\ncommand: vllm serve a/b\n", ":1: include: builds on another recipe"),
        ("recipe_version: '3'\nmodel: a/b\ncommand: vllm serve a/b\n", ":1: recipe_version: '3': sparkrun 0.4.2"),
        ("model: a/b\nmin_nodes: 0\ncommand: vllm serve a/b\n", ":2: min_nodes: Input should be greater than"),
        ("- a\n", ": not a sparkrun recipe: the file is not a YAML mapping"),
        ("model: a/b\ncommand: |\n  docker run img vllm serve a/b\n", ":2: command: runs `docker run` itself"),
    ],
)
def test_a_file_that_cannot_be_a_draft_is_one_line_naming_the_field(text, expected, catalogue_copy, tmp_path, capsys):
    source = tmp_path / "r.yaml"
    source.write_text(text)
    assert new(catalogue_copy, "bad", source) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {source}{expected}"), err
    assert not (catalogue_copy / "bad").exists()


def test_a_field_without_a_value_is_refused(catalogue_copy, capsys):
    source = DATA / "constructed" / "no-value.yaml"
    assert new(catalogue_copy, "nv", source) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: {source}:8: command: {{max_model_len}} has no value in defaults (sparkrun would pass it as written)"
    )


def test_a_folder_without_recipes_and_two_sources_at_once_are_refused(catalogue_copy, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert new(catalogue_copy, "x", empty) == 1
    assert capsys.readouterr().err.strip() == f"error: {empty}: holds no sparkrun recipe file (*.yaml, *.yml)"
    with pytest.raises(SystemExit):
        main(["new", "x", "--from-sparkrun", "a.yaml", "--from-command", "b.sh"])
    capsys.readouterr()
    assert main(["--root", str(catalogue_copy), "new", "x", "--from-sparkrun", "a.yaml", "--image", "i"]) == 1
    assert capsys.readouterr().err.strip() == "error: a.yaml: --image: a sparkrun recipe names its model and image"


def registry_checkout(tmp_path: Path, recipes: str) -> Path:
    """A registry-layout folder whose `.sparkrun/registry.yaml` names `recipes`, beside a folder outside it that
    holds a recipe file (what an escape would read)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(recipe_files(REGISTRY)[0], outside / "secret.yaml")
    checkout = tmp_path / "checkout"
    (checkout / ".sparkrun").mkdir(parents=True)
    (checkout / "official-recipes").mkdir()
    shutil.copy(recipe_files(REGISTRY)[0], checkout / "official-recipes" / "a.yaml")
    (checkout / ".sparkrun" / "registry.yaml").write_text(f"registries:\n  - name: x\n    recipes: {recipes!r}\n")
    return checkout


@pytest.mark.parametrize(
    ("recipes", "said"),
    [
        ("../outside", "not a folder inside the checkout"),
        (None, "not a folder inside the checkout"),  # the outside folder's absolute path
        ("linked", "leads out of the checkout through a symlink"),
        ("official-recipes/../../outside", "not a folder inside the checkout"),
    ],
)
def test_a_registry_folder_outside_the_checkout_is_one_line(recipes, said, tmp_path, capsys):
    checkout = registry_checkout(tmp_path, recipes or str(tmp_path / "outside"))
    (checkout / "linked").symlink_to(tmp_path / "outside")
    root = tmp_path / "recipes"
    root.mkdir()
    assert new(root, "x", checkout) == 1
    err = capsys.readouterr().err.strip()
    registry = checkout / ".sparkrun" / "registry.yaml"
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {registry}: registries: ") and said in err, err
    assert list(root.iterdir()) == []


def test_a_symlinked_recipe_file_or_registry_file_is_one_line(tmp_path, capsys):
    checkout = registry_checkout(tmp_path, "official-recipes")
    link = checkout / "official-recipes" / "b.yaml"
    link.symlink_to(tmp_path / "outside" / "secret.yaml")
    root = tmp_path / "recipes"
    root.mkdir()
    assert new(root, "x", checkout) == 1
    assert capsys.readouterr().err.strip() == f"error: {link}: a symlink: refused (it may lead out of the checkout)"
    link.unlink()
    registry = checkout / ".sparkrun" / "registry.yaml"
    registry.rename(tmp_path / "registry.yaml")
    registry.symlink_to(tmp_path / "registry.yaml")
    assert new(root, "x", checkout) == 1
    assert capsys.readouterr().err.strip() == f"error: {registry}: a symlink: refused (it may lead out of the checkout)"
    assert list(root.iterdir()) == []
