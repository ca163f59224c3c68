"""`catalogue import` of an agent run: AIPerf 0.13's real exports of a mooncake replay (tests/data/aiperf-agents)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.models import agent_trace
from catalogue.models.loading import load_entry

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "aiperf-agents"
"""s2/: AIPerf replaying agents-t.jsonl at 2 concurrent sessions against the tiny CPU server (its own two files)."""


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "examples" / "tiny-cpu", root / "tiny-cpu", ignore=shutil.ignore_patterns("runs"))
    return root, root / "tiny-cpu"


def test_an_agent_export_becomes_one_agent_run_keyed_by_its_trace(tiny, capsys):
    root, folder = tiny
    assert main(["--root", str(root), "import", "tiny-cpu", str(DATA)]) == 0
    (run,) = load_entry(folder).runs
    assert run.levels == [] and run.agents is not None
    (level,) = run.agents.levels
    export = json.loads((DATA / "s2" / "profile_export_aiperf.json").read_text())
    assert level.sessions == export["input_config"]["phases"][0]["concurrency"] == 2
    assert level.turns == export["request_count"]["avg"] == 10
    assert level.hit_rate is None  # no /metrics were read around an imported level
    trace = DATA / "agents-t.jsonl"
    assert run.workload.trace_sha256 == agent_trace.sha256(trace.read_bytes())
    assert run.workload.trace == "trace file agents-t.jsonl: 8 sessions, 32 turns, 64-token blocks"
    kept = folder / "runs" / run.stamp
    assert sorted(p.name for p in kept.rglob("*") if p.is_file()) == [
        "agents-t.jsonl", "profile_export.jsonl", "profile_export_aiperf.json",
    ]  # fmt: skip
    assert level.raw == [f"{run.stamp}/s2/profile_export_aiperf.json", f"{run.stamp}/s2/profile_export.jsonl"]
    assert "agent sessions 2" in capsys.readouterr().out


def test_the_same_files_twice_are_refused(tiny):
    root, _ = tiny
    assert main(["--root", str(root), "import", "tiny-cpu", str(DATA)]) == 0
    assert main(["--root", str(root), "import", "tiny-cpu", str(DATA)]) == 1


def test_without_the_trace_it_names_the_missing_file_in_one_line(tiny, tmp_path, capsys):
    root, folder = tiny
    bare = tmp_path / "bare"
    shutil.copytree(DATA / "s2", bare / "s2")
    assert main(["--root", str(root), "import", "tiny-cpu", str(bare)]) == 1
    err = capsys.readouterr().err.strip()
    assert "agents-t.jsonl is not in the folders given" in err and "\n" not in err
    assert not (folder / "runs").exists() or not list((folder / "runs").iterdir())


@pytest.mark.parametrize("name", ["s2/profile_export.jsonl", "agents-t.jsonl"])
def test_a_turn_or_trace_line_nested_200k_deep_is_one_line_naming_the_file(name, tiny, tmp_path, capsys):
    """The turns export and the trace are read before check_files bounds the kept files: each is read within the
    import limit and each line refused past the nesting limit, not a RecursionError traceback."""
    root, folder = tiny
    given = tmp_path / "given"
    shutil.copytree(DATA, given)
    with (given / name).open("a") as f:
        f.write("[" * 200_000 + "\n")
    assert main(["--root", str(root), "import", "tiny-cpu", str(given)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {given / name}:") and "nested more than 64 deep" in err and "\n" not in err, err
    assert not (folder / "runs").exists() or not list((folder / "runs").iterdir())
