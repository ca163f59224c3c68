"""`catalogue new --from-command`: the seeds' launch commands, the round trip through the page's command, and
a corpus of pastes it must refuse."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.flags.select import upstream_checker
from catalogue.models.launch import flags_argv, shell_command
from catalogue.models.loading import load_catalogue, load_entry, parse_recipe
from catalogue.models.recipe import ClusterTopology, Recipe
from catalogue.models.topology import MASTER_PORT, launch_argv

REPO = Path(__file__).resolve().parents[1]
COMMANDS = REPO / "tests" / "data" / "commands"
SNAPSHOT = REPO / "snapshots" / "vllm-0.32.0.json"


@pytest.fixture
def catalogue_copy(tmp_path: Path) -> Path:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


def new(root: Path, recipe_id: str, command: Path, *extra: str) -> int:
    return main(["--root", str(root), "new", recipe_id, "--from-command", str(command), *extra])


def serving(root: Path, recipe_id: str) -> dict:
    return parse_recipe(root / recipe_id / "recipe.yaml").serving.model_dump(
        include={"image", "env", "flags", "image_flags", "container", "model_path"}
    )


@pytest.mark.parametrize("checker", ["installed or newest", "snapshot"])
def test_seed_000_yields_the_flags_of_the_catalogue_recipe(catalogue_copy, checker):
    extra = ["--snapshot", str(SNAPSHOT)] if checker == "snapshot" else []
    assert new(catalogue_copy, "pasted", COMMANDS / "seed-000.sh", *extra) == 0
    ours, theirs = serving(catalogue_copy, "pasted"), serving(catalogue_copy, "gptoss-120b")
    # The seed's "Full Launch Command" omits --max-num-seqs 256, which its Key Flags section sets and the
    # catalogue's recipe keeps: the one difference.
    assert {k: v for k, v in theirs["flags"].items() if k != "max-num-seqs"} == ours["flags"]
    assert theirs["flags"]["max-num-seqs"] == 256
    assert list(ours["flags"]) == [k for k in theirs["flags"] if k != "max-num-seqs"]
    for part in ("image", "env", "image_flags", "container"):
        assert ours[part] == theirs[part], part
    assert main(["--root", str(catalogue_copy), "validate", "pasted", *extra]) == 0


def test_seed_002_reads_the_shell_of_an_interactive_container(catalogue_copy, capsys):
    assert new(catalogue_copy, "pasted", COMMANDS / "seed-002.sh") == 0
    out = capsys.readouterr().out
    ours, theirs = serving(catalogue_copy, "pasted"), serving(catalogue_copy, "gptoss-120b-ngc-2509")
    assert ours["flags"] == theirs["flags"]
    assert ours["image_flags"] == theirs["image_flags"] == {"swap-space": "nvcr.io/nvidia/vllm:25.09-py3"}
    assert ours["env"] == {"TIKTOKEN_ENCODINGS_BASE": "/workspace/tiktoken_encodings"}
    assert "vLLM uses the last (0.75)" in out and "'~/.cache/huggingface:/root/.cache/huggingface' is expanded" in out


def test_seed_004_bare_serve_in_a_named_image(catalogue_copy, capsys):
    assert new(catalogue_copy, "pasted", COMMANDS / "seed-004.sh") == 1
    assert "--mxfp4-backend is not a flag of vLLM" in capsys.readouterr().err
    assert new(catalogue_copy, "pasted", COMMANDS / "seed-004.sh", "--image", "vllm-node-mxfp4") == 0
    ours, theirs = serving(catalogue_copy, "pasted"), serving(catalogue_copy, "gptoss-120b-community-131k")
    assert ours["flags"] == theirs["flags"] and ours["image_flags"] == theirs["image_flags"]


def test_the_vllm_openai_image_takes_its_serve_arguments_after_the_image(catalogue_copy, capsys):
    # adadrag/qwen3.5-dgx-spark (2026-02): the official image's entrypoint is `vllm serve`, so the published
    # command puts the model and flags straight after the image.
    assert new(catalogue_copy, "pasted", COMMANDS / "qwen35-35b-a3b-bf16-adadrag.sh") == 0
    assert "runs `vllm serve` as its entrypoint" in capsys.readouterr().out
    ours = serving(catalogue_copy, "pasted")
    assert ours["image"] == "vllm/vllm-openai:cu130-nightly" and ours["model_path"] is None
    assert ours["flags"]["max-model-len"] == 262144 and ours["flags"]["enable-prefix-caching"] is True
    other = catalogue_copy.parent / "other.sh"
    other.write_text("docker run --gpus all nvcr.io/nvidia/vllm:25.09-py3 Qwen/Qwen3.5-35B-A3B --port 8000\n")
    assert new(catalogue_copy, "other", other) == 1
    assert "not `vllm serve`" in capsys.readouterr().err


def test_a_mkdir_before_the_launch_is_left_out_with_a_note(catalogue_copy, capsys):
    # ZengboJamesWang/dgx-spark-vllm-gemma4-26b-uncensored's README block starts with `mkdir -p` of the HF cache.
    command = COMMANDS / "gemma4-26b-a4b-nvfp4-aeon7.sh"
    # Its `-v $(pwd)/patches/...` is shell syntax the runner cannot run: the draft is written, the line says why.
    assert new(catalogue_copy, "pasted", command, "--model", "AEON-7/Gemma-4-26B-A4B-it-Uncensored-NVFP4") == 1
    printed = capsys.readouterr()
    assert "`mkdir -p ~/.cache/huggingface` prepares a host folder: left out" in printed.out
    assert (
        "never: --volume $(pwd)/patches/gemma4_patched.py: shell syntax in the host path" in printed.out + printed.err
    )
    ours = serving(catalogue_copy, "pasted")
    assert ours["model_path"] == "/root/.cache/huggingface/gemma-4-26B-it-uncensored-nvfp4"
    assert ours["flags"]["kv-cache-dtype"] == "fp8" and "mkdir" not in str(ours["container"])


def test_every_recipe_and_example_round_trips_through_its_rendered_command(catalogue_copy, tmp_path):
    examples = tmp_path / "examples"
    shutil.copytree(REPO / "examples", examples)
    checker = upstream_checker()
    roots = ["--root", str(catalogue_copy), "--root", str(examples)]
    for entry in load_catalogue([catalogue_copy, examples]):
        recipe = entry.recipe
        if recipe.serving.simulator is not None:  # `python -m simulator`: the test instrument, never a pasted launch
            continue
        pasted = tmp_path / f"{entry.id}.sh"
        pasted.write_text(shell_command(launch_argv(recipe)) + "\n")
        extra = [] if recipe.model_arg == recipe.model else ["--model", recipe.model]
        assert main([*roots, "new", f"again-{entry.id}", "--from-command", str(pasted), *extra]) == 0, entry.id
        again = load_entry(catalogue_copy / f"again-{entry.id}").recipe
        # A cluster's page command is its head's: the per-node flags are left out, the shared --master-port kept.
        expected = dict(recipe.serving.flags)
        if isinstance(recipe.topology, ClusterTopology) and "distributed-executor-backend" not in expected:
            expected.setdefault("master-port", MASTER_PORT)
        assert again.serving.flags == expected, entry.id
        assert again.serving.env == recipe.serving.env and again.serving.image == recipe.serving.image
        assert launch_argv(again) == launch_argv(recipe), entry.id
        upstream = {k: v for k, v in recipe.serving.flags.items() if k not in recipe.serving.image_flags}
        first, _ = checker.parse([recipe.model_arg, *flags_argv(upstream)])
        # A draft cannot know which flags the image provides: the recipe's own declaration is the one to leave out.
        upstream_again = {k: v for k, v in again.serving.flags.items() if k not in recipe.serving.image_flags}
        second, _ = checker.parse([again.model_arg, *flags_argv(upstream_again)])
        assert first is not None and vars(first) == vars(second), entry.id


def test_the_new_recipe_is_a_draft_with_todo_markers(catalogue_copy, capsys):
    assert new(catalogue_copy, "pasted", COMMANDS / "seed-000.sh") == 0
    path = catalogue_copy / "pasted" / "recipe.yaml"
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=../../schemas/recipe.schema.json\n")
    data = yaml.safe_load(text)
    assert data["publish"] is False and data["summary"].startswith("TODO")
    path.write_text(text.replace("publish: false", "publish: true"))
    capsys.readouterr()
    assert main(["--root", str(catalogue_copy), "validate", "pasted", "--no-flags"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: {path}:4: summary still says TODO: fill it in, or keep `publish: false`"
    )


BAD = {
    "no-serve": ("docker run --gpus all nvcr.io/nvidia/vllm:25.09-py3\n", "<file>: no `vllm serve` in the command"),
    "unbalanced": (
        'vllm serve m/x \\\n  --compilation-config \'{"a": 1}\n',
        "<file>:2: unbalanced quotes: a ' is never closed",
    ),
    "container-runs-else": (
        "docker run img python3 app.py\n",
        "<file>:1: the container runs 'python3 app.py', not `vllm serve`",
    ),
    "docker-option": ("docker run --gpu all img vllm serve m/x\n", "<file>:1: `docker run` has no option --gpu"),
    "unknown-flag": ("vllm serve m/x --max-num-sequences 4\n", "<file>:1: --max-num-sequences is not a flag of vLLM"),
    "several-values": (
        "vllm serve m/x --max-model-len 4 8\n",
        "<file>:1: unexpected word '8' after the flags of `vllm serve`",
    ),
    "path-model": (
        "vllm serve /models/x --port 8000\n",
        "<file>:1: the model '/models/x' is a path: pass --model ORG/NAME",
    ),
    "other-command": ("wget https://x/y\nvllm serve m/x\n", "<file>:1: `wget https://x/y` is not part of a launch"),
    "bad-json": (
        "vllm serve m/x --compilation-config '{cudagraph'\n",
        "<file>:1: --compilation-config: not valid JSON",
    ),
    "deep-json": (  # Python's parser recurses: 1,100 brackets were a RecursionError traceback
        "vllm serve m/x --compilation-config '" + "[" * 1100 + "]" * 1100 + "'\n",
        "<file>:1: --compilation-config: not valid JSON (nested more than 64 deep: refused unparsed)",
    ),
    "wrapper-script": (
        "docker run --gpus all vllm/vllm-openai:v0.11.0 /bin/bash /scripts/start.sh m/x --port 8000\n",
        "<file>:1: the container runs the script /scripts/start.sh, which the paste does not show",
    ),
    "switch-value": ("vllm serve m/x --enforce-eager=1\n", "<file>:1: --enforce-eager is a switch and takes no value"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_paste_is_one_line_and_writes_nothing(name, catalogue_copy, tmp_path, capsys):
    text, expected = BAD[name]
    pasted = tmp_path / "pasted.sh"
    pasted.write_text(text)
    assert new(catalogue_copy, "pasted", pasted, "--snapshot", str(SNAPSHOT)) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: " + expected.replace("<file>", str(pasted))), err
    assert not (catalogue_copy / "pasted").exists()


def test_several_served_model_names_read_and_clients_send_the_first(catalogue_copy, tmp_path):
    # vLLM's --served-model-name takes several names (nargs +): the server answers to each and reports the first
    # (vllm.config.model.get_served_model_name), so the benchmark client and the router send the first.
    pasted = tmp_path / "pasted.sh"
    pasted.write_text("vllm serve m/x --served-model-name a b --cudagraph-capture-sizes 1 2 4 --max-model-len 4096\n")
    assert new(catalogue_copy, "pasted", pasted, "--snapshot", str(SNAPSHOT)) == 0
    recipe = parse_recipe(catalogue_copy / "pasted" / "recipe.yaml")
    assert recipe.serving.flags["served-model-name"] == ["a", "b"]
    assert recipe.serving.flags["cudagraph-capture-sizes"] == [1, 2, 4]
    assert recipe.served_name == "a"
    assert flags_argv(recipe.serving.flags) == [
        *("--served-model-name", "a", "b", "--cudagraph-capture-sizes", "1", "2", "4", "--max-model-len", "4096")
    ]
    checker = upstream_checker(SNAPSHOT)
    namespace, message = checker.parse(["m/x", *flags_argv(recipe.serving.flags)])
    assert message is None and namespace.served_model_name == ["a", "b"]
    assert main(["--root", str(catalogue_copy), "validate", "pasted", "--snapshot", str(SNAPSHOT)]) == 0


def test_a_list_holds_words_not_structures(catalogue_copy):
    data = yaml.safe_load((catalogue_copy / "gptoss-120b" / "recipe.yaml").read_text())
    data["serving"]["flags"]["served-model-name"] = [{"a": 1}]
    with pytest.raises(ValueError, match="a list holds the option's values"):
        Recipe.model_validate(data)


def test_an_existing_recipe_is_never_overwritten(catalogue_copy, capsys):
    before = (catalogue_copy / "gptoss-120b" / "recipe.yaml").read_bytes()
    assert new(catalogue_copy, "gptoss-120b", COMMANDS / "seed-000.sh") == 1
    assert "exists already" in capsys.readouterr().err
    assert (catalogue_copy / "gptoss-120b" / "recipe.yaml").read_bytes() == before


def test_the_command_can_come_on_standard_input(catalogue_copy, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO((COMMANDS / "seed-004.sh").read_text()))
    assert new(catalogue_copy, "pasted", Path("-"), "--image", "vllm-node-mxfp4", "--snapshot", str(SNAPSHOT)) == 0
    assert serving(catalogue_copy, "pasted")["flags"]["max-model-len"] == 131072


ISSUE_18 = """\
docker run -d --privileged --pid host -v /:/host -v /var/run/docker.sock:/var/run/docker.sock \\
  -e HF_TOKEN=hf_SeCrEtToKeN1234567890 -e LD_PRELOAD=/host/tmp/evil.so --gpus all --ipc host \\
  vllm/vllm-openai:latest vllm serve openai/gpt-oss-20b --trust-remote-code --port 8000
"""


def test_the_paste_of_issue_18_is_flagged_line_by_line_and_its_token_never_written(catalogue_copy, tmp_path, capsys):
    pasted = tmp_path / "launch.sh"
    pasted.write_text(ISSUE_18)
    assert new(catalogue_copy, "pasted", pasted, "--snapshot", str(SNAPSHOT)) == 1
    out = capsys.readouterr()
    path = catalogue_copy / "pasted" / "recipe.yaml"
    text = path.read_text()
    assert "SeCrEt" not in out.out + out.err and "SeCrEt" not in text
    data = yaml.safe_load(text)
    assert data["publish"] is False
    assert data["serving"]["env_from_host"] == ["HF_TOKEN"] and "HF_TOKEN" not in data["serving"]["env"]
    assert [c["option"] for c in data["serving"]["consent"]] == [
        "--privileged",
        "--pid host",
        "env_from_host HF_TOKEN to remote code openai/gpt-oss-20b",  # the repository's code would see the token
    ]
    assert all(c["reason"].startswith("TODO") for c in data["serving"]["consent"])
    errors = out.err.strip().splitlines()
    assert [line.split(": ", 3)[1:3] for line in errors] == [
        ["never", "--volume /"],
        ["never", "--volume /var/run/docker.sock"],
        ["never", "LD_PRELOAD"],
    ], errors
    assert all(line.startswith(f"{path}:") for line in errors)
    said = out.out.splitlines()
    assert any(
        line.startswith(f"{path}:") and ": never: HF_TOKEN: a secret in the command (hf_********)" in line
        for line in said
    ), said
    for name in ("--privileged", "--pid host"):
        assert any(f": consent: {name}: " in line for line in said), name
    for note in ("--trust-remote-code", "image vllm/vllm-openai:latest"):
        assert any(f": note: {note}: " in line for line in said), note
    # validate refuses the draft until the never items are gone, and publishing until the reasons are given
    capsys.readouterr()
    assert main(["--root", str(catalogue_copy), "validate", "pasted", "--no-flags"]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 3


def test_a_clean_paste_with_a_token_and_an_api_key_writes_references(catalogue_copy, tmp_path, capsys):
    pasted = tmp_path / "launch.sh"
    pasted.write_text(
        "docker run --gpus all -e HF_TOKEN -e OPENAI_API_KEY=sk-proj-0123456789abcdef vllm/vllm-openai:v0.11.0 "
        "vllm serve openai/gpt-oss-20b --api-key local-key-0123456789\n"
    )
    assert new(catalogue_copy, "pasted", pasted, "--snapshot", str(SNAPSHOT)) == 0
    out = capsys.readouterr()
    text = (catalogue_copy / "pasted" / "recipe.yaml").read_text()
    for secret in ("sk-proj-0123456789abcdef", "local-key-0123456789"):
        assert secret not in out.out + out.err + text
    serving = yaml.safe_load(text)["serving"]
    assert serving["env_from_host"] == ["OPENAI_API_KEY", "HF_TOKEN", "VLLM_API_KEY"]
    assert "api-key" not in serving["flags"] and serving["container"]["options"] == ["--gpus", "all"]


def test_an_error_of_vllms_own_check_is_one_line(catalogue_copy, tmp_path, capsys):
    """A forum post's launch names a chat template that exists only on its author's machine: vLLM's own
    cross-flag check raises VLLMValidationError, which is reported as one line, not a traceback."""
    pasted = tmp_path / "forum.sh"
    pasted.write_text("vllm serve /models/q --chat-template unsloth.jinja --max-model-len 4096\n")
    assert new(catalogue_copy, "forum", pasted, "--model", "org/q", "--image", "local/q") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "chat template string (unsloth.jinja) appears path-like, but doesn't exist" in err[0]
    assert "Traceback" not in "".join(err)


@pytest.mark.parametrize(
    "name", ["nvidia-playbook-vllm-qwen36-nvfp4", "nvidia-playbook-home-variable", "eugr-readme-single-node"]
)
def test_the_spark_launches_people_copy_paste_into_recipes_that_validate(name, tmp_path, capsys):
    """NVIDIA's DGX Spark vLLM playbook and eugr's README as published (tests/data/commands names the commit), and
    the playbook's line with the cache written as $HOME: drafts that validate, the HF cache folded into the
    profile's, the token taken by name."""
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    assert new(root, "pasted", COMMANDS / f"{name}.sh") == 0
    data = yaml.safe_load((root / "pasted" / "recipe.yaml").read_text())
    options = data["serving"]["container"]["options"]
    assert "~/.cache/huggingface:/root/.cache/huggingface" in options
    assert "$" not in " ".join(options) and "HF_TOKEN" not in data["serving"].get("env", {})
    if name.startswith("nvidia"):
        assert data["serving"]["env_from_host"] == ["HF_TOKEN"]
    capsys.readouterr()
    assert main(["--root", str(root), "validate"]) == 0
    out = capsys.readouterr().out
    assert "pasted/recipe.yaml:" in out and "note: --volume ~/.cache/huggingface: the platform profile mounts" in out
