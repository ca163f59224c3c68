"""`catalogue new --from-command` with a docker-compose file: a service gives the same recipe as the `docker run`
that compose starts for it, and every compose key it cannot honour is one line naming the file and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.models.loading import parse_recipe

REPO = Path(__file__).resolve().parents[1]
COMMANDS = REPO / "tests" / "data" / "commands"
SNAPSHOT = REPO / "snapshots" / "vllm-0.32.0.json"
STRAVICA = COMMANDS / "stravica-nvidia-spark-compose-2025-11-09.yml"


@pytest.fixture
def catalogue_copy(tmp_path: Path) -> Path:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", root)
    return root


def new(root: Path, recipe_id: str, pasted: Path, *extra: str) -> int:
    return main(
        ["--root", str(root), "new", recipe_id, "--from-command", str(pasted), "--snapshot", str(SNAPSHOT), *extra]
    )


def serving(root: Path, recipe_id: str) -> dict:
    return parse_recipe(root / recipe_id / "recipe.yaml").serving.model_dump(
        include={"image", "env", "env_from_host", "flags", "image_flags", "container", "model_path", "consent"}
    )


# The `docker run` that docker compose starts for Stravica/nvidia-spark's vllm-qwen3-30b-a3b-fp8 service.
STRAVICA_RUN = """\
docker run --name vllm-qwen3-30b-a3b-fp8 --restart unless-stopped -p 8000:8000 -e HF_TOKEN --ipc host \\
  --ulimit memlock=-1 --ulimit stack=67108864 -v /opt/hf:/root/.cache/huggingface --gpus all \\
  nvcr.io/nvidia/vllm:25.09-py3 vllm serve Qwen/Qwen3-30B-A3B-Instruct-2507-FP8 \\
  --download-dir /root/.cache/huggingface --max-model-len 32768 --gpu-memory-utilization 0.85 \\
  --max-num-batched-tokens 16384 --max-num-seqs 64 --enable-prefix-caching --trust-remote-code
"""


def test_a_compose_service_gives_the_recipe_of_its_docker_run(catalogue_copy, tmp_path, capsys):
    assert new(catalogue_copy, "from-compose", STRAVICA, "--service", "vllm-qwen3-30b-a3b-fp8") == 0
    out = capsys.readouterr().out
    pasted = tmp_path / "run.sh"
    pasted.write_text(STRAVICA_RUN)
    assert new(catalogue_copy, "from-run", pasted) == 0
    ours, theirs = serving(catalogue_copy, "from-compose"), serving(catalogue_copy, "from-run")
    assert ours == theirs
    assert ours["env_from_host"] == ["HF_TOKEN"] and ours["env"] == {}
    assert ours["flags"]["gpu-memory-utilization"] == 0.85 and ours["flags"]["trust-remote-code"] is True
    assert "--gpus" in ours["container"]["options"] and ours["container"]["name"] == "vllm-qwen3-30b-a3b-fp8"
    # HUGGING_FACE_HUB_TOKEN: "${HF_TOKEN}" copies the host's HF_TOKEN under another name: said, and passed once.
    assert "environment.HUGGING_FACE_HUB_TOKEN copies the host's HF_TOKEN" in out
    assert out.count("-e HF_TOKEN: passed from the host by name") == 1


def test_the_only_service_needs_no_name_and_long_syntax_is_read(catalogue_copy, tmp_path):
    pasted = tmp_path / "compose.yaml"
    pasted.write_text(
        """\
services:
  llm:
    image: vllm/vllm-openai:v0.11.0
    entrypoint: ["vllm", "serve"]
    command: "Qwen/Qwen3-8B --max-model-len 8192 --served-model-name 'qwen 8b'"
    environment:
      - VLLM_LOGGING_LEVEL=DEBUG
      - PRICE=$$5
      - HF_TOKEN
    ports:
      - target: 8000
        published: 8001
    volumes:
      - type: bind
        source: ~/.cache/huggingface
        target: /root/.cache/huggingface
        read_only: true
    ulimits:
      memlock: {soft: -1, hard: -1}
    shm_size: 16gb
    healthcheck:
      test: ["CMD", "curl", "-f", "http://localhost:8000/health"]
"""
    )
    assert new(catalogue_copy, "pasted", pasted) == 0
    ours = serving(catalogue_copy, "pasted")
    assert ours["flags"] == {"max-model-len": 8192, "served-model-name": "qwen 8b"}
    assert ours["env"] == {"VLLM_LOGGING_LEVEL": "DEBUG", "PRICE": "$5"} and ours["env_from_host"] == ["HF_TOKEN"]
    assert ours["container"]["options"] == [
        "-p",
        "8001:8000",
        "-v",
        "~/.cache/huggingface:/root/.cache/huggingface:ro",
        "--ulimit",
        "memlock=-1:-1",
        "--shm-size",
        "16gb",
    ]


BAD = {
    "several-services": (
        None,
        "services: 4 services (vllm-qwen3-32b-fp8, vllm-qwen3-30b-a3b-fp8, vllm-llama33-70b-fp8, "
        "ollama-qwen3-32b-fp8): pass --service NAME",
    ),
    "no-such-service": ("vllm-gpt", "services: no service 'vllm-gpt' (there are: vllm-qwen3-32b-fp8, "),
    "not-vllm": ("ollama-qwen3-32b-fp8", ":137: the container runs 'ollama serve', not `vllm serve`"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_the_wrong_service_of_a_real_file_is_one_line(name, catalogue_copy, capsys):
    service, expected = BAD[name]
    extra = ["--service", service] if service else []
    assert new(catalogue_copy, "pasted", STRAVICA, *extra) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {STRAVICA}"), err
    assert expected in err, err
    assert not (catalogue_copy / "pasted").exists()


def test_a_service_started_by_a_wrapper_script_is_refused_with_the_script_named(catalogue_copy, capsys):
    # Stravica/nvidia-spark's Qwen3.5-35B-A3B-FP8 service (2026-02): the entrypoint is a script from the repository
    # that upgrades transformers and patches vLLM before `exec vllm serve "$@"`: the paste cannot show that.
    compose = COMMANDS / "stravica-nvidia-spark-compose-2026-08-17.yml"
    assert new(catalogue_copy, "pasted", compose, "--service", "vllm-qwen35-35b-a3b-fp8") == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: {compose}:104: the container runs the script /scripts/start-qwen35.sh, which the paste does not "
        "show: paste the `vllm serve` command it runs (and say in the recipe what else the script does)"
    )
    assert not (catalogue_copy / "pasted").exists()


def test_a_variable_with_a_default_is_read_as_its_default(catalogue_copy, tmp_path, capsys):
    pasted = tmp_path / "compose.yaml"
    pasted.write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    volumes: ['${MODELS_DIR:-/opt/models}/q:/models/q', '${CACHE-/srv/cache}:/root/.cache/huggingface']\n"
        "    command: [/models/q, --max-model-len, '8192']\n"
    )
    assert new(catalogue_copy, "pasted", pasted, "--model", "org/q") == 0
    out = capsys.readouterr().out
    ours = serving(catalogue_copy, "pasted")
    assert ours["container"]["options"] == [
        "-v",
        "/opt/models/q:/models/q",
        "-v",
        "/srv/cache:/root/.cache/huggingface",
    ]
    assert "services.vllm.volumes.0: '${MODELS_DIR:-/opt/models}/q:/models/q' read with compose's defaults" in out


def test_several_served_model_names_read_from_a_compose_script(catalogue_copy, capsys):
    # AEON-7/Qwen3.6-NVFP4-DFlash's examples/docker-compose.yml (2026-04-20): its volumes use
    # ${QWEN36_MODELS_DIR:-/opt/qwen36} (read as the default), and its bash -c script serves the model under three
    # names (vLLM's --served-model-name takes several): the recipe keeps all three, clients send the first.
    compose = COMMANDS / "aeon7-qwen36-dflash-compose-2026-04-20.yml"
    assert new(catalogue_copy, "pasted", compose, "--model", "AEON-7/Qwen3.6-35B-A3B-heretic-NVFP4") == 0
    recipe = parse_recipe(catalogue_copy / "pasted" / "recipe.yaml")
    assert recipe.serving.flags["served-model-name"] == ["qwen36-35b-heretic", "qwen36-fast", "qwen36-deep"]
    assert recipe.served_name == "qwen36-35b-heretic"
    assert recipe.serving.model_path == "/models/qwen36"


SERVICE = """\
services:
  vllm:
    image: nvcr.io/nvidia/vllm:25.09-py3
    command: [vllm, serve, Qwen/Qwen3-8B-FP8, --max-model-len, "32768"]
"""
BAD_KEYS = {
    "env-file": ("    env_file: .env\n", ":5: services.vllm.env_file: a file on the author's machine"),
    "interpolated-volume": (
        "    volumes: ['${HF_HOME}:/root/.cache/huggingface']\n",
        ":5: services.vllm.volumes.0: '${HF_HOME}:/root/.cache/huggingface': compose fills this from the host's",
    ),
    "interpolated-in-value": (
        "    environment: {HF_HOME: '${HOME}/hf'}\n",
        ":5: services.vllm.environment.HF_HOME: '${HOME}/hf': compose fills this",
    ),
    "unknown-key": ("    scale: 2\n", ":5: services.vllm.scale: not a compose key `catalogue new` reads"),
    "deploy-limits": (
        "    deploy: {resources: {limits: {memory: 100g}}}\n",
        ":5: services.vllm.deploy: only deploy.resources.reservations.devices (GPUs) is read",
    ),
    "device-not-gpu": (
        "    deploy: {resources: {reservations: {devices: [{driver: nvidia, capabilities: [utility]}]}}}\n",
        ":5: services.vllm.deploy.resources.reservations.devices.0: only a device with capabilities [gpu] is read",
    ),
    "bad-ulimit": ("    ulimits: {memlock: {soft: -1}}\n", ":5: services.vllm.ulimits.memlock: expected soft and hard"),
    "two-commands": (
        "    entrypoint: 'pip install x && vllm serve m/x'\n",
        ":5: services.vllm.entrypoint: several commands in one string",
    ),
    "env-not-a-name": ("    environment: ['1BAD=x']\n", ":5: services.vllm.environment: '1BAD' is not a variable name"),
}


@pytest.mark.parametrize("name", list(BAD_KEYS))
def test_a_compose_key_it_cannot_honour_is_one_line_naming_the_field(name, catalogue_copy, tmp_path, capsys):
    extra, expected = BAD_KEYS[name]
    pasted = tmp_path / "docker-compose.yml"
    pasted.write_text(SERVICE + extra)
    assert new(catalogue_copy, "pasted", pasted) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {pasted}{expected}"), err
    assert not (catalogue_copy / "pasted").exists()


WHOLE_FILE = {
    "build-only": ("services:\n  vllm:\n    build: .\n", ":3: services.vllm.build: the service builds its own image"),
    "no-image": (
        "services:\n  vllm:\n    command: [vllm, serve, m/x]\n",
        ":2: services.vllm.image: the service names no",
    ),
    "empty-services": ("services: {}\n", ": services: a compose file needs a services: mapping"),
    "service-not-mapping": ("services:\n  vllm: nvcr.io/nvidia/vllm\n", ":2: services.vllm: expected a mapping"),
    "no-command": (
        "services:\n  vllm:\n    image: nvcr.io/nvidia/vllm:25.09-py3\n",
        ":2: services.vllm.command: the service runs no `vllm serve`",
    ),
}


@pytest.mark.parametrize("name", list(WHOLE_FILE))
def test_a_compose_file_without_a_runnable_service_is_one_line(name, catalogue_copy, tmp_path, capsys):
    text, expected = WHOLE_FILE[name]
    pasted = tmp_path / "compose.yaml"
    pasted.write_text(text)
    assert new(catalogue_copy, "pasted", pasted, "--service", "vllm") == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {pasted}{expected}"), err
    assert not (catalogue_copy / "pasted").exists()


PUBLISHED = {
    "qwen3-30b-a3b-fp8": ("stravica-nvidia-spark-compose-2025-11-09.yml", "vllm-qwen3-30b-a3b-fp8"),
    "qwen3-32b-fp8": ("stravica-nvidia-spark-compose-2025-11-09.yml", "vllm-qwen3-32b-fp8"),
    "llama33-70b-fp8": ("stravica-nvidia-spark-compose-2025-11-09.yml", "vllm-llama33-70b-fp8"),
    "llama31-8b-fp8": ("stravica-nvidia-spark-compose-2025-11-11.yml", "vllm-llama31-8b-fp8"),
    "qwen3-8b-fp8": ("stravica-nvidia-spark-compose-2025-11-11.yml", "vllm-qwen3-8b-fp8"),
    "mistral-nemo-12b-fp8": ("stravica-nvidia-spark-compose-2025-11-11.yml", "vllm-mistral-nemo-12b-fp8"),
    "qwen38-27b-nvfp4-mtp": ("stravica-nvidia-spark-compose-2026-08-17.yml", "vllm-qwen38-27b-nvfp4"),
}


@pytest.mark.parametrize("recipe_id", list(PUBLISHED))
def test_the_published_recipes_are_the_source_files_service_as_pasted(recipe_id, catalogue_copy):
    """Each recipe from Stravica/nvidia-spark serves exactly what its compose service (as published) starts."""
    compose, service = PUBLISHED[recipe_id]
    assert new(catalogue_copy, "pasted", COMMANDS / compose, "--service", service) == 0
    ours, theirs = serving(catalogue_copy, "pasted"), serving(catalogue_copy, recipe_id)
    for part in ("image", "env", "env_from_host", "flags", "container", "model_path"):
        assert ours[part] == theirs[part], part
    # The source's /opt/hf cache mount folds into the profile's HF cache (the owner's folder): no consent asked for it.
    # What the launch does need (the owner's HF_TOKEN beside remote code) the draft asks for as the recipe declares
    # it, with a reason left for its author to write.
    ours_consent, theirs_consent = ours.get("consent", []), theirs.get("consent", [])
    assert [c["option"] for c in ours_consent] == [c["option"] for c in theirs_consent], ours_consent
    assert all(c["reason"].startswith("TODO: ") for c in ours_consent), ours_consent
    assert not any(c["option"].startswith(("--volume", "--mount", "-v")) for c in theirs_consent), theirs_consent
