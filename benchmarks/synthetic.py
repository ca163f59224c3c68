"""Synthetic catalogues: N recipes cloned from the richest seed recipe, each with its own title, summary,
model, hardware and status (so no page is a copy of another)."""

from __future__ import annotations

import shutil
from pathlib import Path

from catalogue.models.yaml_files import dump_yaml, parse_yaml

REPO = Path(__file__).resolve().parents[1]
MODELS = [f"org{i}/model-{i}b" for i in range(12)]
PLATFORMS = ["dgx-spark", "cpu"]
"""Platforms with a profile in platforms/ (an unknown platform is a load error)."""
STATUSES = ["production", "experimental", "community"]


def make_catalogue(root: Path, count: int) -> Path:
    """Write `count` recipe folders under `root` and return it."""
    seed = REPO / "recipes" / "gptoss-120b"
    data = parse_yaml((seed / "recipe.yaml").read_text(), seed / "recipe.yaml")
    summary = data["summary"]
    for i in range(count):
        folder = root / f"synthetic-{i:04d}"
        shutil.copytree(seed / "runs", folder / "runs")
        data["title"] = f"Synthetic recipe {i}"
        data["summary"] = f"Synthetic recipe {i}, cloned from gptoss-120b. " + summary
        data["model"] = MODELS[i % len(MODELS)]
        data["hardware"]["platform"] = PLATFORMS[i % len(PLATFORMS)]
        data["hardware"]["name"] = PLATFORMS[i % len(PLATFORMS)].upper()
        data["status"] = STATUSES[i % len(STATUSES)]
        (folder / "recipe.yaml").write_text(dump_yaml(data))
    return root
