"""Every transcribed figure equals the seed text's figure."""

from __future__ import annotations

import re

import pytest

from catalogue.stats.metrics import metric_value
from tests.conftest import SEED_RECIPES, seed_text


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def test_all_seed_recipes_load(entries):
    # The seeds; recipes transcribed from public sources since (issue 21) load beside them.
    assert set(entries) >= SEED_RECIPES


def test_concurrency_first_table_matches_seed(entries, seeds):
    text = seed_text(seeds, "000")
    rows = re.findall(r"^\| (\d+) \| ([\d,]+) \| ([\d.]+) \| ([\d,.]+) \|$", text, re.M)
    assert len(rows) == 11
    run = entries["gptoss-120b"].latest
    assert [lv.concurrency for lv in run.levels] == [int(r[0]) for r in rows]
    for c, pp, tg, peak in rows:
        level = run.level(int(c))
        assert (level.prefill_tps, level.generation_tps, level.peak_tps) == (_num(pp), _num(tg), _num(peak))


def test_concurrency_first_comparisons_match_seed(entries, seeds):
    text = seed_text(seeds, "000")
    rows = re.findall(r"^\| ([^|]+?) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([+-][\d.]+)% \|$", text, re.M)
    entry = entries["gptoss-120b"]
    assert len(rows) == len(entry.recipe.comparisons) == 4
    for (_source, c, theirs, ours, delta), comparison in zip(rows, entry.recipe.comparisons):
        assert comparison.concurrency == int(c) and comparison.value == float(theirs)
        _, level = entry.ours(comparison)
        assert metric_value(level, comparison.metric) == float(ours)
        computed = (float(ours) - comparison.value) / comparison.value * 100
        assert f"{computed:+.1f}" == delta


def test_concurrency_first_launch_matches_seed(entries, seeds):
    text = seed_text(seeds, "000")
    flags = entries["gptoss-120b"].recipe.serving.flags
    for name, value in re.findall(r"^--?([a-z0-9-]+)(?: (\S+))?\s*$", text, re.M):
        if name in flags and value and not value.startswith("'"):
            assert str(flags[name]) in (value, value.rstrip("0")), name
    capture = re.search(r'cudagraph_capture_sizes":\[([\d,]+)\]', text).group(1)
    assert flags["compilation-config"]["cudagraph_capture_sizes"] == [int(x) for x in capture.split(",")]
    assert "VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1" in text
    assert entries["gptoss-120b"].recipe.serving.env == {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8": "1"}
    assert entries["gptoss-120b"].verified.isoformat() == "2026-05-06"


def test_ngc_batch_scaling_and_long_context(entries, seeds):
    text = seed_text(seeds, "002")
    batch = re.findall(r"^\| (\d+)\s+\| \**([\d.]+)\**\s+\|$", text, re.M)
    runs = {run.label: run for run in entries["gptoss-120b-ngc-2509"].runs}
    after = runs["after tuning: batch scaling and long context"]
    assert [(lv.concurrency, lv.generation_tps) for lv in after.levels] == [(int(c), float(v)) for c, v in batch]
    long_rows = re.findall(
        r"^\| (Short|Medium|Long)\s+\| \**([\d,]+)\**\s+\| \**([\d,]+) ms\**\s+\| ([\d.]+) tok/s", text, re.M
    )
    assert len(long_rows) == 3
    for (label, tokens, latency, decode), level in zip(long_rows, after.long_context):
        assert level.label == label.lower() and level.prompt_tokens == _num(tokens)
        assert level.e2e_ms.mean == _num(latency) and level.generation_tps == float(decode)
    assert "8044 ms" in text and runs["before tuning: interactive"].levels[0].e2e_ms.mean == 8044
    assert "8030 ms" in text and runs["after tuning: interactive"].levels[0].e2e_ms.mean == 8030
    assert (
        "| Batch-16 tok/s         | 186 " in text
        and runs["before tuning: batch scaling and long context"].level(16).generation_tps == 186
    )
    assert (
        "8426 ms" in text and runs["before tuning: batch scaling and long context"].long_context[0].e2e_ms.mean == 8426
    )


TOPOLOGY_COLUMNS = ["solo", "cluster-tp2", "2x-shuffle", "2x-least-busy"]


@pytest.mark.parametrize(
    ("heading", "field"),
    [("Decode Throughput", "generation_tps"), ("Prefill Throughput", "prefill_tps"), ("Time to First Token", "ttft")],
)
def test_topology_tables(entries, seeds, heading, field):
    text = seed_text(seeds, "003")
    section = text.split(heading, 1)[1].split("Legend", 1)[0]
    rows = re.findall(r"^\| c(\d+) \| ([\d,.]+) \| ([\d,.]+) \| ([\d,.]+) \| ([\d,.]+) \|", section, re.M)
    assert len(rows) == 7
    for c, *values in rows:
        for column, value in zip(TOPOLOGY_COLUMNS, values):
            level = entries[f"gptoss-120b-topology-{column}"].latest.level(int(c))
            ours = level.ttft_ms.mean if field == "ttft" else getattr(level, field)
            assert ours == _num(value), (column, c)


def test_topology_stdevs(entries, seeds):
    text = seed_text(seeds, "003")
    rows = re.findall(r"^\| c(\d+) \| ([\d.]+) \| ([\d.]+) \| [\d.]+x \|$", text, re.M)
    assert len(rows) == 2
    for c, shuffle, least in rows:
        assert entries["gptoss-120b-topology-2x-shuffle"].latest.level(int(c)).stdev == float(shuffle)
        assert entries["gptoss-120b-topology-2x-least-busy"].latest.level(int(c)).stdev == float(least)


def test_community_131k_table(entries, seeds):
    text = seed_text(seeds, "004")
    run = entries["gptoss-120b-community-131k"].latest
    assert [lv.concurrency for lv in run.levels] == [1, 4, 16, 64]
    for lv in run.levels:
        row = (
            f"{lv.concurrency}{lv.total_tps:,.0f}{lv.generation_tps:.0f}{lv.ttft_ms.mean:.0f} ms"
            f"{lv.itl_ms.mean:.0f} ms{lv.e2e_ms.mean / 1000:.1f} s"
        )
        assert row in text, row
    flags = entries["gptoss-120b-community-131k"].recipe.serving.flags
    assert flags["max-model-len"] == 131072 and flags["max-num-seqs"] == 2
    assert "--max-model-len 131072" in text and "--max-num-seqs 2 " in text
    roofline = entries["gptoss-120b-community-131k"].recipe.roofline
    assert "2.55 GB per token" in text and roofline.bytes_per_token_gb == 2.55
