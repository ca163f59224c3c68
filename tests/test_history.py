"""A recipe's runs over time: what changed between runs and the dated trend of its headline figures."""

from __future__ import annotations

import json
import re
import shutil

from catalogue.models.loading import load_entry
from catalogue.site.history import history_rows, trend_chart
from catalogue.site.pages import render_recipe
from catalogue.stats.run_differences import differences


def two_runs(tmp_path, repo):
    """tiny-cpu-docker with its measured run, plus an older one: vLLM 0.31.0, one flag fewer, slower."""
    folder = tmp_path / "tiny-cpu-docker"
    shutil.copytree(repo / "examples" / "tiny-cpu-docker", folder)
    newest = next((folder / "runs").glob("*.json"))
    data = json.loads(newest.read_text())
    data["recorded_at"] = "2026-10-01T12:00:00+00:00"
    data["provenance"]["vllm_version"] = "0.31.0"
    data["provenance"]["serve_command"] = [w for w in data["provenance"]["serve_command"] if w != "--enforce-eager"]
    for level in data["levels"]:
        level["generation_tps"] = level["generation_tps"] / 2
    (folder / "runs" / "20261001T120000Z.json").write_text(json.dumps(data))
    return load_entry(folder)


def test_changes_name_vllm_and_flags(tmp_path, repo):
    entry = two_runs(tmp_path, repo)
    older, newer = entry.runs
    assert differences(older, newer) == ["vLLM 0.31.0 → 0.32.0", "flags: +--enforce-eager"]
    rows = history_rows(entry)
    assert [r.run for r in rows] == [newer, older] and rows[1].changes == []
    assert rows[0].best == max(lv.generation_tps for lv in newer.levels) and rows[0].best_c == 4
    assert rows[1].single == newer.level(1).generation_tps / 2


def test_trend_chart_is_dated_and_on_the_page(tmp_path, repo):
    entry = two_runs(tmp_path, repo)
    svg = trend_chart(entry)
    newest = entry.runs[-1].measured_on.isoformat()
    ticks = re.findall(r'class="rc-xtick"[^>]*>([^<]+)<', svg)
    assert ticks == ["2026-10-01", newest]
    assert 'data-tip="best generation: ' in svg and f"at {newest}" in svg
    page = render_recipe(entry).markdown()
    history = page.split('id="run-history"')[1]
    assert "vLLM 0.31.0 → 0.32.0; flags: +--enforce-eager" in history and "rc-chart" in history


def test_no_trend_without_two_dated_runs_of_one_workload(entries):
    assert trend_chart(entries["gptoss-120b-ngc-2509"]) == ""  # its source states no dates


def test_a_prompt_heavy_workload_is_judged_by_prefill(entries):
    from catalogue.site.history import main_metric

    run = entries["gptoss-120b-topology-solo"].latest
    assert main_metric(run).name == "generation_tps"
    heavy = run.model_copy(update={"workload": run.workload.model_copy(update={"input_len": 4096, "output_len": 32})})
    assert main_metric(heavy).name == "prefill_tps"
