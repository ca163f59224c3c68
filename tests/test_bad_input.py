"""The bad-input corpus: each case is one line naming the file and field, exit 1, nothing written."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main

RUN = "runs/20260506T000000Z.json"


def edit_yaml(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / "recipe.yaml"
        data = yaml.safe_load(path.read_text())
        change(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False))

    return apply


def edit_run(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / RUN
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    return apply


def replace_text(old: str, new: str, file: str = "recipe.yaml") -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / file
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))

    return apply


def set_in(path: str, value) -> Callable[[dict], None]:
    def change(data: dict) -> None:
        *parents, last = path.split(".")
        for part in parents:
            data = data[int(part)] if isinstance(data, list) else data[part]
        if isinstance(data, list):
            data[int(last)] = value
        else:
            data[last] = value

    return change


def delete(key: str) -> Callable[[dict], None]:
    return lambda data: data.pop(key)


def rename_run(folder: Path) -> None:
    (folder / RUN).rename(folder / "runs/20260507T000000Z.json")


CASES: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "yaml syntax error": (
        replace_text("status: production", "status: [production"),
        "recipe.yaml:",
        "YAML syntax error",
    ),
    "unknown top-level key": (edit_yaml(set_in("colour", "blue")), "recipe.yaml:", "colour: unknown field"),
    "unknown nested key": (
        edit_yaml(set_in("hardware.colour", "blue")),
        "recipe.yaml:",
        "hardware.colour: unknown field",
    ),
    "wrong type": (edit_yaml(set_in("hardware.memory_gb", "lots")), "recipe.yaml:", "hardware.memory_gb:"),
    "missing required field": (edit_yaml(delete("title")), "recipe.yaml:", "title: required field is missing"),
    "status not allowed": (edit_yaml(set_in("status", "great")), "recipe.yaml:", "status:"),
    "malformed model id": (edit_yaml(set_in("model", "gpt oss")), "recipe.yaml:", "model:"),
    "flag with dashes": (
        edit_yaml(lambda d: d["serving"]["flags"].update({"--max-num-seqs": 3})),
        "recipe.yaml:",
        "serving:",
    ),
    "flag set to false": (
        edit_yaml(set_in("serving.flags.enable-prefix-caching", False)),
        "recipe.yaml:",
        "enable-prefix-caching",
    ),
    "bad env name": (edit_yaml(lambda d: d["serving"]["env"].update({"1BAD": "x"})), "recipe.yaml:", "1BAD"),
    "image flag not in flags": (
        edit_yaml(lambda d: d["serving"]["image_flags"].update({"foo": "img"})),
        "recipe.yaml:",
        "'foo'",
    ),
    "container without image": (edit_yaml(set_in("serving.image", None)), "recipe.yaml:", "no image"),
    "key flag names missing flag": (
        edit_yaml(set_in("key_flags.0.flags", ["max-num-seq"])),
        "recipe.yaml:",
        "max-num-seq",
    ),
    "cluster with tp 1": (
        edit_yaml(set_in("topology", {"kind": "cluster", "tensor_parallel_size": 1, "nodes": 2})),
        "recipe.yaml:",
        "topology.cluster.tensor_parallel_size",
    ),
    "unknown topology": (edit_yaml(set_in("topology", {"kind": "mesh"})), "recipe.yaml:", "topology:"),
    "sweep not ascending": (edit_yaml(set_in("sweep.concurrency", [4, 2])), "recipe.yaml:", "ascending"),
    "slo key vLLM's --goodput does not know": (
        edit_yaml(set_in("sweep.slo", {"percentile": 95, "itl": 50})),
        "recipe.yaml:",
        "sweep.slo: 'itl' is not a limit vLLM's --goodput knows (it knows ttft, tpot, e2el, in ms)",
    ),
    "slo without a limit": (edit_yaml(set_in("sweep.slo", {"percentile": 95})), "recipe.yaml:", "at least one limit"),
    "slo percentile the client is not asked for": (
        edit_yaml(set_in("sweep.slo", {"percentile": 97, "ttft": 2000})),
        "recipe.yaml:",
        "sweep.slo.percentile",
    ),
    "request rate of zero": (
        edit_yaml(set_in("sweep.open_loop", {"rates": [0, 2]})),
        "recipe.yaml:",
        "sweep.open_loop.rates[0]: Input should be greater than 0",
    ),
    "negative request rate": (
        edit_yaml(set_in("sweep.open_loop", {"rates": [-1]})),
        "recipe.yaml:",
        "sweep.open_loop.rates[0]",
    ),
    "rates not ascending": (
        edit_yaml(set_in("sweep.open_loop", {"rates": [4, 2]})),
        "recipe.yaml:",
        "ascending",
    ),
    "recipe is a list": (lambda f: (f / "recipe.yaml").write_text("- a\n- b\n"), "recipe.yaml:1", "mapping"),
    "comparison at unmeasured concurrency": (
        edit_yaml(set_in("comparisons.0.concurrency", 3)),
        "recipe.yaml",
        "comparisons[0]: no run measured generation_tps at concurrency 3",
    ),
    "negative comparison value": (edit_yaml(set_in("comparisons.0.value", -1)), "recipe.yaml:", "comparisons[0].value"),
    "negative figure": (
        edit_run(set_in("levels.0.generation_tps", -5)),
        "20260506T000000Z.json",
        "levels[0].generation_tps",
    ),
    "non-numeric figure": (
        edit_run(set_in("levels.1.prefill_tps", "fast")),
        "20260506T000000Z.json",
        "levels[1].prefill_tps",
    ),
    "run JSON does not parse": (
        replace_text('"levels": [', '"levels": [[', RUN),
        "20260506T000000Z.json:",
        "JSON syntax error",
    ),
    "count of 401 digits": (
        edit_run(set_in("levels.0.completed", 10**400)),
        "20260506T000000Z.json:",
        "a whole number of 401 digits (100000000000…): at most 15",
    ),
    "run unknown field": (
        edit_run(set_in("tokens_per_joule", 3)),
        "20260506T000000Z.json",
        "tokens_per_joule: unknown field",
    ),
    "run provenance unknown method": (
        edit_run(set_in("provenance.method", "guessed")),
        "20260506T000000Z.json",
        "provenance",
    ),
    "run repeats a concurrency": (
        edit_run(lambda d: d["levels"].append(dict(d["levels"][0]))),
        "20260506T000000Z.json",
        "repeat",
    ),
    "incomplete run without reason": (
        edit_run(set_in("complete", False)),
        "20260506T000000Z.json",
        "incomplete_reason",
    ),
    "run file name differs from stamp": (rename_run, "20260507T000000Z.json", "recorded_at"),
    "recorded_at without zone": (
        edit_run(set_in("recorded_at", "2026-05-06T00:00:00")),
        "20260506T000000Z.json",
        "time zone",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_gives_one_line(case, recipe_copy, capsys, tmp_path):
    mutate, where, what = CASES[case]
    root, folder = recipe_copy()
    mutate(folder)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code = main(["--root", str(root), "validate", "--no-flags"])
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert len(err.splitlines()) == 1, err
    assert where in err and what in err, err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_errors_name_the_yaml_line(recipe_copy, capsys):
    root, folder = recipe_copy()
    edit_yaml(set_in("hardware.memory_gb", "lots"))(folder)
    main(["--root", str(root), "validate", "--no-flags"])
    err = capsys.readouterr().err
    lines = (folder / "recipe.yaml").read_text().splitlines()
    expected = next(i for i, t in enumerate(lines, 1) if "memory_gb" in t)
    assert f"recipe.yaml:{expected}: hardware.memory_gb" in err


def test_two_recipes_with_one_id(recipe_copy, capsys, tmp_path):
    root, folder = recipe_copy()
    other = tmp_path / "examples"
    shutil.copytree(folder, other / folder.name)
    assert main(["--root", str(root), "--root", str(other), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err.strip()
    assert "recipe id 'gptoss-120b' is also used by" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("name", ["GPT_oss", "gptoss-\u00fc", "gptoss\n"])
def test_bad_recipe_id(recipe_copy, capsys, name):
    root, folder = recipe_copy()
    folder.rename(root / name)  # "gptoss\n": a `$` anchor with re.match let the trailing newline through
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err
    assert f"{root / name}: recipe id (the folder name) must be lower-case letters" in err, err


def test_command_line_process_exit_code(recipe_copy, repo):
    root, folder = recipe_copy()
    edit_yaml(set_in("hardware.memory_gb", -3))(folder)
    proc = subprocess.run(
        [sys.executable, "-m", "catalogue", "--root", str(root), "validate", "--no-flags"],
        capture_output=True,
        text=True,
        cwd=repo,
    )
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "hardware.memory_gb: Input should be greater than 0" in proc.stderr
