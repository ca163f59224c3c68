"""The recipe and run-file loaders under mutated input: whatever a stranger's file holds, loading it gives a recipe
or a run, or one CatalogueError naming the file; never another exception. (Bounds on size, aliases and depth are
tests/test_yaml_files.py's; this only looks for crashes, with shallow values.)"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalogue.models.errors import CatalogueError
from catalogue.models.loading import parse_recipe, parse_run

REPO = Path(__file__).resolve().parents[1]
RECIPE = (REPO / "examples" / "tiny-cpu-docker" / "recipe.yaml").read_text()
RUN_FILE = sorted((REPO / "recipes" / "gptoss-120b" / "runs").glob("*.json"))[0]
RUN = json.loads(RUN_FILE.read_text())
EXAMPLES = int(os.environ.get("CATALOGUE_FUZZ_EXAMPLES", "80"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("CATALOGUE_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
YAML_BITS = st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"%@`#,? \t\n0.e+~\x00\x1b\u2028\ufeff")), max_size=30)
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**16), 10**16),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@FUZZ
@given(data=st.data())
def test_a_mutated_recipe_loads_or_is_one_error(data, tmp_path):
    lines = RECIPE.splitlines()
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(lines) - 1))
        op = data.draw(st.sampled_from(["value", "drop", "insert"]))
        if op == "value" and ":" in lines[i]:
            lines[i] = lines[i].split(":", 1)[0] + ": " + data.draw(YAML_BITS)
        elif op == "drop":
            del lines[i]
        else:
            lines.insert(i, data.draw(YAML_BITS))
    path = tmp_path / "r" / "recipe.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    try:
        parse_recipe(path)
    except CatalogueError as exc:
        assert str(path) in str(exc)


def test_the_fuzzers_kept_recipe_case_a_complex_key_is_one_error(tmp_path):
    """Found by the fuzzer: a line `?` made yaml-rs raise TypeError (unhashable dict) out of parse_recipe."""
    path = tmp_path / "recipe.yaml"
    lines = RECIPE.splitlines()
    at = lines.index("serving:") + 1
    for text in ("\n".join([*lines[:at], "?", *lines[at:]]), "? [a]\n: b\n"):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(CatalogueError) as error:
            parse_recipe(path)
        assert str(error.value).startswith(f"{path}"), error.value


def _replace(doc: Any, route: list[int], value: Any) -> Any:
    """`doc` with the leaf reached by `route` (each step an index into the container's keys or items) replaced."""
    if not route or not isinstance(doc, dict | list) or not doc:
        return value
    keys = list(doc) if isinstance(doc, dict) else list(range(len(doc)))
    key = keys[route[0] % len(keys)]
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    copy[key] = _replace(doc[key], route[1:], value)
    return copy


@FUZZ
@given(route=st.lists(st.integers(0, 50), min_size=1, max_size=5), value=VALUES)
def test_a_mutated_run_file_loads_or_is_one_error(route, value, tmp_path):
    path = tmp_path / "runs" / RUN_FILE.name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(_replace(RUN, route, value)), encoding="utf-8")
    try:
        parse_run(path)
    except CatalogueError as exc:
        assert str(path) in str(exc)
