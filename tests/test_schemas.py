"""The committed JSON Schemas match the models, and every recipe points editors at them."""

from __future__ import annotations

import json

from catalogue.commands.schema import render_schemas


def test_committed_schemas_are_current(repo):
    for name, text in render_schemas().items():
        committed = (repo / "schemas" / name).read_text()
        assert json.loads(committed) == json.loads(text), f"run `nox -s schema` to refresh schemas/{name}"


def test_recipes_start_with_schema_line(repo):
    for path in (repo / "recipes").glob("*/recipe.yaml"):
        first = path.read_text().splitlines()[0]
        assert first == "# yaml-language-server: $schema=../../schemas/recipe.schema.json", path
