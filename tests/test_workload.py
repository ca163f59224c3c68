"""The workload key: what makes two runs comparable."""

from __future__ import annotations

from catalogue.models.workload import Workload

BENCHY = {
    "tool": "llama-benchy",
    "tool_version": "0.3.5",
    "dataset": "llama-benchy's generated prompts",
    "input_len": 1024,
    "output_len": 128,
    "repetitions": 50,
}


def test_key_ignores_tool_version_and_case():
    assert Workload(**BENCHY).key == Workload(**{**BENCHY, "tool": "Llama-Benchy", "tool_version": "0.3.6"}).key


def test_every_other_field_is_part_of_the_key():
    base = Workload(**BENCHY)
    for change in (
        {"input_len": 2048},
        {"output_len": 256},
        {"context_depth": 4096},
        {"repetitions": 5},
        {"dataset": "sharegpt"},
        {"prompts_per_level": "64"},
        {"tool": "vllm bench serve"},
        {"profile": "spark-arena-v2"},
    ):
        assert Workload(**{**BENCHY, **change}).key != base.key, change


def test_differences_name_each_field_in_words():
    ours, theirs = Workload(**BENCHY), Workload(**{**BENCHY, "input_len": 2048, "repetitions": None})
    assert ours.differences(theirs) == ["input length: 1024 vs 2048", "repetitions: 50 vs not stated"]
    assert ours.differences(ours) == []


def test_known_needs_prompts_and_both_lengths():
    assert Workload(**BENCHY).known
    assert not Workload(tool="gpt_oss_benchmark.py").known
    assert not Workload(**{**BENCHY, "output_len": None}).known


def test_describe():
    assert Workload(**BENCHY).describe() == (
        "llama-benchy 0.3.5 · llama-benchy's generated prompts · prompt 1,024 / output 128 tokens"
        " · 50 repetitions per level"
    )
    assert (
        Workload(tool="gpt_oss_benchmark.py").describe()
        == "gpt_oss_benchmark.py · prompt and output lengths not stated"
    )
    one_length = Workload(tool="scripts/benchmark.sh", output_len=200).describe()
    assert one_length == "scripts/benchmark.sh · output 200 tokens (prompt length not stated)"
    assert "prompt 1,024 tokens (output length not stated)" in Workload(**{**BENCHY, "output_len": None}).describe()
