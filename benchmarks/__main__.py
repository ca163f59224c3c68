"""`nox -s bench`: site build scaling, `mkdocs serve` edit latency, flag validation, runner overhead, topologies."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from benchmarks.synthetic import REPO, make_catalogue

SNAPSHOT = REPO / "snapshots" / "vllm-0.32.0.json"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1", "CATALOGUE_FLAGS_SNAPSHOT": str(SNAPSHOT), **extra}


def _roots(synthetic: Path) -> str:
    """The synthetic catalogue plus the examples folder (the methodology page links to it)."""
    return os.pathsep.join([str(synthetic), str(REPO / "examples")])


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_build(sizes: list[int], repeats: int = 3) -> None:
    """Full `mkdocs build` of synthetic catalogues, each size built `repeats` times (this VM's speed varies)."""
    print(f"\n## Site build (mkdocs build, flags checked against the committed snapshot; {repeats} builds per size)")
    print(f"{'recipes':>8} {'best s':>8} {'median s':>9} {'site MB':>8} {'ms/recipe':>10}")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = make_catalogue(Path(tmp) / "recipes", n)
            out = Path(tmp) / "site"
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(out)],
                    cwd=REPO,
                    check=True,
                    env=_env(CATALOGUE_RECIPE_ROOTS=_roots(root)),
                )
                times.append(time.perf_counter() - start)
            best, median = min(times), statistics.median(times)
            print(f"{n:>8} {best:>8.2f} {median:>9.2f} {_size_mb(out):>8.1f} {1000 * median / n:>10.1f}", flush=True)


def bench_serve_edit(n: int = 100) -> None:
    """Time from a YAML edit to the new text served by `mkdocs serve`."""
    print(f"\n## mkdocs serve: YAML edit visible ({n} recipes)")
    with tempfile.TemporaryDirectory() as tmp:
        root = make_catalogue(Path(tmp) / "recipes", n)
        port = _free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
            cwd=REPO,
            env=_env(CATALOGUE_RECIPE_ROOTS=_roots(root)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}/recipes/synthetic-0007/"
        try:
            _wait_for(url, "Synthetic recipe 7", 120)
            times = []
            for attempt in range(3):
                recipe = root / "synthetic-0007" / "recipe.yaml"
                marker = f"Edited title {attempt}"
                text = recipe.read_text().replace(recipe.read_text().splitlines()[0], f"title: {marker}", 1)
                start = time.perf_counter()
                recipe.write_text(text)
                _wait_for(url, marker, 60)
                times.append(time.perf_counter() - start)
                time.sleep(1)
            print("edit visible after: " + ", ".join(f"{t:.2f} s" for t in times), flush=True)
        finally:
            os.killpg(proc.pid, 15)
            proc.wait()


def _wait_for(url: str, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if text in response.read().decode():
                    return
        except OSError:
            pass
        time.sleep(0.02)
    raise TimeoutError(f"{text!r} not served at {url}")


VALIDATION_SCRIPT = """
import sys, time, tempfile
from pathlib import Path
t0 = time.perf_counter()
from catalogue.flags.extract import extract_snapshot
extract_snapshot()
cold = time.perf_counter() - t0
from catalogue.flags.select import validate_entries
from catalogue.flags.extract import live_checker
from catalogue.loading import load_catalogue
from benchmarks.synthetic import make_catalogue
t1 = time.perf_counter()
checker = live_checker()
setup = time.perf_counter() - t1
with tempfile.TemporaryDirectory() as tmp:
    entries = load_catalogue([make_catalogue(Path(tmp), 100)])
    t2 = time.perf_counter()
    findings = validate_entries(entries, checker)
    warm = time.perf_counter() - t2
print(f"cold (import vLLM + extract schema): {cold:.2f} s")
print(f"cached schema, real parser built: {setup:.2f} s")
print(f"validate 100 recipes with the real parser: {warm:.3f} s ({1000 * warm / 100:.1f} ms/recipe)")
"""


def bench_validation() -> None:
    """Cold schema extraction, then validation of 100 recipes against the real parser."""
    print("\n## Flag validation against the installed vLLM")
    env = {k: v for k, v in _env().items() if k != "CATALOGUE_FLAGS_SNAPSHOT"}
    subprocess.run([sys.executable, "-c", VALIDATION_SCRIPT], cwd=REPO, check=True, env=env)


def bench_runner() -> None:
    """A 3-level refresh of the tiny CPU recipe, and the same work by `vllm bench sweep serve`."""
    print("\n## Runner on the tiny CPU recipe (3 levels)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "examples"
        subprocess.run(["cp", "-r", str(REPO / "examples"), str(root)], check=True)
        port = _free_port()
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "catalogue", "--root", str(root), "refresh", "tiny-cpu", "--port", str(port)],
            cwd=REPO,
            check=True,
            stderr=subprocess.DEVNULL,
        )
        ours = time.perf_counter() - start
        run_file = next((root / "tiny-cpu" / "runs").glob("*.json"))
        run = json.loads(run_file.read_text())
        events = [json.loads(x) for x in (run_file.with_suffix("") / "events.jsonl").read_text().splitlines()]
        overheads = [e["wall_s"] - e["duration_s"] for e in events if e["kind"] == "level"]
        print(f"refresh wall time: {ours:.1f} s")
        print("outside the bench window per level: " + ", ".join(f"{o:.2f} s" for o in overheads))
        serve = run["provenance"]["serve_command"]
        bench = run["provenance"]["bench_commands"][0]
        base = (
            bench[: bench.index("--num-prompts")] + bench[bench.index("--num-warmups") : bench.index("--save-result")]
        )
        params = [
            {
                "num_prompts": int(c[c.index("--num-prompts") + 1]),
                "max_concurrency": int(c[c.index("--max-concurrency") + 1]),
            }
            for c in run["provenance"]["bench_commands"]
        ]
        (Path(tmp) / "params.json").write_text(json.dumps(params))
        start = time.perf_counter()
        subprocess.run(
            [
                "vllm",
                "bench",
                "sweep",
                "serve",
                "--serve-cmd",
                shlex.join(serve),
                "--bench-cmd",
                shlex.join(base),
                "--bench-params",
                str(Path(tmp) / "params.json"),
                "-o",
                str(Path(tmp) / "sweep"),
                "--num-runs",
                "1",
            ],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=open(Path(tmp) / "sweep.log", "w"),
            env={**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1"},
        )
        theirs = time.perf_counter() - start
        if not list((Path(tmp) / "sweep").rglob("summary.json")):
            print(
                "vllm bench sweep serve failed:\n" + "\n".join((Path(tmp) / "sweep.log").read_text().splitlines()[-15:])
            )
            return
        print(f"vllm bench sweep serve, same server and 3 levels: {theirs:.1f} s")
        print(f"ratio refresh / sweep serve: {ours / theirs:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("parts", nargs="*", default=["build", "serve", "validation", "runner", "topologies"])
    parser.add_argument("--sizes", default="100,500,1000")
    args = parser.parse_args()
    if "build" in args.parts:
        bench_build([int(s) for s in args.sizes.split(",")])
    if "serve" in args.parts:
        bench_serve_edit()
    if "validation" in args.parts:
        bench_validation()
    if "runner" in args.parts:
        bench_runner()
    if "topologies" in args.parts:
        from benchmarks.topologies import bench_topologies

        bench_topologies()


if __name__ == "__main__":
    main()
