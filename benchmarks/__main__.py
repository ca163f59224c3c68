"""`nox -s bench`: site build scaling, `mkdocs serve` edit latency, flag validation, the secret scan's worst cases,
runner overhead, topologies, the capacity search (`nox -s bench -- capacity`; not in the default set: it boots the
tiny server twice), and no-change refreshes of the tiny docker example judged by the regression check (`nox -s bench
-- nochange`; needs docker), and the statistics against the simulator's truth (`nox -s bench -- truth`: about 40
minutes of refreshes)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from benchmarks.against import Tree, check_imports_from, this_tree, tree_env, unpack
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


def _children_cpu_s() -> float:
    """User + system CPU seconds of this process's finished children (a build's forked batch included)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _build_times(
    root: Path, out: Path, repeats: int, tree: Tree | None = None, cpu: list[float] | None = None
) -> list[float]:
    """Wall seconds of `repeats` full `mkdocs build`s of the catalogue at `root` into `out`, by the code of `tree`;
    the CPU seconds of each (both processes of a forked build) are appended to `cpu`."""
    tree = tree or this_tree()
    times = []
    for _ in range(repeats):
        used = _children_cpu_s()
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(out)],
            cwd=tree[1],
            check=True,
            env=tree_env(tree, _env(CATALOGUE_RECIPE_ROOTS=_roots(root))),
        )
        times.append(time.perf_counter() - start)
        if cpu is not None:
            cpu.append(_children_cpu_s() - used)
    return times


def _raw_rewrite_s(site: Path, target: Path, repeats: int = 3) -> float:
    """Best seconds plain Python takes to replace a copy of `site` at `target` (remove it, write the
    files again), as `mkdocs build` replaces the previous site: what the disk alone costs."""
    files = [(p.relative_to(site), p.read_bytes()) for p in site.rglob("*") if p.is_file()]

    def write() -> None:
        for rel, data in files:
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

    write()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        shutil.rmtree(target)
        write()
        times.append(time.perf_counter() - start)
    return min(times)


def _cpu_reference_s() -> float:
    """A fixed pure-Python loop: this machine's speed right now, to compare figures taken on other days."""
    start = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - start


def bench_build(sizes: list[int], repeats: int = 5, trees: list[Tree] | None = None) -> None:
    """Full `mkdocs build` of synthetic catalogues: the site written to disk, and to memory (tmpfs).

    This VM's disk takes 0.1 to 2 s to write the same 36 MB depending on its writeback state, so the
    build is also timed with its output in /dev/shm (the code's own cost), and the disk alone is timed
    replacing a copy of the same site with plain Python. With several `trees` (`--against`), their builds take
    turns on each catalogue, one row each. CPU s: user + system seconds of a build's processes, what a busy shared
    machine changes least.
    """
    trees = trees or [this_tree()]
    memory = Path("/dev/shm")
    in_memory = memory.is_dir() and os.access(memory, os.W_OK)
    print(f"\n## Site build (mkdocs build, flags checked against the committed snapshot; best of {repeats})")
    print(f"reference: a 10^7-step Python loop takes {_cpu_reference_s():.2f} s on this machine now")
    print(
        f"{'recipes':>8} {'code':>10} {'disk s':>7} {'median':>7} {'memory s':>9} {'median':>7}"
        f" {'disk alone s':>13} {'site MB':>8} {'ms/recipe':>10} {'CPU s':>6} {'median':>7}"
    )
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = make_catalogue(Path(tmp) / "recipes", n)
            out = Path(tmp) / "site"
            disk: dict[str, list[float]] = {label: [] for label, _ in trees}
            mem: dict[str, list[float]] = {label: [] for label, _ in trees}
            cpu: dict[str, list[float]] = {label: [] for label, _ in trees}
            for _ in range(repeats):
                for tree in trees:
                    disk[tree[0]] += _build_times(root, out, 1, tree, cpu[tree[0]])
                    if in_memory:
                        with tempfile.TemporaryDirectory(dir=memory) as shm:
                            mem[tree[0]] += _build_times(root, Path(shm) / "site", 1, tree, cpu[tree[0]])
            raw = _raw_rewrite_s(out, Path(tmp) / "copy")
            for label, _ in trees:
                d, m = disk[label], mem[label]
                best = min(m) if m else min(d)
                memory_cols = f"{min(m):>9.2f} {statistics.median(m):>7.2f}" if m else f"{'-':>9} {'-':>7}"
                print(
                    f"{n:>8} {label:>10} {min(d):>7.2f} {statistics.median(d):>7.2f} {memory_cols}"
                    f" {raw:>13.2f} {_size_mb(out):>8.1f} {1000 * best / n:>10.1f}"
                    f" {min(cpu[label]):>6.2f} {statistics.median(cpu[label]):>7.2f}",
                    flush=True,
                )


def bench_serve_edit(n: int = 100, edits: int = 5, dirty: bool = True, tree: Tree | None = None) -> None:
    """Time from a YAML edit to the new text served by `mkdocs serve` (`--dirty`, as `nox -s serve` runs it,
    or plain) with the code of `tree`, `edits` times on one catalogue."""
    tree = tree or this_tree()
    command = "mkdocs serve --dirty (nox -s serve)" if dirty else "plain mkdocs serve"
    print(f"\n## {command}: YAML edit visible ({n} recipes, {edits} edits; code: {tree[0]})")
    with tempfile.TemporaryDirectory() as tmp:
        root = make_catalogue(Path(tmp) / "recipes", n)
        port = _free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", *(["--dirty"] if dirty else []), "-a", f"127.0.0.1:{port}"],
            cwd=tree[1],
            env=tree_env(tree, _env(CATALOGUE_RECIPE_ROOTS=_roots(root))),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}/recipes/synthetic-0007/"
        try:
            _wait_for(url, "Synthetic recipe 7", 300)
            times, cpu = [], []
            for attempt in range(edits):
                recipe = root / "synthetic-0007" / "recipe.yaml"
                marker = f"Edited title {attempt}"
                text = recipe.read_text().replace(recipe.read_text().splitlines()[0], f"title: {marker}", 1)
                used = _process_cpu_s(proc.pid)
                start = time.perf_counter()
                recipe.write_text(text)
                _wait_for(url, marker, 60)
                times.append(time.perf_counter() - start)
                cpu.append(_process_cpu_s(proc.pid) - used)
                time.sleep(1)
            print("edit visible after: " + ", ".join(f"{t:.2f} s" for t in times), flush=True)
            print(
                f"min {min(times):.2f} s, median {statistics.median(times):.2f} s, max {max(times):.2f} s", flush=True
            )
            print(
                f"server CPU from edit to visible (its file watcher included): min {min(cpu):.2f} s, median "
                f"{statistics.median(cpu):.2f} s, max {max(cpu):.2f} s",
                flush=True,
            )
        finally:
            os.killpg(proc.pid, 15)
            proc.wait()


def _process_cpu_s(pid: int) -> float:
    """User + system CPU seconds a running process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
from catalogue.models.loading import load_catalogue
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
    parser.add_argument("parts", nargs="*", default=["build", "serve", "validation", "secrets", "runner", "topologies"])
    parser.add_argument("--sizes", help="catalogue sizes, comma-separated (build: 100,500,1000; serve: 100,1000)")
    parser.add_argument("--against", metavar="REV", help="build and serve: also measure this commit, in turn")
    parser.add_argument("--repeats", type=int, default=5, help="build: builds per size and commit (best and median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as unpacked:
        trees = [unpack(args.against, Path(unpacked)), this_tree()] if args.against else [this_tree()]
        for tree in trees:
            check_imports_from(tree, tree_env(tree, _env()))
        run_parts(args, trees)


def run_parts(args: argparse.Namespace, trees: list[Tree]) -> None:
    if "build" in args.parts:
        bench_build([int(s) for s in (args.sizes or "100,500,1000").split(",")], args.repeats, trees)
    if "serve" in args.parts:
        for n in (args.sizes or "100,1000").split(","):
            for tree in trees:
                bench_serve_edit(int(n), tree=tree)
                bench_serve_edit(int(n), dirty=False, tree=tree)
    if "validation" in args.parts:
        bench_validation()
    if "secrets" in args.parts:
        from benchmarks.secret_scan import bench_secret_scan

        bench_secret_scan()
    if "runner" in args.parts:
        bench_runner()
    if "topologies" in args.parts:
        from benchmarks.topologies import bench_topologies

        bench_topologies()
    if "capacity" in args.parts:
        from benchmarks.capacity import bench_capacity

        bench_capacity(_free_port())
    if "truth" in args.parts:
        from benchmarks.truth import bench_truth

        bench_truth(_free_port())
    if "nochange" in args.parts:
        from benchmarks.nochange import bench_nochange

        bench_nochange(_free_port())


if __name__ == "__main__":
    main()
