"""The kinds of text a sweep sends (catalogue/models/texts.py): the fixed prompts, their files, the jobs that send them,
the recipe rules, the run files a refresh writes for them and the page's speculative-decoding paragraph."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from catalogue.models import texts
from catalogue.models.errors import CatalogueError
from catalogue.models.launch import sweep_workload
from catalogue.models.loading import load_entry
from catalogue.site.spec_view import spec_summary
from runner.planning.jobs import level_jobs

NGRAM = '{"method": "ngram", "num_speculative_tokens": 3}'


@pytest.mark.parametrize("kind", ["prose", "code"])
def test_each_kind_has_distinct_prompts_that_start_differently(kind):
    prompts = texts.prompts(kind)
    assert len(prompts) == texts.PROMPTS_PER_KIND == len(set(prompts))
    # no two prompts share their first 60 characters: the prefix cache finds no common start between them
    assert len({p[:60] for p in prompts}) == len(prompts)
    lines = texts.jsonl(kind).splitlines()
    assert [json.loads(line)["prompt"] for line in lines] == prompts


def test_random_has_no_file_and_the_digest_follows_the_text(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="random"):
        texts.prompts("random")
    assert texts.dataset("random") == "random"
    assert texts.write_files(tmp_path, ["random", "code"]) == [tmp_path / "texts-code.jsonl"]
    assert (tmp_path / "texts-code.jsonl").read_text() == texts.jsonl("code")
    before = texts.dataset("prose")
    assert texts.digest("prose") in before and "32 prose prompts" in before
    monkeypatch.setattr(texts, "PROSE", (*texts.PROSE[:-1], "A different last passage."))
    assert texts.dataset("prose") != before  # a changed text never compares with the old one


def _spec_recipe(entries, tmp_path: Path, sweep_texts: list[str] | None) -> Path:
    entry = entries["llama31-8b-fp8"]
    data = yaml.safe_load((entry.folder / "recipe.yaml").read_text())
    data["serving"]["flags"]["speculative-config"] = NGRAM
    if sweep_texts is not None:
        data["sweep"]["texts"] = sweep_texts
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def test_a_speculative_recipe_must_measure_two_kinds_of_text(entries, tmp_path):
    folder = _spec_recipe(entries, tmp_path, None)
    with pytest.raises(CatalogueError) as err:
        load_entry(folder)
    line = str(err.value)
    assert "\n" not in line and "recipe.yaml" in line and "sweep.texts" in line and "prose, code" in line
    (folder / "recipe.yaml").unlink()
    folder.rmdir()
    assert load_entry(_spec_recipe(entries, tmp_path, ["prose", "code"])).recipe.sweep.texts == ["prose", "code"]


def test_long_context_and_open_loop_need_random_first(entries, tmp_path):
    entry = entries["llama31-8b-fp8"]
    sweep = entry.recipe.sweep.model_dump()
    with pytest.raises(ValueError, match="put `random` first"):
        type(entry.recipe.sweep).model_validate({**sweep, "long_context": [4096], "texts": ["prose", "random"]})
    with pytest.raises(ValueError, match="repeats"):
        type(entry.recipe.sweep).model_validate({**sweep, "texts": ["code", "code"]})


def test_jobs_send_each_kind_from_the_raw_folder_with_a_seed_of_their_own(entries, tmp_path):
    entry = load_entry(_spec_recipe(entries, tmp_path, ["prose", "code"]))
    jobs = level_jobs(entry, entry.recipe, "http://127.0.0.1:8000", "/raw", "s", False)
    levels = entry.recipe.sweep.concurrency
    assert [j.name for j in jobs] == [f"c{c}" for c in levels] + [f"code-c{c}" for c in levels]
    assert [j.text for j in jobs] == ["prose"] * len(levels) + ["code"] * len(levels)
    for job in jobs:
        argv = job.argv
        assert argv[argv.index("--dataset-name") + 1] == "custom"
        assert argv[argv.index("--dataset-path") + 1] == f"/raw/texts-{job.text}.jsonl"
        assert argv[argv.index("--custom-output-len") + 1] == str(entry.recipe.sweep.output_len)
        assert "--skip-chat-template" in argv and "--random-input-len" not in argv
        assert job.metrics_url == "http://127.0.0.1:8000/metrics"
        assert shlex.split(shlex.join(argv)) == argv
    seeds = [j.argv[j.argv.index("--seed") + 1] for j in jobs]
    assert len(set(seeds)) == len(seeds)
    plain = entries["llama31-8b-fp8"]
    random_jobs = level_jobs(plain, plain.recipe, "http://127.0.0.1:8000", "/raw", "s", False)
    assert all(j.argv[j.argv.index("--dataset-name") + 1] == "random" for j in random_jobs)


def test_workload_of_a_fixed_text_names_the_file_and_the_counted_prompt_length(entries):
    recipe = entries["llama31-8b-fp8"].recipe
    prose = sweep_workload(recipe, "0.32.0", "prose", 344)
    random = sweep_workload(recipe, "0.32.0")
    assert prose.dataset == texts.dataset("prose") and prose.input_len == 344
    assert random.dataset == "random" and random.input_len == recipe.sweep.input_len
    assert prose.key != random.key and prose.known
    assert "prose: the catalogue's 32 prose prompts" in prose.describe()


def test_the_spec_paragraph_names_what_is_measured_and_what_is_not_known(entries):
    entry = entries["qwen38-27b-nvfp4-mtp"]
    found = spec_summary(entry.recipe, entry.runs)
    assert found is not None and found.method == "qwen3_5_mtp" and found.tokens == 3
    assert found.not_measured == ["prose", "code"] and found.measured == []
    assert len(found.unknown) == len({r.workload.key for r in entry.runs if r.levels})  # imported: speed only
    assert spec_summary(entries["llama31-8b-fp8"].recipe, []) is None
