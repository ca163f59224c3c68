"""Which vLLM the flags are checked against: a given snapshot, the installed vLLM, else the newest committed one."""

from __future__ import annotations

import shutil

import pytest

from catalogue.flags import select
from catalogue.flags.checkers import LiveChecker, SnapshotChecker
from catalogue.models.errors import CatalogueError
from tests.needs import needs_vllm


def test_an_explicit_snapshot_wins(repo, monkeypatch):
    monkeypatch.setenv("CATALOGUE_FLAGS_SNAPSHOT", str(repo / "snapshots" / "vllm-0.30.0.json"))
    checker = select.upstream_checker(repo / "snapshots" / "vllm-0.31.0.json")
    assert isinstance(checker, SnapshotChecker) and checker.snapshot.vllm_version == "0.31.0"
    checker = select.upstream_checker()
    assert checker.snapshot.vllm_version == "0.30.0" and checker.source == "snapshot vllm-0.30.0.json"


def test_without_vllm_the_newest_committed_snapshot(repo, monkeypatch):
    monkeypatch.delenv("CATALOGUE_FLAGS_SNAPSHOT", raising=False)
    monkeypatch.setattr(select, "installed_vllm_version", lambda: None)
    checker = select.upstream_checker(snapshot_dir=repo / "snapshots")
    assert isinstance(checker, SnapshotChecker) and checker.snapshot.vllm_version == "0.33.0"
    assert checker.source == "committed snapshot vllm-0.33.0.json (vLLM not installed)"


def test_without_vllm_or_snapshots_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.delenv("CATALOGUE_FLAGS_SNAPSHOT", raising=False)
    monkeypatch.setattr(select, "installed_vllm_version", lambda: None)
    with pytest.raises(CatalogueError, match="no vLLM installed and no committed flag snapshot"):
        select.upstream_checker(snapshot_dir=tmp_path)


@needs_vllm
def test_with_vllm_its_own_parser(monkeypatch):
    monkeypatch.delenv("CATALOGUE_FLAGS_SNAPSHOT", raising=False)
    checker = select.upstream_checker()
    assert isinstance(checker, LiveChecker) and checker.source.startswith("installed vLLM 0.32")


def test_image_checker_only_with_a_committed_image_snapshot(repo, tmp_path):
    assert select.image_checker(None, tmp_path) is None
    assert select.image_checker("vllm-node-mxfp4", tmp_path) is None
    shutil.copy(repo / "snapshots" / "vllm-0.32.0.json", tmp_path / "vllm-node-mxfp4.json")
    checker = select.image_checker("vllm-node-mxfp4", tmp_path)
    assert isinstance(checker, SnapshotChecker) and checker.source == "image snapshot vllm-node-mxfp4.json"
