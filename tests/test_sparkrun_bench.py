"""A sparkrun benchmark block -> the sweep: llama-benchy's levels map, everything else is one line naming the field."""

from __future__ import annotations

from catalogue.commands.new import DEFAULT_SWEEP
from catalogue.paste.sparkrun_bench import benchmark_sweep, block_args


def test_levels_and_lengths_map_and_the_rest_is_named():
    block = {"framework": "llama-benchy", "args": {"pp": [512, 2048], "tg": 64, "concurrency": [4, 1, 4]}, "depth": 0}
    sweep, lines = benchmark_sweep(block, DEFAULT_SWEEP)
    assert (sweep["concurrency"], sweep["input_len"], sweep["output_len"]) == ([1, 4], 512, 64)
    assert lines == ["benchmark.args.pp: [512, 2048]: the sweep has one input_len; it takes 512"]
    assert DEFAULT_SWEEP["input_len"] == 1024  # the default is not changed in place


def test_flat_keys_are_arguments_as_sparkrun_sweeps_them():
    assert block_args({"framework": "llama-benchy", "pp": [1], "args": {"tg": [2]}, "timeout": 5}) == {
        "tg": [2],
        "pp": [1],
    }


def test_another_framework_or_bad_values_leave_the_default():
    sweep, lines = benchmark_sweep({"framework": "guidellm", "args": {"concurrency": [3]}}, DEFAULT_SWEEP)
    assert sweep == DEFAULT_SWEEP and lines == [
        "benchmark.framework: guidellm: only llama-benchy's levels map; the sweep is the default"
    ]
    sweep, lines = benchmark_sweep({"args": {"concurrency": ["x"], "tg": [0]}, "category": "tools"}, DEFAULT_SWEEP)
    assert sweep == DEFAULT_SWEEP
    assert lines == [
        "benchmark.args.concurrency: ['x'] is not a list of levels: left out",
        "benchmark.args.tg: [0] is not a token count: the sweep keeps 128",
        "benchmark.category: sparkrun's own setting: the runner has no counterpart (left out)",
    ]
