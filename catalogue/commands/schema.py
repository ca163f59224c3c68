"""`catalogue schema`: JSON Schemas for editors, generated from the pydantic models."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from catalogue.models.atomic import write_text
from catalogue.models.benchmark import BenchmarkRun
from catalogue.models.recipe import Recipe

SCHEMAS: dict[str, type[BaseModel]] = {"recipe.schema.json": Recipe, "run.schema.json": BenchmarkRun}


def render_schemas() -> dict[str, str]:
    """File name -> JSON Schema text."""
    return {name: json.dumps(model.model_json_schema(), indent=2) + "\n" for name, model in SCHEMAS.items()}


def run_schema(out: Path) -> int:
    """Write every schema into `out`."""
    for name, text in render_schemas().items():
        write_text(out / name, text)
        print(f"wrote {out / name}")
    return 0
