"""The Quality box of a run and the quality table of a comparison page: a quantised recipe beside the reference
precision's score with the difference, "not measured" where either has none."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from catalogue.models import quality as q
from catalogue.site.quality_view import NOT_MEASURED, compare_rows, is_reference, quality_box


def checks(accuracy: float | None, tool: float | None) -> q.Quality:
    found = []
    if accuracy is not None:
        found.append(q.QualityCheck(kind="accuracy", tool=q.ACCURACY, version="1", items=20, passed=int(accuracy / 5),
                                    score=accuracy, took_s=2.0, method="exact match"))  # fmt: skip
    if tool is not None:
        found.append(q.QualityCheck(kind="tool-calling", tool=q.TOOL_EVAL, version=q.TOOL_EVAL_VERSION, items=5,
                                    passed=2, score=tool, took_s=30.0, method="its own"))  # fmt: skip
    return q.Quality(checks=found)


def entry(quantization: str, *qualities: q.Quality | None):
    day = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    runs = [SimpleNamespace(recorded_at=day + dt.timedelta(days=i), quality=qu) for i, qu in enumerate(qualities)]
    return SimpleNamespace(recipe=SimpleNamespace(quantization=quantization), runs=runs)


def test_reference_precision_is_read_from_the_weight_format():
    assert is_reference("none (BF16 weights)") and is_reference("BF16") and is_reference("none (float32)")
    assert not is_reference("NVFP4 (compressed-tensors, community requantisation by unsloth); BF16 KV cache")
    assert not is_reference("FP8 (Qwen's own FP8 checkpoint)") and not is_reference("MXFP4 (native checkpoint)")
    assert not is_reference("AWQ int4")


def test_a_quantised_recipe_shows_its_difference_from_the_reference():
    ref = entry("none (BF16 weights)", checks(90.0, 60.0), checks(80.0, None))  # the newest scored check counts
    fp8 = entry("FP8", checks(75.0, None))
    rows = compare_rows([("bf16", ref), ("fp8", fp8), ("awq", entry("AWQ int4", None))])
    assert rows[0].scores == ["80 (16/20)", "60 (2/5)"] and rows[0].deltas == ["reference", "reference"]
    assert rows[1].scores == ["75 (15/20)", NOT_MEASURED] and rows[1].deltas == ["-5.0 points", NOT_MEASURED]
    assert rows[2].scores == [NOT_MEASURED, NOT_MEASURED] and rows[2].deltas == [NOT_MEASURED, NOT_MEASURED]
    alone = compare_rows([("fp8", fp8)])
    assert alone[0].deltas == ["reference not measured", NOT_MEASURED]


def test_the_box_says_random_weights_skips_and_absence():
    run = SimpleNamespace(quality=None)
    assert quality_box(run).rows == [] and "not measured" in quality_box(run).notes[0]
    rnd = SimpleNamespace(quality=checks(0.0, 0.0).model_copy(update={"random_weights": True}))
    box = quality_box(rnd)
    assert [r[0] for r in box.rows] == ["Accuracy", "Tool calling"] and box.rows[0][3] == "0 (0/20)"
    assert "random weights" in box.notes[0]
    off = SimpleNamespace(quality=q.Quality(skipped="an embedding model has no chat"))
    assert quality_box(off).rows == [] and "an embedding model has no chat" in quality_box(off).notes[0]
    failed = SimpleNamespace(quality=q.Quality(checks=[q.failed_check("tool-calling", 5, 1.0, "refused")]))
    assert quality_box(failed).rows[0][3] == "no score (refused)"


def test_a_run_page_shows_quality_and_speculative_decoding_per_level(capacity_entry):
    from dataclasses import replace

    from catalogue.site.pages import render_recipe
    from catalogue.stats.spec_decode import SpecDecodeFigures

    run = capacity_entry.runs[-1]
    spec = SpecDecodeFigures(
        drafts=10, draft_tokens=30, accepted_tokens=12, acceptance_rate=0.4, mean_accepted_length=2.2
    )
    levels = [lv.model_copy(update={"spec_decode": spec}) for lv in run.levels]
    quality = checks(0.0, 0.0).model_copy(update={"random_weights": True})
    entry = replace(capacity_entry, runs=[run.model_copy(update={"levels": levels, "quality": quality})])
    html = render_recipe(entry).markdown()
    assert "<th>Acceptance rate</th>" in html and "12 of 30" in html and "<td>2.2</td>" in html
    assert "Tool calling</td><td>tool-eval-bench 3.0.0</td><td>5</td><td>0 (2/5)</td>" in html
    assert "random weights" in html
    plain = render_recipe(capacity_entry).markdown()
    assert "Acceptance rate" not in plain and "Quality: not measured in this run" in plain
