"""`nox -s bench -- topologies`: the runner on every topology in docker, and cold against warm boots."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.synthetic import REPO
from catalogue.models.yaml_files import dump_yaml, parse_yaml

sys.path.insert(0, str(REPO / "tools"))
import docker_env

from runner.planning.plan import CACHE_ROOT

EXAMPLES = ("tiny-cpu-docker", "tiny-cpu-cluster", "tiny-cpu-replicas")


def _refresh(root: Path, recipe_id: str) -> tuple[float, dict, list[dict]]:
    """Wall time of one refresh, its run file and its client events."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "catalogue", "--root", str(root), "refresh", recipe_id],
        cwd=REPO,
        check=True,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    run_file = sorted((root / recipe_id / "runs").glob("*.json"))[-1]
    events = [json.loads(x) for x in (run_file.with_suffix("") / "events.jsonl").read_text().splitlines()]
    return wall, json.loads(run_file.read_text()), events


def _healthy_s(run: dict) -> str:
    return next((n.split(" after ")[1] for n in run["notes"] if n.startswith("server healthy")), "?")


def bench_topologies() -> None:
    """Refresh wall time, time outside the bench window per level, docker run -> healthy, per topology."""
    print("\n## Runner topologies in docker (tiny model, vllm-cpu image, this machine's engine)")
    started_here = not docker_env.engine_answers()
    docker_env.up()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "examples"
            for recipe_id in EXAMPLES:
                shutil.copytree(REPO / "examples" / recipe_id, root / recipe_id, ignore=shutil.ignore_patterns("runs"))
                wall, run, events = _refresh(root, recipe_id)
                overheads = [
                    f"{e['name']} {e['wall_s'] - e['duration_s']:.2f} s" for e in events if e["kind"] == "level"
                ]
                router = next((n for n in run["notes"] if n.startswith("router live")), None)
                print(
                    f"{recipe_id}: refresh {wall:.1f} s; docker run -> healthy {_healthy_s(run)}"
                    + (f"; {router}" if router else "")
                )
                print("  outside the bench window per level: " + ", ".join(overheads))
            bench_warm_boot(root)
    finally:
        if started_here:
            docker_env.stop_engine()


def bench_warm_boot(root: Path) -> None:
    """A tiny recipe that compiles (no --enforce-eager): first boot with an empty cache folder, then again."""
    recipe_id = "tiny-cpu-compiled"
    folder = root / recipe_id
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", folder, ignore=shutil.ignore_patterns("runs"))
    data = parse_yaml((folder / "recipe.yaml").read_text(), folder / "recipe.yaml")
    del data["serving"]["flags"]["enforce-eager"]
    data["key_flags"] = [k for k in data["key_flags"] if "enforce-eager" not in k["flags"]]
    data["sweep"].update(concurrency=[1], long_context=[])
    (folder / "recipe.yaml").write_text(dump_yaml(data))
    cache = Path(CACHE_ROOT)
    for old in cache.glob(f"*/{recipe_id}"):
        shutil.rmtree(old, ignore_errors=True)
    cold = _refresh(root, recipe_id)[1]
    warm = _refresh(root, recipe_id)[1]
    print(
        f"compiled tiny recipe (torch.compile on), docker run -> healthy: cold {_healthy_s(cold)}, "
        f"warm {_healthy_s(warm)} (compile cache in {CACHE_ROOT}/<image>/<recipe>)"
    )
