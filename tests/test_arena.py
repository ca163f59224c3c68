"""The Spark Arena profile: its values against the registry's file, a recipe's (scaled-down) ask for it, the
workload that names it, and the runner's llama-benchy command (every word; the key never on it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from catalogue.models.arena import REGISTRY_COMMIT, REGISTRY_FILE, SPARK_ARENA_V2, ArenaSetting
from catalogue.models.loading import load_entry
from catalogue.models.workload import Workload
from runner.measuring import arena, arena_corpus

REPO = Path(__file__).resolve().parents[1]
KEPT = REPO / "tests" / "data" / "sparkrun" / "recipe-registry"
TINY_SCALE = {"pp": [64], "tg": [16], "depths": [0, 128], "concurrency": [1, 2], "runs": 1}


def test_the_profile_is_the_registry_file_kept_from_that_commit():
    data = yaml.safe_load((KEPT / REGISTRY_FILE).read_text())
    args = data["args"]
    assert data["framework"] == "llama-benchy" and "v2" in data["metadata"]["description"]
    assert list(SPARK_ARENA_V2.pp) == args["pp"] and list(SPARK_ARENA_V2.tg) == args["tg"]
    assert list(SPARK_ARENA_V2.depths) == args["depth"]
    assert list(SPARK_ARENA_V2.concurrency) == args["concurrency"]
    assert SPARK_ARENA_V2.runs == args["runs"] and SPARK_ARENA_V2.prefix_caching is args["prefix_caching"]
    assert set(args) == {"depth", "pp", "tg", "concurrency", "prefix_caching", "runs"}  # a new arg: keep it here too
    # every (depth, concurrency) pair of the Arena's schedule, and no other
    pairs = {(s["depth"], s["concurrency"]) for s in data["schedule"]}
    assert pairs == {(d, c) for d in args["depth"] for c in args["concurrency"]}
    assert REGISTRY_COMMIT in (REPO / "catalogue" / "models" / "arena.py").read_text()


def test_the_whole_profile_needs_no_reason():
    setting = ArenaSetting(profile="spark-arena-v2")
    assert not setting.scaled and setting.scaling() is None and setting.values == SPARK_ARENA_V2


def test_a_scaled_profile_states_each_change_and_why():
    setting = ArenaSetting(profile="spark-arena-v2", scaled_for="the tiny model's 512-token context", **TINY_SCALE)
    assert setting.scaling() == (
        "the tiny model's 512-token context: pp 64, tg 16, depths 0/128, concurrency 1/2, 1 run"
    )
    only_runs = ArenaSetting(profile="spark-arena-v2", runs=2, scaled_for="time")
    assert only_runs.scaling() == "time: 2 runs" and only_runs.values.depths == SPARK_ARENA_V2.depths


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"pp": [4096]}, "pp may only scale the profile down: at most 2048"),
        ({"depths": [0, 200000]}, "depths may only scale the profile down"),
        ({"concurrency": [2, 1]}, "concurrency must be ascending without repeats"),
        ({"runs": 5}, "runs may only scale the profile down: at most 3"),
        ({"runs": 1}, "a scaled-down profile needs scaled_for"),
        ({"scaled_for": "nothing"}, "scaled_for is set but every value is the profile's own"),
        ({"profile": "spark-arena-v9"}, "Input should be 'spark-arena-v2'"),
        ({"pp": [64], "scaled_for": "x", "ignore_eos": True}, "Extra inputs are not permitted"),
        ({"exact_tg": True}, "a scaled-down profile needs scaled_for"),
    ],
)
def test_a_setting_that_is_not_a_scaled_down_profile_is_refused(fields, message):
    with pytest.raises(ValidationError, match=message):
        ArenaSetting(**{"profile": "spark-arena-v2", **fields})


def test_the_workload_names_the_profile_and_never_compares_with_plain_llama_benchy():
    common = {"tool": "llama-benchy", "tool_version": "0.4.0", "input_len": 64, "output_len": 16, "repetitions": 1}
    scaled = Workload(**common, profile="spark-arena-v2", profile_scaling="the tiny model: pp 64 (not 2048)")
    assert scaled.describe() == (
        "llama-benchy 0.4.0 · Spark Arena v2 profile, scaled down for the tiny model: pp 64 (not 2048) · "
        "prompt 64 / output 16 tokens"
    )
    whole = Workload(**common, profile="spark-arena-v2")
    assert "· Spark Arena v2 profile ·" in whole.describe() and "scaled" not in whole.describe()
    assert whole.key == scaled.key != Workload(**common).key
    assert Workload(**common).differences(whole) == ["profile: not stated vs spark-arena-v2"]


def test_the_llama_benchy_command_word_by_word_without_the_key(tmp_path):
    recipe = load_entry(REPO / "examples" / "tiny-cpu").recipe
    setting = ArenaSetting(profile="spark-arena-v2", scaled_for="tiny", **TINY_SCALE)
    report = tmp_path / "arena.json"
    argv = arena.arena_argv(
        "/venv/bin/llama-benchy", "http://127.0.0.1:8123", recipe, "tiny", "/m", setting,
        "http://127.0.0.1:5/book.txt", report,
    )  # fmt: skip
    assert argv == [
        "/venv/bin/llama-benchy", "--base-url", "http://127.0.0.1:8123/v1", "--model", "catalogue/tiny-llama-cpu",
        "--served-model-name", "tiny", "--tokenizer", "/m", "--pp", "64", "--tg", "16", "--depth", "0", "128",
        "--concurrency", "1", "2", "--runs", "1", "--enable-prefix-caching", "--book-url",
        "http://127.0.0.1:5/book.txt", "--skip-coherence", "--format", "json", "--save-result", str(report),
    ]  # fmt: skip
    key = "sk-" + "0123456789abcdef" * 2
    kept = arena.recorded(argv, key)
    assert kept[0] == "llama-benchy" and kept[-2:] == ["--api-key", "sk-********"] and key not in " ".join(kept)
    assert "--api-key" not in argv and key not in arena.LAUNCHER


def test_the_launcher_adds_the_key_inside_the_process(tmp_path):
    """The launcher runs an entry script with the key from the environment appended to its sys.argv."""
    import subprocess
    import sys

    script = tmp_path / "tool"
    script.write_text("import sys, os\nprint(sys.argv[1:], os.environ.get('LLAMA_BENCHY_API_KEY'))\n")
    out = subprocess.run(
        [sys.executable, "-c", arena.LAUNCHER, str(script), "--pp", "64"],
        env={arena.KEY_VARIABLE: "sk-secret"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "['--pp', '64', '--api-key', 'sk-secret'] None"  # the key left the environment


def test_the_interpreter_is_the_entry_scripts_python(tmp_path):
    script = tmp_path / "llama-benchy"
    script.write_text("#!/opt/venv/bin/python3\nfrom llama_benchy.__main__ import main\n")
    assert arena.interpreter(str(script)) == "/opt/venv/bin/python3"
    script.write_text('#!/bin/sh\nexec uvx llama-benchy "$@"\n')
    assert arena.interpreter(str(script)) is None


def test_the_corpus_is_fixed_text():
    text = arena_corpus.corpus_text()
    assert text == arena_corpus.corpus_text() and len(text.split()) >= 59_000


def test_a_forced_output_length_is_stated_and_never_compares_with_the_arenas_own(tmp_path):
    setting = ArenaSetting(profile="spark-arena-v2", exact_tg=True, scaled_for="random weights")
    assert setting.scaling() == "random weights: answers forced to tg tokens (--exact-tg)"
    recipe = load_entry(REPO / "examples" / "tiny-cpu").recipe
    argv = arena.arena_argv("b", "http://h:1", recipe, "tiny", "/m", setting, "http://u", tmp_path / "r.json")
    assert argv[argv.index("--enable-prefix-caching") + 1] == "--exact-tg"
