"""`nox -s bench -- nochange`: refreshes of `examples/tiny-cpu-docker` with nothing changed, each judged by the
regression check against the runs before it, then one with `max-num-seqs: 1`. Needs the docker engine and the local
vLLM CPU image (`python tools/docker_env.py up`).

What it prints per refresh: the outcome counts, every figure called regressed or improved, the figures withheld
because a level's tokens reached the client in bursts (catalogue.stats.engine_timing), and the earlier runs left out as
measured with the machine in another state (catalogue.stats.machine_speed). Target: no refresh with nothing
changed calls anything regressed, while `max-num-seqs: 1` at c=4 is. `BENCH_KEEP=DIR` keeps the refreshed example
(every run file) in DIR, a folder that must not exist yet."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

from benchmarks.synthetic import REPO
from catalogue.models.benchmark import LevelResult
from catalogue.models.loading import load_entry
from catalogue.stats.regression import report

RECIPE = "tiny-cpu-docker"
REFRESHES = 5
ALLOW = ("--allow", "--cap-add IPC_LOCK")


def _refresh(root: Path, port: int) -> None:
    argv = [sys.executable, "-m", "catalogue", "--root", str(root), "refresh", RECIPE, "--port", str(port), *ALLOW]
    done = subprocess.run(argv, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"refresh failed (exit {done.returncode}):\n{done.stderr[-3000:]}")


def _judge(folder: Path, label: str) -> list[str]:
    """One line of outcome counts for the newest run, then each change and each burst-withheld figure."""
    entry = load_entry(folder)
    run = entry.latest
    assert run is not None
    found = report(entry.runs, run, entry.recipe.sweep.regression)
    counts = Counter(row.outcome for row in found.rows)
    lines = [f"{label} {run.stamp}: " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))]
    lines += [f"  {change.line()}" for change in found.changes]
    lines += [f"  not judged: {row.level} {row.metric.label}: {row.why}" for row in found.rows if "bursts" in row.why]
    lines += [f"  left out: {why}" for why in found.left_out]
    lines += [
        f"  not judged: {row.level}: {row.why}"
        for row in found.rows
        if row.metric.name == "generation_tps" and row.withheld and "machine" in row.why
    ]
    lines.append("  levels: " + "; ".join(_level_line(lv) for lv in [*run.levels, *run.long_context]))
    return lines


def _level_line(level: LevelResult) -> str:
    """'c1 275 tok/s (CPU 9.8-9.9 ms)': each level's generation beside the machine's calibration around it."""
    name = f"ctx{level.prompt_tokens}" if level.prompt_tokens else f"c{level.concurrency}"
    cpu = "-".join(f"{x:g}" for x in level.calibration_ms) if level.calibration_ms else "not taken"
    return f"{name} {level.generation_tps or 0:,.0f} tok/s (CPU {cpu} ms)"


def bench_nochange(port: int) -> None:
    print(f"\n## {REFRESHES} no-change refreshes of {RECIPE}, then max-num-seqs 1 (regression check)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "examples"
        shutil.copytree(REPO / "examples" / RECIPE, root / RECIPE)
        folder = root / RECIPE
        flagged = 0
        for i in range(1, REFRESHES + 1):
            _refresh(root, port)
            lines = _judge(folder, f"refresh {i}")
            flagged += any(line.startswith("  regressed") for line in lines)
            print("\n".join(lines), flush=True)
        path = folder / "recipe.yaml"
        data = yaml.safe_load(path.read_text())
        data["serving"]["flags"]["max-num-seqs"] = 1
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        _refresh(root, port)
        slow = _judge(folder, "max-num-seqs 1")
        print("\n".join(slow))
        caught = any(line.startswith("  regressed: c4") for line in slow)
        print(f"no-change refreshes that flagged a regression: {flagged} of {REFRESHES} (target 0)")
        print(f"max-num-seqs 1 flagged at c4: {'yes' if caught else 'no'} (target yes)")
        if keep := os.environ.get("BENCH_KEEP"):  # the runs, to study the noise: a folder that must not exist yet
            shutil.copytree(folder, Path(keep))
            print(f"runs kept in {keep}")
