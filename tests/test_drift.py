"""Drift across vLLM releases: every recipe against every committed release snapshot (no vLLM needed)."""

from __future__ import annotations

import yaml

from catalogue.commands.cli import main
from catalogue.flags.drift import accepted_by, drift_row, release_checker, release_checkers, release_snapshots
from catalogue.flags.snapshot import version_key
from catalogue.models.loading import load_entry


def with_flags(recipe_copy, flags: dict):
    root, folder = recipe_copy()
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["serving"]["flags"].update(flags)
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root, load_entry(folder)


def by_version(row):
    return {cell.short_version: cell for cell in row}


def test_at_least_four_releases_are_committed_in_order(repo):
    versions = [p.stem.removeprefix("vllm-") for p in release_snapshots(repo / "snapshots")]
    assert len(versions) >= 4 and versions == sorted(versions, key=version_key)
    assert [c.snapshot.vllm_version for c in release_checkers(repo / "snapshots")] == versions


def test_seed_recipes_are_accepted_by_every_release(repo, entries):
    checkers = release_checkers(repo / "snapshots")
    for entry in entries.values():
        row = drift_row(entry, checkers)
        assert all(cell.accepted for cell in row), (entry.id, [c.problems for c in row])
        assert len(accepted_by(row)) == len(checkers)


def test_a_renamed_flag_is_refused_by_the_release_that_renamed_it(repo, recipe_copy):
    # 0.33 turned the boolean pairs --enable-X/--no-enable-X into --enable-X/--disable-X
    _, entry = with_flags(recipe_copy, {"no-enable-prefix-caching": True})
    cells = by_version(drift_row(entry, release_checkers(repo / "snapshots")))
    assert cells["0.32"].accepted and cells["0.29"].accepted
    assert not cells["0.33"].accepted
    assert cells["0.33"].problems == ("--no-enable-prefix-caching renamed to --disable-prefix-caching",)
    assert "0.33" not in accepted_by(list(cells.values()))


def test_a_flag_newer_than_a_release_and_one_removed(repo, recipe_copy):
    checkers = release_checkers(repo / "snapshots")
    _, entry = with_flags(recipe_copy, {"grpc-port": 50051})
    cells = by_version(drift_row(entry, checkers))
    assert not cells["0.29"].accepted and cells["0.29"].problems == ("--grpc-port not yet in this release",)
    assert cells["0.33"].accepted
    _, entry = with_flags(recipe_copy, {"enable-bf16x3-router-gemm": True})
    cells = by_version(drift_row(entry, checkers))
    assert cells["0.29"].accepted and cells["0.33"].problems == ("--enable-bf16x3-router-gemm removed",)


def test_a_bad_value_is_reported_per_release(repo, recipe_copy):
    _, entry = with_flags(recipe_copy, {"max-num-seqs": "many"})
    row = drift_row(entry, release_checkers(repo / "snapshots"))
    assert not any(cell.accepted for cell in row)
    assert all(cell.problems[0].startswith("--max-num-seqs: invalid int value") for cell in row)


def test_release_checker_by_short_or_full_version(repo):
    assert release_checker("0.31", repo / "snapshots").snapshot.vllm_version == "0.31.0"
    assert release_checker("0.31.0", repo / "snapshots").snapshot.vllm_version == "0.31.0"


def test_validate_against_one_release_and_all(repo, recipe_copy, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    root, _ = with_flags(recipe_copy, {"no-enable-prefix-caching": True})
    assert main(["--root", str(root), "validate", "--vllm", "0.32"]) == 0
    assert "flags checked against snapshot vllm-0.32.0.json" in capsys.readouterr().out
    assert main(["--root", str(root), "validate", "--vllm", "0.33"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--no-enable-prefix-caching: unknown flag" in err[0]
    assert main(["--root", str(root), "validate", "--vllm", "all"]) == 0
    out = capsys.readouterr().out
    assert "gptoss-120b: 0.29 ok 0.30 ok 0.31 ok 0.32 ok 0.33 REFUSED" in out
    assert "vLLM 0.33: --no-enable-prefix-caching renamed to --disable-prefix-caching" in out
    assert main(["--root", str(root), "validate", "--vllm", "0.28"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no committed flag snapshot for vLLM 0.28" in err[0]


def test_shared_verdicts_equal_a_full_check_of_every_release(repo, entries, recipe_copy):
    """Releases whose options agree on a recipe's flag values share one verdict: the one a full check gives."""
    from catalogue.flags.validate import flag_errors

    checkers = release_checkers(repo / "snapshots")
    _, bad = with_flags(recipe_copy, {"kv-cache-dtype": "fp9", "attention-backend": "FLASH_ATTN"})
    for entry in [*entries.values(), bad]:
        for cell, checker in zip(drift_row(entry, checkers), checkers):
            assert cell.accepted == (not flag_errors(entry, checker)), (entry.id, cell.version)
