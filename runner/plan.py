"""What a refresh will run: server command, per-level bench commands, where results go."""

from __future__ import annotations

import datetime as dt
import os
import shlex
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from catalogue.benchmark import RUN_STAMP_FORMAT
from catalogue.launch import bench_argv, docker_argv, serve_argv, shell_command
from catalogue.loading import RUNS_DIR, Entry


@dataclass(frozen=True)
class Plan:
    """Everything a refresh needs, decided before anything starts."""

    recipe_id: str
    folder: Path
    stamp: str
    serve: list[str]
    env: dict[str, str]
    container: str | None
    base_url: str
    health_timeout_s: int
    levels: list[int]
    bench: dict[int, list[str]] = field(default_factory=dict)

    @property
    def run_file(self) -> Path:
        return self.folder / RUNS_DIR / f"{self.stamp}.json"

    @property
    def raw_dir(self) -> Path:
        return self.folder / RUNS_DIR / self.stamp


def now_stamp() -> str:
    """The UTC time as a run stamp."""
    return dt.datetime.now(dt.timezone.utc).strftime(RUN_STAMP_FORMAT)


def make_plan(entry: Entry, *, local: bool, port: int | None = None, stamp: str | None = None) -> Plan:
    """The plan for one recipe; `local` runs `vllm serve` as a process instead of `docker run`."""
    recipe = entry.recipe
    flags = dict(recipe.serving.flags)
    if port is not None:
        flags["port"] = port
    model_path = recipe.serving.model_path
    if model_path and (entry.folder / model_path).exists():
        model_path = str((entry.folder / model_path).resolve())
    serving = recipe.serving.model_copy(update={"flags": flags, "model_path": model_path})
    recipe = recipe.model_copy(update={"serving": serving})
    port = int(flags.get("port", 8000))
    host = str(flags.get("host", "127.0.0.1"))
    host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    base_url = f"http://{host}:{port}"
    container = None
    if recipe.serving.image is not None and not local:
        container = (recipe.serving.container.name if recipe.serving.container else None) or f"catalogue-{entry.id}"
        serve = docker_argv(recipe)
        if "--name" not in serve:
            serve[2:2] = ["--name", container]
        serve = [w for w in serve if w != "-d"]
    else:
        serve = serve_argv(recipe)
    levels = list(recipe.sweep.concurrency)
    bench = {c: bench_argv(recipe, c, base_url) for c in levels}
    return Plan(entry.id, entry.folder, stamp or now_stamp(), serve, dict(recipe.serving.env), container, base_url,
                recipe.sweep.health_timeout_s, levels, bench)


def with_results(plan: Plan) -> Plan:
    """Add `--save-result` options so each level's raw JSON lands in the run's raw folder."""
    bench = {
        c: [*argv, "--save-result", "--result-dir", str(plan.raw_dir), "--result-filename", f"c{c}.json",
            "--metadata", f"recipe={plan.recipe_id}", f"run={plan.stamp}"]
        for c, argv in plan.bench.items()
    }
    return replace(plan, bench=bench)


def snapshot_argv(plan: Plan) -> list[str]:
    """`catalogue flags dump` in the server's environment: this venv, or the recipe's image with the repo mounted."""
    out = plan.raw_dir / "flags.json"
    if not plan.container:
        return [sys.executable, "-m", "catalogue", "flags", "dump", "--out", str(out)]
    repo = Path(__file__).resolve().parents[1]
    image = plan.serve[plan.serve.index("vllm") - 1]
    return ["docker", "run", "--rm", "--entrypoint", "python3", "-v", f"{repo}:/catalogue:ro", "-v", f"{out.parent.resolve()}:/out",
            "-w", "/catalogue", "-e", "PYTHONPATH=/catalogue", image, "-m", "catalogue", "flags", "dump", "--image", image,
            "--out", "/out/flags.json"]


def describe(plan: Plan) -> str:
    """The dry-run text: every command that would run, in order."""
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in plan.env.items())
    lines = [
        f"recipe {plan.recipe_id}: run {plan.stamp} -> {os.path.relpath(plan.run_file)}",
        f"server ({'docker container ' + plan.container if plan.container else 'local process'}), "
        f"healthy within {plan.health_timeout_s} s at {plan.base_url}/health:",
    ]
    if env and not plan.container:
        lines.append(f"  environment: {env}")
    lines += ["", shell_command(plan.serve), ""]
    for c in plan.levels:
        lines += [f"level c={c}:", shell_command(plan.bench[c]), ""]
    lines += ["flag snapshot of the server's vLLM (while it boots):", shell_command(snapshot_argv(plan)), ""]
    return "\n".join(lines)
