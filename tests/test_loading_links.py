"""A recipe folder, a runs folder or a run file that is a symlink is refused, with one line naming it, by every
command that reads recipes (validate, export, stale, reproduce, refresh, import)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from catalogue.commands.cli import main

REPO = Path(__file__).resolve().parents[1]
RECIPE = "gptoss-120b"


def _catalogue(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes" / RECIPE, tmp_path / "elsewhere" / RECIPE)
    root.mkdir()
    return root, tmp_path / "elsewhere" / RECIPE


def folder_link(tmp_path: Path) -> tuple[Path, Path]:
    root, real = _catalogue(tmp_path)
    (root / RECIPE).symlink_to(real, target_is_directory=True)
    return root, root / RECIPE


def runs_link(tmp_path: Path) -> tuple[Path, Path]:
    root, real = _catalogue(tmp_path)
    shutil.move(real, root / RECIPE)
    runs = root / RECIPE / "runs"
    shutil.move(runs, tmp_path / "runs-elsewhere")
    runs.symlink_to(tmp_path / "runs-elsewhere", target_is_directory=True)
    return root, runs


def run_file_link(tmp_path: Path) -> tuple[Path, Path]:
    root, real = _catalogue(tmp_path)
    shutil.move(real, root / RECIPE)
    run = sorted((root / RECIPE / "runs").glob("*.json"))[0]
    shutil.move(run, tmp_path / run.name)
    run.symlink_to(tmp_path / run.name)
    return root, run


COMMANDS = {
    "validate": ["validate", "--no-flags"],
    "export": ["export", "OUT"],
    "stale": ["stale", "--days", "0"],
    "reproduce": ["reproduce", RECIPE],
    "refresh": ["refresh", RECIPE, "--dry-run"],
    "import": ["import", RECIPE, "NOFILE.json"],
}


@pytest.mark.parametrize("make", [folder_link, runs_link, run_file_link])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_linked_folder_or_run_file_is_refused_by_every_command(make, command, tmp_path, capsys):
    root, link = make(tmp_path)
    out = tmp_path / "out"
    words = [str(out) if w == "OUT" else str(tmp_path / w) if w == "NOFILE.json" else w for w in COMMANDS[command]]
    code = main(["--root", str(root), *words])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert err[-1:] == [f"error: {link}: a symlink (to {link.readlink()}): a recipe folder holds plain files"], err
    assert not out.exists()


@pytest.mark.parametrize("kind", ["link to a file", "FIFO"])
def test_validate_reads_no_recipe_file_through_a_link_or_from_a_fifo(kind, tmp_path, capsys):
    """validate's secret scan reads every recipe.yaml first: a linked one (to an owner's file) or a FIFO (which
    would hang the read) is one line naming it, its bytes never read."""
    import os

    root, real = _catalogue(tmp_path)
    shutil.move(real, root / RECIPE)
    recipe = root / RECIPE / "recipe.yaml"
    recipe.unlink()
    if kind == "FIFO":
        os.mkfifo(recipe)
    else:
        owner = tmp_path / "owner-notes.txt"
        owner.write_text("HF_TOKEN=hf_OwnerFileSecretsLinkedAbcdefgh012345\n")
        recipe.symlink_to(owner)
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err
    want = "a symbolic link" if kind != "FIFO" else "not a regular file"
    assert f"{recipe}: " in err and want in err, err
    assert "hf_" not in err
