"""The run policy's flag classes: every free-text flag of every committed vLLM snapshot has one, names are read
as vLLM's own parser reads them, and the data file names only real flags and keys."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from catalogue.flags.snapshot import installed_vllm_version
from catalogue.models.errors import CatalogueError
from catalogue.policy import flag_classes as policy_flag_classes
from catalogue.policy.flag_classes import (
    FLAG_CLASSES,
    KEY_CLASSES,
    canonical,
    checked_options,
    classes_file,
    config_table,
    flag_class,
    is_typed,
    key_class,
    named_values,
    resolve,
    snapshot_files,
    snapshot_options,
    unclassed,
)

REPO = Path(__file__).resolve().parents[1]
SNAPSHOTS = sorted((REPO / "snapshots").glob("vllm-*.json"))


CACHED = ("snapshot_files", "snapshot_options", "resolve", "classes_file", "flag_classes")


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def read_afresh():
    """Each test reads the snapshots and flags.yaml itself (the module keeps them per process)."""
    for name in CACHED:
        getattr(policy_flag_classes, name).cache_clear()
    yield
    for name in CACHED:
        getattr(policy_flag_classes, name).cache_clear()


@pytest.mark.parametrize("path", SNAPSHOTS, ids=[p.stem for p in SNAPSHOTS])
def test_every_free_text_flag_and_json_key_of_a_committed_snapshot_has_a_class(path):
    assert unclassed(read(path)) == [], f"classify these in catalogue/policy/flags.yaml ({path.name})"


def test_a_new_release_with_an_unclassed_flag_or_key_fails_the_check():
    snapshot = copy.deepcopy(read(SNAPSHOTS[-1]))
    new = {**snapshot["options"][0], "spellings": ["--frobnicator-module"], "dest": "frobnicator_module"}
    snapshot["options"].append({**new, "action": "store", "type": "str", "nargs": None, "choices": None})
    config = next(o for o in snapshot["options"] if o["spellings"][0] == "--compilation-config")
    config["json_keys"] = [*config["json_keys"], "post_grad_pass_module"]
    assert unclassed(snapshot) == ["--compilation-config post_grad_pass_module", "--frobnicator-module"]


def test_the_data_file_names_real_flags_and_sorts_each_into_one_class():
    data = classes_file()
    options = snapshot_options()
    seen: dict[str, str] = {}
    for cls, names in data["flags"].items():
        assert cls in FLAG_CLASSES
        for name in names:
            assert name in options and canonical(options[name][0]) == name, f"--{name} is no vLLM flag's name"
            assert not all(is_typed(o) for o in options[name]), f"--{name} is typed data in every snapshot"
            assert name not in seen, f"--{name} is in {seen.get(name)} and {cls}"
            seen[name] = cls
    for names in data["image_flags"].values():
        assert not set(names) & set(options), "an image-only flag that upstream vLLM has"
    configs = set(data["flags"]["config"])
    assert set(data["configs"]) <= configs
    for name, table in data["configs"].items():
        for cls in set(table) - {"when", "keys"}:
            assert cls in KEY_CLASSES, (name, cls)


def test_typed_flags_are_data_and_free_text_has_its_class():
    assert flag_class("max-model-len") == "data"  # int in every snapshot
    assert flag_class("enable-prefix-caching") == "data"  # a switch
    assert flag_class("kv-cache-dtype") == "data"  # choices until 0.32, free text (listed as data) in 0.33
    assert flag_class("worker-cls") == "loads-code"
    assert flag_class("kv-events-config") == "config"
    assert flag_class("no-such-flag") is None


def test_names_resolve_as_the_parser_reads_them():
    assert resolve("tool_parser_plugin").name == "tool-parser-plugin"
    assert resolve("tool-parser-plug").name == "tool-parser-plugin"
    assert resolve("model").name == "model"  # exact before prefix (model-impl, model-loader-extra-config)
    assert resolve("no-enable-prefix-caching").name == "enable-prefix-caching"
    dotted = resolve("compilation_config.pass-config.fuse_norm_quant")
    assert (dotted.name, dotted.keys) == ("compilation-config", ("pass_config", "fuse_norm_quant"))
    ambiguous = resolve("enable-p")
    assert ambiguous.name is None and {"enable-prefix-caching", "enable-prompt-embeds"} <= set(ambiguous.ambiguous)
    assert resolve("mxfp4-layers").name == "mxfp4-layers"  # no committed vLLM has it: an image's own flag


@pytest.mark.vllm
def test_vllms_own_parser_reads_the_spellings_the_same_way():
    if installed_vllm_version() is None:
        pytest.skip("vLLM is not installed; run through `nox -s tests`")
    from catalogue.flags.extract import live_checker

    checker = live_checker()
    for spelling in ("tool_parser_plugin", "tool-parser-plug", "tool_parser_plug", "worker_cls"):
        namespace, message = checker.parse(["m", f"--{spelling}", "/x.py"])
        assert message is None and namespace is not None, (spelling, message)
        dest = resolve(spelling).name
        assert dest is not None and getattr(namespace, dest.replace("-", "_")) == "/x.py", spelling
    _, message = checker.parse(["m", "--enable-p"])
    assert message is not None and "ambiguous" in message


def test_an_executor_backend_is_data_only_by_its_name():
    from catalogue.policy.check import check_launch

    for name in ("ray", "mp", "uni", "external_launcher"):
        assert check_launch([], {}, {"distributed-executor-backend": name}, "img:1", None, source="x") == []
    found = check_launch([], {}, {"distributed_executor_backend": "evil.Ex"}, "img:1", None, source="x")
    assert [(f.cls, f.option) for f in found] == [("never", "--distributed-executor-backend evil.Ex")]


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)
"""A YAML alias bomb of about 400 bytes: nine to the ninth strings when expanded."""


@pytest.mark.parametrize("content", [None, BOMB])
def test_validate_never_opens_a_config_file(content, recipe_copy, capsys, tmp_path, vllm_installed):
    """--config is refused by the policy and left out of what vLLM's parser reads: a missing file or an alias bomb
    at that path gives the one policy line, at once."""
    import time

    from catalogue.commands.cli import main
    from tests.corpus_edits import flag

    root, folder = recipe_copy()
    path = tmp_path / "more.yaml"
    if content is not None:
        path.write_text(content)
    flag("config", str(path))(folder)
    start = time.monotonic()
    assert main(["--root", str(root), "validate"]) == 1
    assert time.monotonic() - start < 30
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if "--config" in line] == [
        line for line in err.splitlines() if ": never: --config: a YAML file of more flags" in line
    ]
    assert ": never: --config: " in err


def option_of(snapshot: dict, dest: str) -> dict:
    return next(o for o in snapshot["options"] if o["dest"] == dest)


@pytest.mark.parametrize(
    ("forge", "field"),
    [
        ({"dest": "revision", "spellings": ["--revision", "--tool-parser-plugin"]}, "spellings"),  # an alias
        ({"dest": "revision", "spellings": ["--tool-parser-plugin"]}, "dest"),  # the code flag renamed
        ({"dest": "tool_parser_plugin", "spellings": ["--chat-template-x", "--tool-parser-plugin"]}, "dest"),
        ({"dest": "enable_x", "spellings": ["--enable-x", "--tool-parser-plugin"], "nargs": 0}, "spellings"),
    ],
)
def test_a_snapshot_that_spells_a_flag_as_another_is_refused_in_one_line(forge, field, tmp_path):
    from catalogue.models.errors import CatalogueError
    from catalogue.policy.flag_classes import checked_options

    snapshot = copy.deepcopy(read(SNAPSHOTS[-1]))
    at = next(i for i, o in enumerate(snapshot["options"]) if o["dest"] == "revision")
    snapshot["options"][at] |= forge
    with pytest.raises(CatalogueError, match=rf"vllm-9\.json: options\[{at}\]\.{field}: "):
        checked_options(tmp_path / "vllm-9.json", snapshot["options"])


def test_every_committed_snapshot_passes_the_spelling_check():
    from catalogue.policy.flag_classes import snapshot_files

    assert [path.name for path, _ in snapshot_files()] == [p.name for p in SNAPSHOTS]


@pytest.fixture
def forged_release(tmp_path, monkeypatch):
    """The committed snapshots and one more, as a pull request could add it; the policy's caches read them anew."""
    from catalogue.policy import flag_classes

    for path in SNAPSHOTS:
        (tmp_path / path.name).write_text(path.read_text())
    monkeypatch.setattr(flag_classes, "SNAPSHOTS", tmp_path)
    cached = (flag_classes.snapshot_files, flag_classes.snapshot_options, flag_classes.resolve)

    def forge(options: list[dict]) -> None:
        snapshot = copy.deepcopy(read(SNAPSHOTS[-1]))
        snapshot["options"] += options
        (tmp_path / "vllm-9.0.0.json").write_text(json.dumps(snapshot))
        for function in cached:
            function.cache_clear()

    yield forge
    for function in cached:
        function.cache_clear()


def test_a_new_flag_that_is_an_abbreviation_elsewhere_is_ambiguous(forged_release):
    """A forged release adds a switch `--tool-parser-plug`: every real release reads that word as
    `--tool-parser-plugin` (an abbreviation), so the name is not data: it means a code-loading flag somewhere."""
    switch = {**option_of(read(SNAPSHOTS[-1]), "enforce_eager"), "dest": "tool_parser_plug"}
    forged_release([{**switch, "spellings": ["--tool-parser-plug"]}])
    found = resolve("tool-parser-plug")
    assert found.name is None and found.ambiguous == ("tool-parser-plug", "tool-parser-plugin")


def test_a_listed_flag_stays_in_its_class_whatever_a_snapshot_says_of_its_type(forged_release):
    """A release whose snapshot calls `--tool-parser-plugin` a switch (the only release left, as when old ones are
    dropped) does not make it data: flags.yaml's class comes first."""
    from catalogue.policy import flag_classes

    typed = {**option_of(read(SNAPSHOTS[-1]), "tool_parser_plugin"), "nargs": 0, "type": None}
    forged_release([])
    snapshot = read(flag_classes.SNAPSHOTS / "vllm-9.0.0.json")
    snapshot["options"] = [typed if o["dest"] == "tool_parser_plugin" else o for o in snapshot["options"]]
    for path in SNAPSHOTS:
        (flag_classes.SNAPSHOTS / path.name).unlink()
    (flag_classes.SNAPSHOTS / "vllm-9.0.0.json").write_text(json.dumps(snapshot))
    flag_classes.snapshot_files.cache_clear()
    flag_classes.snapshot_options.cache_clear()
    assert flag_class("tool-parser-plugin") == "loads-code"


def test_a_spelling_that_names_another_flag_in_another_release_is_refused(forged_release):
    """A short spelling is not checked against the dest, so each release must give it the same flag."""
    other = {**option_of(read(SNAPSHOTS[-1]), "enforce_eager"), "dest": "frob", "spellings": ["--frob", "-asc"]}
    forged_release([other])
    with pytest.raises(CatalogueError) as caught:
        snapshot_files()
    assert str(caught.value).endswith(
        "vllm-9.0.0.json: options: -asc is frob here and api_server_count in vllm-0.29.0.json: a spelling names "
        "one flag in every release"
    )


def test_the_spelling_checks_say_what_is_wrong(tmp_path):
    snapshot = read(SNAPSHOTS[-1])
    switch = {**option_of(snapshot, "enforce_eager"), "dest": "enable_x", "nargs": 0}
    path = tmp_path / "vllm-9.json"
    negatives = ["--enable-x", "--no-enable-x", "--disable-x", "--no-disable-x"]
    assert checked_options(path, [{**switch, "spellings": negatives}]) == ({**switch, "spellings": negatives},)
    length = option_of(snapshot, "max_model_len")
    spelt = {**length, "spellings": ["--max_model_len", "--max-model-len"]}  # the same name, either way
    assert checked_options(path, [spelt]) == (spelt,)
    alias = option_of(snapshot, "gpu_memory_utilization")
    assert checked_options(path, [alias]) == (alias,)  # the alias flags.yaml lists
    cases = [
        (
            {**switch, "spellings": ["--enable-x", "--disable-y"]},
            "options[0].spellings: --disable-y is spelt as another name of --enable-x, which flags.yaml does not list "
            "(aliases:)",
        ),
        (
            {**switch, "nargs": None, "spellings": ["--enable-x", "--disable-x"]},
            "options[0].spellings: --disable-x is spelt as another name of --enable-x",
        ),
        (
            {**switch, "dest": "x", "spellings": ["-x"]},
            "options[0].dest: dest 'x' is not the name of its first long spelling (none): the policy classes a flag "
            "by vLLM's own name",
        ),
        (
            {**switch, "dest": "x", "spellings": ["--y", "--x"]},
            "options[0].dest: dest 'x' is not the name of its first long spelling (y)",
        ),
    ]
    for option, message in cases:
        with pytest.raises(CatalogueError) as caught:
            checked_options(path, [option])
        assert str(caught.value).startswith(f"{path}: {message}")


def test_a_class_the_policy_does_not_have_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "flags.yaml"
    bad.write_text("flags:\n  data: [model]\n  frobs: [tokenizer]\nimage_flags: {}\n")
    monkeypatch.setattr(policy_flag_classes, "CLASSES_FILE", bad)
    with pytest.raises(ValueError) as caught:
        policy_flag_classes.flag_classes()
    assert str(caught.value) == (
        f"{bad}: flags.frobs: not a class (never, loads-code, sends-data, serves-files, reads-path, writes-path, "
        "data, config)"
    )
    good = tmp_path / "good.yaml"
    good.write_text("flags:\n  data: [model]\nimage_flags:\n  loads-code: [frob-plugin]\n")
    monkeypatch.setattr(policy_flag_classes, "CLASSES_FILE", good)
    policy_flag_classes.classes_file.cache_clear()
    policy_flag_classes.flag_classes.cache_clear()
    assert policy_flag_classes.flag_classes() == {"model": "data", "frob-plugin": "loads-code"}


def test_canonical_and_is_typed():
    assert canonical({"dest": "tool_parser_plugin"}) == "tool-parser-plugin"
    base = {"nargs": None, "choices": None, "type": "str"}
    assert not is_typed(base)
    assert not is_typed({**base, "choices": []})
    assert is_typed({**base, "nargs": 0})
    assert is_typed({**base, "choices": ["a"]})
    assert all(is_typed({**base, "type": t}) for t in ("int", "float", "human_readable_int"))
    assert not is_typed({**base, "type": "json"})


def test_snapshot_options_holds_every_release_under_long_spellings_only():
    found = snapshot_options()
    assert len(found["max-model-len"]) == len(SNAPSHOTS)
    assert "device-memory-utilization" in found and "asc" not in found and "-asc" not in found
    assert {o["dest"] for o in found["disable-prefix-caching"]} == {"enable_prefix_caching"}  # a switch's negative


def test_a_release_that_makes_a_typed_flag_free_text_takes_its_data_class_away(forged_release):
    free = {**option_of(read(SNAPSHOTS[-1]), "max_model_len"), "type": "str", "dest": "max_model_len"}
    forged_release([])
    snapshot = read(policy_flag_classes.SNAPSHOTS / "vllm-9.0.0.json")
    snapshot["options"] = [free if o["dest"] == "max_model_len" else o for o in snapshot["options"]]
    (policy_flag_classes.SNAPSHOTS / "vllm-9.0.0.json").write_text(json.dumps(snapshot))
    policy_flag_classes.snapshot_files.cache_clear()
    policy_flag_classes.snapshot_options.cache_clear()
    assert flag_class("max-model-len") is None


def test_named_values_and_config_tables():
    assert named_values("distributed-executor-backend") == ("ray", "mp", "uni", "external_launcher")
    assert named_values("model") is None
    assert config_table("no-such-config") == {}
    assert config_table("compilation-config")["when"]["backend"]["eager"] == "data"


def test_key_class_by_table_value_and_nesting():
    table = {
        "when": {"switch": {"true": "loads-code", "*": "data"}, "mode": {"x": "data"}},
        "keys": {"sub": {"data": ["a"]}},
        "data": ["d", "both"],
        "loads-code": ["both"],
        "reads-path": ["p"],
    }
    assert key_class(table, "switch", True) == "loads-code"  # a YAML switch, written as YAML writes it
    assert key_class(table, "switch", "True") == "data"
    assert key_class(table, "switch", False) == "data"
    assert key_class(table, "mode", "x") == "data" and key_class(table, "mode", "y") is None
    assert key_class(table, "sub", {"a": 1}) == {"data": ["a"]}
    assert key_class(table, "both", 1) == "loads-code"  # the first class of KEY_CLASSES that lists it
    assert key_class(table, "p", "/x") == "reads-path" and key_class(table, "d", 1) == "data"
    assert key_class(table, "none", 1) is None and key_class({}, "d", 1) is None
    compilation = config_table("compilation-config")
    assert key_class(compilation, "backend", "eager") == "data"
    assert key_class(compilation, "backend", "my.module") == "loads-code"
    assert key_class(config_table("speculative-config"), "method", "custom_class") == "loads-code"
    assert key_class(config_table("speculative-config"), "method", "eagle") == "data"
