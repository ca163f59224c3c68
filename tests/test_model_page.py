"""Model pages, the index's grouping and the recipe page's answer box, as generated (no MkDocs, no browser)."""

from __future__ import annotations

import html
import posixpath
import re
from types import SimpleNamespace

import pytest

from catalogue.site.headline import figures
from catalogue.site.model_page import ModelRecipe, advice, model_groups
from catalogue.site.pages import build_pages
from catalogue.site.urls import model_path, page_url, recipe_path

ROW = re.compile(r'<tr data-recipe="([^"]+)"><td[^>]*><a href="([^"]+)">(.*?)</tr>', re.S)
MODEL_FIGURE = re.compile(r'<td [^>]*data-figure="(\w+)">([^<]*)')
BEST_AT = re.compile(r'data-figure="best">([\d,.]+) tok/s <small>at c=(\d+)')
SINGLE = re.compile(r'data-figure="single">([\d,.]+) tok/s')
PAGE_FIGURE = re.compile(r'<span class="rc-fig-value" data-figure="(\w+)">([^<]*)</span>')


@pytest.fixture(scope="module")
def site(entries):
    published = [e for e in entries.values() if e.recipe.publish]
    return published, build_pages(published)


def _target(from_path: str, href: str) -> str:
    """The page a relative link on `from_path` leads to, as a page path."""
    url = posixpath.normpath(posixpath.join(page_url(from_path) or ".", href))
    return url + ".md" if url != "." else "index.md"


def test_every_published_recipe_is_reachable_from_its_models_page_with_the_same_figures(site):
    published, pages = site
    assert len(published) >= 90
    with_figures = 0
    for entry in published:
        model_page = pages[model_path(entry.recipe.model)]
        rows = {rid: (href, cells) for rid, href, cells in ROW.findall(model_page.body)}
        assert entry.id in rows, (entry.id, model_page.path)
        href, cells = rows[entry.id]
        assert _target(model_page.path, href) == recipe_path(entry)
        recipe_page = pages[recipe_path(entry)]
        on_model = {k: html.unescape(v).strip() for k, v in MODEL_FIGURE.findall(cells)}
        on_recipe = {k: html.unescape(v).strip() for k, v in PAGE_FIGURE.findall(recipe_page.markdown())}
        assert on_model == on_recipe, entry.id
        with_figures += bool(on_model)
    measured = [e for e in published if any(run.levels for run in e.runs)]
    assert with_figures >= len(measured) - 2 > 60, (with_figures, len(measured))


def _shown_as(value: float | None, shown: float) -> bool:
    """Whether `shown` is `value` as the pages round it (one decimal from 100 up, two below)."""
    return value is not None and abs(value - shown) <= (0.05 if value >= 100 else 0.005) + 1e-9


def test_a_model_pages_figures_are_the_generation_of_one_run_of_its_recipe(site):
    """Read against the run files, not the code that chose them: c=1 is the generation at concurrency 1 and the best
    throughput the generation at the concurrency it names, both of one run of the recipe."""
    published, pages = site
    checked = 0
    for entry in published:
        cells = {rid: c for rid, _, c in ROW.findall(pages[model_path(entry.recipe.model)].body)}[entry.id]
        single, best = SINGLE.search(cells), BEST_AT.search(cells)
        if not best:
            continue
        shown_best, at = float(best[1].replace(",", "")), int(best[2])
        shown_single = float(single[1].replace(",", "")) if single else None
        runs = [run for run in entry.runs if run.level(at) and run.level(at).generation_tps is not None]
        assert any(
            _shown_as(run.level(at).generation_tps, shown_best)
            and (shown_single is None or (run.level(1) and _shown_as(run.level(1).generation_tps, shown_single)))
            for run in runs
        ), entry.id
        checked += 1
    assert checked > 60


def test_the_recipe_page_leads_with_figures_status_needs_and_the_launch_command(site):
    _, pages = site
    page = pages["recipes/gptoss-120b.md"]
    body = page.markdown()
    answer = body.index('class="rc-answer"')
    # the answer comes before any prose, the recipe's summary included
    assert body.index('class="rc-badges"') < answer < body.index(page.lead) < body.index('id="why"')
    assert body.index('id="why"') < body.index('id="performance"')
    box = body[answer : body.index('id="why"')]
    assert set(PAGE_FIGURE.findall(box)) and {k for k, _ in PAGE_FIGURE.findall(box)} >= {"single", "best"}
    assert "rc-status-" in box and "verified 20" in box and "needs 1 Spark" in box
    assert "<pre>" in box and "vllm serve" in box
    # each figure links to the methodology section that says how it was measured
    assert '<a href="../../methodology/#columns"' in box
    # the provenance moved into the folded Sources section
    sources = body[body.index('id="sources"') :]
    assert "<details" in sources and "Imported from" in sources


def test_the_index_lists_recipes_with_figures_first_grouped_by_model_and_folds_the_rest(site):
    published, pages = site
    index = pages["index.md"].body
    fold = index.index('id="rc-launch-only"')
    launch_only = [e for e in published if not figures(_row(e))]
    assert index[fold:].count("<tr data-family") == len(launch_only) > 0
    assert index[:fold].count("<tr data-family") == len(published) - len(launch_only)
    assert f'<span id="rc-launch-count">{len(launch_only)}</span>' in index
    groups = re.findall(r'<tr class="rc-group" data-group="([^"]+)">', index)
    measured_models = {e.recipe.model for e in published if figures(_row(e))}
    assert sorted(groups) == sorted(measured_models) and len(groups) == len(set(groups))
    # each group's heading links to its model's page
    for model in ["openai/gpt-oss-120b", "Qwen/Qwen3-30B-A3B-FP8"]:
        if model in measured_models:
            assert f'href="{page_url(model_path(model))}">{model}</a>' in index


def _row(entry):
    from catalogue.site.index_page import index_row

    return index_row(entry, None)


def test_model_groups_follow_family_then_model(entries):
    published = [e for e in entries.values() if e.recipe.publish]
    models = list(model_groups(published))
    assert len(models) == len({e.recipe.model for e in published})
    gptoss = [m for m in models if "gpt-oss" in m]
    assert gptoss == sorted(gptoss, key=str.lower) and models.index(gptoss[0]) + len(gptoss) - 1 == models.index(
        gptoss[-1]
    )


def _recipe(title: str, single=None, per_node=None, workload="w1", best_c=8, max_len=None) -> ModelRecipe:
    flags = {"max-model-len": max_len} if max_len else {}
    entry = SimpleNamespace(recipe=SimpleNamespace(title=title, serving=SimpleNamespace(flags=flags)))
    row = {"single": single, "per_node": per_node, "workload": workload, "best_c": best_c}
    return ModelRecipe(entry, row, [], f"{title}/")  # type: ignore[arg-type]


def test_advice_compares_only_recipes_of_one_workload():
    recipes = [
        _recipe("a", single=30.0, per_node=300.0, max_len=32768),
        _recipe("b", single=40.0, per_node=250.0, max_len=131072),
        _recipe("c", single=90.0, per_node=900.0, workload="w2"),  # faster, but another workload
    ]
    tips = {tip.need: tip for tip in advice(recipes)}
    assert tips["one user at a time"].recipe.entry.recipe.title == "b"
    assert tips["one user at a time"].why == "40 tok/s at c=1, the highest of 2 recipes measured under w1"
    assert tips["many users at once"].recipe.entry.recipe.title == "a"
    assert "300 tok/s per Spark at c=8" in tips["many users at once"].why
    assert tips["the longest context"].recipe.entry.recipe.title == "b"


def test_no_advice_without_two_recipes_to_choose_between():
    assert advice([_recipe("a", single=30.0, per_node=300.0), _recipe("b")]) == []
    assert advice([_recipe("a", max_len=4096), _recipe("b", max_len=4096)]) == []


def test_a_launch_only_row_has_no_figures_and_a_measured_row_names_workload_and_date():
    row = {
        "single": None,
        "best": None,
        "capacity_text": None,
        "workload": "",
        "measured_on": None,
        "nodes": 1,
    }
    assert figures(row) == []
    row |= {"single": 12.345, "best": 200.0, "best_c": 16, "per_node": 100.0, "nodes": 2, "workload": "w"}
    row |= {"measured_on": "2026-01-02"}
    single, best = figures(row)
    assert (single.value, single.workload, single.date) == ("12.35 tok/s", "w", "2026-01-02")
    assert (best.value, best.note) == ("200 tok/s", "at c=16, 100 tok/s per Spark")
    assert best.how("recipes/x.md") == "../../methodology/#columns"
