"""A scratch recipe with three workloads, written by `catalogue import` from the committed real tool outputs."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUTPUTS = REPO / "tests" / "data" / "tool-outputs"
RECIPE = "gptoss-120b-topology-solo"
PP128_SCALE = 1.5
"""The pp128 half of the report: the real pp64 levels with prompt_size 128 and prefill figures × this (an edit of a
copy, as the bad-input tests make; every other figure is the real report's)."""


def import_three_workloads(tmp_path: Path) -> tuple[Path, Path]:
    """Copy a seed recipe without its runs into tmp_path/recipes, then import a llama-benchy report (pp64 and pp128:
    two workloads) and a `vllm bench serve` pair (c=1, c=2: the third). Returns (root, recipe folder)."""
    root = tmp_path / "recipes"
    folder = root / RECIPE
    shutil.copytree(REPO / "recipes" / RECIPE, folder, ignore=shutil.ignore_patterns("runs"))
    report = json.loads((OUTPUTS / "llama-benchy.json").read_text())
    pp128 = []
    for bench in report["benchmarks"]:
        twin = copy.deepcopy(bench)
        twin["prompt_size"] = 128
        for name in ("pp_throughput", "pp_req_throughput"):
            stats = twin[name]
            stats["mean"] *= PP128_SCALE
            stats["std"] *= PP128_SCALE
            stats["values"] = [v * PP128_SCALE for v in stats["values"]]
        pp128.append(twin)
    report["benchmarks"] += pp128
    source = tmp_path / "llama-benchy-pp64-pp128.json"
    source.write_text(json.dumps(report))
    imports = [
        [str(source)],
        [
            "--dataset",
            "random",
            "--input-len",
            "64",
            "--output-len",
            "16",
            str(OUTPUTS / "c1.json"),
            str(OUTPUTS / "c2.json"),
        ],
    ]
    for args in imports:
        subprocess.run(
            [sys.executable, "-m", "catalogue", "--root", str(root), "import", RECIPE, *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            text=True,
        )
    return root, folder
