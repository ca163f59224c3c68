"""The static JSON API (api/v1/): documents valid against their published schemas, figures equal to the pages'."""

from __future__ import annotations

import datetime as dt
import html
import json
import re

import pytest
from jsonschema import Draft202012Validator

from catalogue.commands.cli import main
from catalogue.flags.drift import release_checkers, release_snapshots
from catalogue.models.benchmark import LevelResult
from catalogue.site.api import INDEX_PATH, INDEX_SCHEMA_PATH, RECIPE_SCHEMA_PATH, api_documents, recipe_document_path
from catalogue.site.build import SiteBuild, generate
from catalogue.site.index_page import index_rows
from catalogue.site.templating import fmt_num
from catalogue.site.urls import INDEX, recipe_path
from catalogue.stats.metrics import METRICS
from tests.site_support import REPO, mkdocs_build

WHEN = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)
PERF_TABLE = re.compile(r'<table class="rc-perf">(.*?)</table>', re.S)
HEADER = re.compile(r"<th>(.*?)</th>")
ROW = re.compile(r"<tr><td>(.*?)</td></tr>", re.S)
SPREAD = re.compile(r"\s*<small>.*?</small>")
RELEASE = re.compile(r'<span class="rc-release (rc-release-ok|rc-release-no)" title="([^"]*)">vLLM ([^ ]+) ')
BY_HEADER = {m.header: m for m in METRICS}


@pytest.fixture(scope="module")
def build() -> SiteBuild:
    """The committed catalogue as the site builds it, checked against the newest committed release snapshot."""
    releases = release_checkers()
    return generate([REPO / "recipes", REPO / "examples"], releases[-1], releases=releases)


@pytest.fixture(scope="module")
def documents(build: SiteBuild) -> dict[str, str]:
    return api_documents(build.recipes, WHEN)


def validator(documents: dict[str, str], path: str) -> Draft202012Validator:
    schema = json.loads(documents[path])
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_documents_validate_against_their_published_schemas(build, documents):
    published = sorted(e.id for e, _ in build.recipes if e.recipe.publish)
    index = json.loads(documents[INDEX_PATH])
    errors = [e.message for e in validator(documents, INDEX_SCHEMA_PATH).iter_errors(index)]
    assert errors == []
    assert [row["id"] for row in index["recipes"]] == published  # examples are not part of the API
    assert index["version"] == "v1" and index["generated_at"] == "2026-11-23T12:00:00Z"
    recipe_schema = validator(documents, RECIPE_SCHEMA_PATH)
    for recipe_id in published:
        document = json.loads(documents[recipe_document_path(recipe_id)])
        assert [e.message for e in recipe_schema.iter_errors(document)] == [], recipe_id
        assert document["id"] == recipe_id and document["version"] == "v1"
    assert not any("tiny-cpu" in path for path in documents)


def test_schemas_forbid_unknown_fields_and_describe_every_field(documents):
    for path in (INDEX_SCHEMA_PATH, RECIPE_SCHEMA_PATH):
        schema = json.loads(documents[path])
        models = [schema, *schema["$defs"].values()]
        for model in (m for m in models if m.get("type") == "object" and "properties" in m):
            assert model["additionalProperties"] is False, model["title"]
            for name, field in model["properties"].items():
                assert field.get("description"), f"{model['title']}.{name}"
    index = json.loads(documents[INDEX_PATH])
    index["recipes"][0]["extra"] = 1
    assert not validator(documents, INDEX_SCHEMA_PATH).is_valid(index)


def perf_table(body: str) -> tuple[list[str], list[list[str]]]:
    """The headers and cell texts of a recipe page's first performance table (its headline run), ± parts dropped."""
    found = PERF_TABLE.search(body)
    assert found, "the page has a performance table"
    table = found.group(1)
    headers = [html.unescape(h) for h in HEADER.findall(table)]
    rows = [[html.unescape(SPREAD.sub("", c)) for c in row.split("</td><td>")] for row in ROW.findall(table)]
    return headers, rows


def test_each_recipe_page_shows_its_documents_figures(build, documents):
    compared = 0
    for entry, _ in build.recipes:
        if not entry.recipe.publish:
            continue
        document = json.loads(documents[recipe_document_path(entry.id)])
        if not document["runs"]:  # a recipe published from a source without figures: no headline, no table
            assert document["headline"] is None, entry.id
            continue
        # The page leads with the headline workload's run: the newest unless the recipe names a headline_workload.
        run = next(r for r in document["runs"] if r["id"] == document["headline"]["run"])
        headers, rows = perf_table(build.pages[recipe_path(entry)].body)
        assert headers[0] == "Concurrency"
        assert len(rows) == len(run["levels"]), entry.id
        for cells, level_json in zip(rows, run["levels"]):
            level = LevelResult.model_validate(level_json)  # the JSON's figures, read as the page reads a run
            assert cells[0] == str(level.concurrency)
            expected = [fmt_num(BY_HEADER[h].get(level)) for h in headers[1:]]
            assert cells[1:] == expected, (entry.id, level.concurrency)
            compared += len(expected)
    assert compared > 100


def test_each_recipe_page_shows_its_documents_drift_row(build, documents):
    for entry, _ in build.recipes:
        if not entry.recipe.publish:
            continue
        document = json.loads(documents[recipe_document_path(entry.id)])
        shown = [
            (release, cls == "rc-release-ok", html.unescape(title))
            for cls, title, release in RELEASE.findall(build.pages[recipe_path(entry)].head)
        ]
        expected = [
            (d["release"], d["accepted"], "; ".join(d["problems"]) or "every flag parses") for d in document["drift"]
        ]
        assert shown == expected and len(shown) == len(release_snapshots()), entry.id


def test_index_headline_figures_equal_the_index_pages(build, documents):
    published = [e for e, _ in build.recipes if e.recipe.publish]
    validations = {e.id: v for e, v in build.recipes}
    rows = {row["title"]: row for row in index_rows(published, validations)}
    index = json.loads(documents[INDEX_PATH])
    assert len(index["recipes"]) == len(rows)
    for item in index["recipes"]:
        row, headline = rows[item["title"]], item["headline"]
        if headline is None:  # published from a source without figures: no headline figures on either side
            assert (row["single"], row["best"]) == (None, None) and f"{item['page']}" in build.pages[INDEX].body
            continue
        assert (row["single"], row["best"], row["best_c"]) == (
            headline["single_stream_generation_tps"],
            headline["best_generation_tps"],
            headline["best_concurrency"],
        )
        assert row["vllm"].split() == item["accepted_by"]
        assert (row["model"], row["hardware"], row["topology"], row["status"]) == (
            item["model"],
            item["hardware"]["name"],
            item["topology"],
            item["status"],
        )
        assert f"{item['page']}" in build.pages[INDEX].body and row["url"] == item["page"]
        run = next(r for r in json.loads(documents[item["document"]])["runs"] if r["id"] == headline["run"])
        assert headline["workload"] == run["workload_description"]


def test_generated_at_is_source_date_epoch_when_set(build, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795435200")
    index = json.loads(api_documents(build.recipes)[INDEX_PATH])
    assert index["generated_at"] == "2026-11-23T12:00:00Z"


def test_export_writes_the_api(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CATALOGUE_FLAGS_SNAPSHOT", str(release_snapshots()[-1]))  # no vLLM import
    out = tmp_path / "export"
    assert main(["--root", str(REPO / "recipes"), "export", str(out), "gptoss-120b"]) == 0
    api = sorted(p.relative_to(out).as_posix() for p in (out / "api").rglob("*.json"))
    assert api == [INDEX_PATH, recipe_document_path("gptoss-120b"), INDEX_SCHEMA_PATH, RECIPE_SCHEMA_PATH]
    assert "API file(s)" in capsys.readouterr().out


def test_mkdocs_build_publishes_the_api(tmp_path, build):
    result = mkdocs_build(tmp_path / "site", CATALOGUE_FLAGS_SNAPSHOT=str(release_snapshots()[-1]))
    assert result.returncode == 0, result.stderr
    api = tmp_path / "site" / "api" / "v1"
    index = json.loads((api / "index.json").read_text())
    schema = json.loads((api / "schema" / "index.schema.json").read_text())
    assert list(Draft202012Validator(schema).iter_errors(index)) == []
    recipe_schema = Draft202012Validator(json.loads((api / "schema" / "recipe.schema.json").read_text()))
    for item in index["recipes"]:
        document = json.loads((tmp_path / "site" / item["document"]).read_text())
        assert list(recipe_schema.iter_errors(document)) == [], item["id"]
        assert (tmp_path / "site" / item["page"] / "index.html").exists()
    assert [r["id"] for r in index["recipes"]] == sorted(e.id for e, _ in build.recipes if e.recipe.publish)


def test_the_api_carries_rate_levels_and_capacity(capacity_entry):
    import dataclasses

    from catalogue.site.view import Validation

    published = dataclasses.replace(capacity_entry, recipe=capacity_entry.recipe.model_copy(update={"publish": True}))
    documents = api_documents([(published, Validation("0.32.0", dt.date(2026, 11, 25), "test", [], []))], WHEN)
    index = json.loads(documents[INDEX_PATH])
    assert list(validator(documents, INDEX_SCHEMA_PATH).iter_errors(index)) == []
    run = capacity_entry.runs[-1]
    capacity = index["recipes"][0]["capacity"]
    assert (capacity["rps"], capacity["upper_rps"], capacity["converged"], capacity["run"]) == (
        run.capacity.rps,
        run.capacity.upper_rps,
        True,
        run.stamp,
    )
    assert capacity["slo"] == {"percentile": 95, "ttft": 1000.0, "tpot": 50.0, "e2el": None}
    assert capacity["slo_description"] == "p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms"
    document = json.loads(documents[recipe_document_path("capacity-fixture")])
    assert list(validator(documents, RECIPE_SCHEMA_PATH).iter_errors(document)) == []
    (doc_run,) = document["runs"]
    assert len(doc_run["rates"]) == len(run.rates) and doc_run["capacity"]["rps"] == run.capacity.rps
    assert [r["probe"] for r in doc_run["rates"]] == [lv.probe for lv in run.rates]
    assert document["capacity"] == capacity
    assert capacity["noise_bound"] is None  # the fixture's lightest rates had room under their limits
    noisy = [
        lv.model_copy(update={"ttft_ms": lv.ttft_ms.model_copy(update={"p95": 900.0})}) if lv.ttft_ms else lv
        for lv in run.rates
    ]
    flat = dataclasses.replace(published, runs=[run.model_copy(update={"rates": noisy})])
    documents = api_documents([(flat, Validation("0.32.0", dt.date(2026, 11, 25), "test", [], []))], WHEN)
    noise_bound = json.loads(documents[INDEX_PATH])["recipes"][0]["capacity"]["noise_bound"]
    assert "p95 TTFT was already 900 ms, 90 % of its 1,000 ms limit" in noise_bound


def test_a_p99_from_too_few_requests_is_marked_unbounded_in_the_api():
    from catalogue.models.loading import load_entry
    from catalogue.site.api import api_run

    run = load_entry(REPO / "examples" / "tiny-cpu-docker").latest
    document = api_run(run)
    assert document.unbounded_p99 and all("368+ requests" in line for line in document.unbounded_p99)
    assert document.levels[0].ttft_ms.p99 is not None  # the raw figure is kept, marked


def test_index_groups_models_as_the_model_pages_do(build, documents):
    index = json.loads(documents[INDEX_PATH])
    by_id = {r["id"]: r for r in index["recipes"]}
    listed = [rid for m in index["models"] for hw in m["hardware"] for rid in hw["recipes"]]
    assert sorted(listed) == sorted(by_id)  # every published recipe under exactly one model
    for model in index["models"]:
        page = build.pages[model["page"].rstrip("/") + ".md"]
        for hw in model["hardware"]:
            members = [by_id[rid] for rid in hw["recipes"]]
            assert {(r["model"], r["hardware"]["name"], r["hardware"]["nodes"]) for r in members} == {
                (model["model"], hw["name"], hw["nodes"])
            }
            figured = [r["headline"] is not None or r["capacity"] is not None for r in members]
            assert figured == sorted(figured, reverse=True)  # recipes with figures first
            for rid in hw["recipes"]:
                assert f'<tr data-recipe="{rid}">' in page.body
