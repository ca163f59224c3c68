"""catalogue.paste.sparkrun_format reads sparkrun's recipe format as sparkrun 0.4.2 does: the command rendered from
defaults (v1's `{{`/`}}` escapes too), the node range, the benchmark block. sparkrun's own loader runs on every
test file in its venv ($CATALOGUE_SPARKRUN, the `sparkrun` command; `nox -s tests` installs it) and must agree."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from catalogue.commands.new_sparkrun import recipe_files
from catalogue.paste.sparkrun import parse_sparkrun
from catalogue.paste.sparkrun_bench import block_args
from catalogue.paste.sparkrun_format import render, unfilled
from tests.needs import tool_or_skip

DATA = Path(__file__).resolve().parent / "data" / "sparkrun"
FILES = [*recipe_files(DATA / "recipe-registry"), *recipe_files(DATA / "eugr-v1"), *recipe_files(DATA / "constructed")]
PROBE = """
import json, sys
from sparkrun.core.benchmark_profiles import BenchmarkSpec
from sparkrun.core.recipe import Recipe
out = {}
for path in sys.argv[1:]:
    r = Recipe.load(path)
    spec = BenchmarkSpec.from_recipe(r)
    out[path] = {
        "model": r.model, "container": r.container, "nodes": [r.min_nodes, r.max_nodes], "env": r.env,
        "command": r.render_command(r.build_config_chain()),
        "benchmark": None if spec is None else [spec.framework, spec.args],
    }
print(json.dumps(out))
"""


def test_render_fills_fields_until_stable_and_keeps_json_braces():
    values = {"a": "{b}", "b": 2, "none": None}
    assert render("x {a} {none} {c}", values) == "x 2 {none} {c}"
    assert render("""--c '{"k": {a}}'""", values) == """--c '{"k": 2}'"""
    assert render("""--c '{{"k": {a}}}'""", values) == """--c '{"k": 2}'"""  # v1's escape
    assert render("a \\  \nb", {}) == "a \\\nb"
    assert unfilled("""vllm serve --x {y} --c '{"k": 1}'""") == ["{y}"]


@pytest.fixture(scope="module")
def sparkrun_reads(tmp_path_factory) -> dict:
    command = tool_or_skip("CATALOGUE_SPARKRUN", "sparkrun")
    home = tmp_path_factory.mktemp("home")  # sparkrun keeps its config and caches under ~
    python = Path(command).parent / "python"
    done = subprocess.run(
        [str(python), "-c", PROBE, *map(str, FILES)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HOME": str(home)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_sparkruns_loader_reads_every_file_as_we_do(path, sparkrun_reads):
    theirs = sparkrun_reads[str(path)]
    ours = parse_sparkrun(path.read_text(encoding="utf-8"), str(path))
    assert ours.model == theirs["model"] and ours.container == theirs["container"]
    assert list(ours.nodes) == theirs["nodes"]
    assert {k: str(v) for k, v in ours.env.items()} == theirs["env"]
    assert ours.rendered_command() == theirs["command"]
    if ours.benchmark is None:
        assert theirs["benchmark"] is None
    else:
        assert [ours.benchmark.get("framework", "llama-benchy"), block_args(ours.benchmark)] == theirs["benchmark"]
