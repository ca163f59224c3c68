"""The snapshot checker on its own (no vLLM needed): the parser rebuilt from a committed snapshot."""

from __future__ import annotations

import pytest

from catalogue.flags.checkers import SnapshotChecker
from catalogue.flags.snapshot import read_snapshot


@pytest.fixture(scope="module")
def checker(repo):
    return SnapshotChecker(read_snapshot(repo / "snapshots" / "vllm-0.32.0.json"), "committed 0.32.0")


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["m", "--max-num-seqs", "8", "--enforce-eager"], None),
        (["m", "--max_num_seqs=8"], None),  # underscores, as vLLM's own parser accepts them
        (["m", "--max-num-seqz", "8"], "unrecognized arguments: --max-num-seqz"),
        (["m", "--max-num-seqs", "many"], "invalid int value: 'many'"),
        (["m", "--kv-cache-dtype", "fp9"], "invalid choice: 'fp9'"),
        (["m", "--compilation-config", '{"cudagraph_capture_sizez": [1]}'], "cudagraph_capture_sizez: unknown key"),
        (["m", "--compilation-config", "{not json"], "invalid JSON"),
        (["m", "--compilation-config", "[" * 1100 + "]" * 1100], "invalid JSON: nested more than 64 deep"),
        (["m", "--max-num-seqs"], "expected one argument"),
    ],
)
def test_verdicts(checker, argv, error):
    namespace, message = checker.parse(argv)
    if error is None:
        assert message is None and namespace is not None
    else:
        assert namespace is None and error in message


def test_parsers_are_kept_per_set_of_flag_names(checker):
    checker.parse(["m", "--max-num-seqs", "8"])
    before = len(checker._parsers)
    checker.parse(["m", "--max-num-seqs", "16"])
    assert len(checker._parsers) == before
    checker.parse(["m", "--max-model-len", "4096"])
    assert len(checker._parsers) == before + 1


def test_paired_flags_of_a_newer_release(repo):
    newer = SnapshotChecker(read_snapshot(repo / "snapshots" / "vllm-0.33.0.json"), "committed 0.33.0")
    assert newer.parse(["m", "--enable-auto-tool-choice", "--disable-prefix-caching"])[1] is None
    assert "unrecognized arguments" in newer.parse(["m", "--no-enable-prefix-caching"])[1]
