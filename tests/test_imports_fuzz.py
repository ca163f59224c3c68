"""`catalogue import` under mutated tool outputs: the real files of tests/data (a `vllm bench serve` JSON, a sweep and
a serve_workload folder, GuideLLM, llama-benchy, AIPerf, an AIPerf agent replay) with wrong types, negative and huge
numbers, NaN and Infinity, lists for scalars and deleted keys. Whatever a stranger's file holds, the import succeeds
or fails with exactly one line naming the file and writes nothing; never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalogue.commands.cli import main

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
STATED = ["--dataset", "random", "--input-len", "64", "--output-len", "16"]
SOURCES: dict[str, tuple[str, str, list[str]]] = {
    "vllm bench serve": ("tool-outputs/c1.json", "", STATED),
    "vllm bench serve, open loop": ("tool-outputs/r4.json", "", [*STATED, "--goodput", "ttft:30"]),
    "sweep": ("tool-outputs/sweep", "BENCH--max_concurrency=2/run=0.json", STATED),
    "serve_workload": ("tool-outputs/workload", "WL--request_rate=4/run=0.json", STATED),
    "GuideLLM": ("tool-outputs/guidellm-sweep.json", "", []),
    "llama-benchy": ("tool-outputs/llama-benchy.json", "", []),
    "AIPerf": ("tool-outputs/aiperf-rate.json", "", []),
    "AIPerf agents": ("aiperf-agents", "s2/profile_export_aiperf.json", []),
    "AIPerf agent turns": ("aiperf-agents", "s2/profile_export.jsonl", []),
}
"""Format -> (file or folder under tests/data, the file mutated inside a folder, the import's other arguments)."""
EXAMPLES = int(os.environ.get("CATALOGUE_FUZZ_EXAMPLES", "50"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("CATALOGUE_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([-1, 0, 10**30, -(10**30), 1e308, -1e308, float("nan"), float("inf"), float("-inf")]),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["x", "inf", "NaN", "", "1"]),
    st.lists(st.integers(-5, 5) | st.text(max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(-5, 5) | st.none(), max_size=2),
)
"""Values a field should never hold, or holds out of range."""
DELETE = object()
"""Marks a mutation that deletes the key (or list item) instead of replacing it."""
EDITS = st.lists(
    st.tuples(st.lists(st.integers(0, 200), min_size=1, max_size=6), ODD | st.just(DELETE)), min_size=1, max_size=3
)


def mutate(doc: Any, route: list[int], value: Any) -> Any:
    """`doc` with the node reached by `route` (each step an index into the keys or items) replaced or deleted."""
    if not isinstance(doc, dict | list) or not doc:
        return doc if value is DELETE else value
    keys = list(doc) if isinstance(doc, dict) else list(range(len(doc)))
    key = keys[route[0] % len(keys)]
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    if len(route) == 1 or not isinstance(doc[key], dict | list) or not doc[key]:
        if value is DELETE:
            del copy[key]
        else:
            copy[key] = value
        return copy
    copy[key] = mutate(doc[key], route[1:], value)
    return copy


def imported(kind: str, edits: list[tuple[list[int], Any]], work: Path) -> tuple[int, str, Path, Path]:
    """Import the format's real output after `edits`: (exit code, stderr, the mutated file, the recipe folder)."""
    name, inner, args = SOURCES[kind]
    root = work / "recipes"
    shutil.copytree(REPO / "examples" / "tiny-cpu", root / "tiny-cpu", ignore=shutil.ignore_patterns("runs"))
    target = work / Path(name).name
    if inner:
        shutil.copytree(DATA / name, target)
    else:
        shutil.copy(DATA / name, target)
    changed = target / inner if inner else target
    text = changed.read_text(encoding="utf-8")
    lines = changed.suffix == ".jsonl"  # a list of records, one a line: the route's first step picks the line
    doc = [json.loads(line) for line in text.splitlines()] if lines else json.loads(text)
    for route, value in edits:
        doc = mutate(doc, route, value)
    out = "".join(json.dumps(record) + "\n" for record in doc) if lines and isinstance(doc, list) else json.dumps(doc)
    changed.write_text(out, encoding="utf-8")  # NaN and Infinity as Python writes them
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["--root", str(root), "import", "tiny-cpu", str(target), *args])
    return code, err.getvalue(), changed, root / "tiny-cpu"


@FUZZ
@given(kind=st.sampled_from(sorted(SOURCES)), edits=EDITS)
def test_a_mutated_tool_output_imports_or_is_one_error(kind, edits):
    with tempfile.TemporaryDirectory() as tmp:
        code, err, changed, recipe = imported(kind, edits, Path(tmp))
        if code == 0:
            return
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        names = {str(changed), str(changed.parent), str(Path(tmp) / Path(SOURCES[kind][0]).name)}
        assert any(lines[0].startswith(f"error: {name}") for name in names), err
        assert not (recipe / "runs").exists() or not any((recipe / "runs").iterdir()), "a failed import wrote"


def test_each_real_output_imports_unchanged():
    """The fuzzer's seeds: every source imports as it is (so a refused mutant is refused for its mutation)."""
    for kind in SOURCES:
        with tempfile.TemporaryDirectory() as tmp:
            code, err, _, recipe = imported(kind, [], Path(tmp))
            assert code == 0, (kind, err)
            assert any((recipe / "runs").iterdir())


def test_kept_cases_are_one_line_naming_the_field():
    """Found by the attacker's fuzzer (issue 44, finding 5): each was a traceback before the typed shapes."""
    cases = {
        "vllm bench serve": (["p90_tpot_ms"], "x", "p90_tpot_ms: not a number"),
        "vllm bench serve, open loop": (["failed"], [], "failed: not a whole number"),
        "GuideLLM": (["config"], "x", "config: not an object"),
        "llama-benchy": (["benchmarks", 0, "prompt_size"], -1, "benchmarks[0].prompt_size: below the least"),
        "AIPerf agent turns": ([0, "metrics", "usage_prompt_tokens", "value"], 1e30, "total_tps: above the largest"),
    }
    for kind, (path, value, expected) in cases.items():
        name = SOURCES[kind][0]
        text = (DATA / name / SOURCES[kind][1]).read_text(encoding="utf-8")
        doc = [json.loads(line) for line in text.splitlines()] if kind.endswith("turns") else json.loads(text)
        route = []
        node = doc
        for step in path:
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            route.append(keys.index(step))
            node = node[step]
        with tempfile.TemporaryDirectory() as tmp:
            code, err, changed, _ = imported(kind, [(route, value)], Path(tmp))
            assert code == 1 and len(err.strip().splitlines()) == 1, err
            assert err.startswith(f"error: {changed}: {expected}"), err
