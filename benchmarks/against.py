"""`--against REV`: the same figures of another commit, measured in the same run on the same synthetic catalogue.

The commit's tree is unpacked with `git archive` into a temporary folder; each build or server of it runs there with
that folder first on PYTHONPATH, so its `catalogue` package and MkDocs hooks are the ones imported."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

from benchmarks.synthetic import REPO

Tree = tuple[str, Path]
"""A label and the root of a source tree."""


def this_tree() -> Tree:
    return ("this tree", REPO)


def unpack(rev: str, into: Path) -> Tree:
    """The tree of commit `rev` unpacked under `into`, labelled with its short hash."""
    short = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", rev], capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev], capture_output=True, check=True)
    folder = into / short
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return (short, folder)


def check_imports_from(tree: Tree, env: dict[str, str]) -> None:
    """Fail unless a Python started with `env` imports `catalogue` from the tree (not from an installed copy)."""
    found = subprocess.run(
        [sys.executable, "-c", "import catalogue; print(catalogue.__file__)"],
        cwd=tree[1],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to(tree[1].resolve()):
        raise SystemExit(f"{tree[0]}: catalogue imported from {found}, not from {tree[1]}")


def tree_env(tree: Tree, base: dict[str, str]) -> dict[str, str]:
    """`base` with the tree first on PYTHONPATH."""
    return {**base, "PYTHONPATH": os.pathsep.join([str(tree[1]), *filter(None, [base.get("PYTHONPATH")])])}
