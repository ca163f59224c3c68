"""Every page of the catalogue as a `Page`: recipe pages, the index, comparison pages."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from catalogue.benchmark import LevelResult, MeasuredProvenance
from catalogue.flags.drift import accepted_by
from catalogue.flags.snapshot import version_key
from catalogue.launch import flag_words
from catalogue.loading import Entry
from catalogue.site import view
from catalogue.site.charts import MAX_SERIES, Series, line_chart
from catalogue.site.page import Page
from catalogue.site.prose import paragraphs
from catalogue.site.templating import render
from catalogue.site.urls import link

INDEX, COMPARE_INDEX, METHODOLOGY = "index.md", "compare/index.md", "methodology.md"


@dataclass(frozen=True)
class Column:
    """A performance-table column: header and how to read a level."""

    label: str
    get: Callable[[LevelResult], Any]


COLUMNS = [
    Column("Prefill (tok/s)", lambda lv: lv.prefill_tps),
    Column("Generation (tok/s)", lambda lv: lv.generation_tps),
    Column("Peak (tok/s)", lambda lv: lv.peak_tps),
    Column("Total (tok/s)", lambda lv: lv.total_tps),
    Column("TTFT mean (ms)", lambda lv: lv.ttft_ms.mean if lv.ttft_ms else None),
    Column("TTFT p99 (ms)", lambda lv: lv.ttft_ms.p99 if lv.ttft_ms else None),
    Column("ITL mean (ms)", lambda lv: lv.itl_ms.mean if lv.itl_ms else None),
    Column("E2E mean (ms)", lambda lv: lv.e2e_ms.mean if lv.e2e_ms else None),
    Column("Completed", lambda lv: lv.completed),
    Column("Failed", lambda lv: lv.failed),
    Column("Stdev", lambda lv: lv.stdev),
]


def recipe_path(entry: Entry) -> str:
    """Where a recipe's page goes: published recipes under recipes/, the others under examples/."""
    return f"{'recipes' if entry.recipe.publish else 'examples'}/{entry.id}.md"


def compare_path(model: str, platform: str) -> str:
    """Where a comparison page goes."""
    return f"compare/{view.group_slug(model, platform)}.md"


def _columns(levels: list[LevelResult]) -> list[Column]:
    return [col for col in COLUMNS if any(col.get(lv) is not None for lv in levels)]


def _points(levels: list[LevelResult], get: Callable[[LevelResult], Any]) -> list[tuple[float, float]]:
    return [(lv.concurrency, float(v)) for lv in levels if (v := get(lv)) is not None]


def recipe_charts(entry: Entry) -> list[str]:
    """Throughput and TTFT against concurrency for the newest run."""
    run = entry.latest
    if run is None or len(run.levels) < 2:
        return []
    throughput = [Series(col.label.split(" (")[0], _points(run.levels, col.get)) for col in COLUMNS[1:4]]
    latency = [Series(col.label.split(" (")[0], _points(run.levels, col.get)) for col in COLUMNS[4:6]]
    charts = [line_chart(f"{entry.recipe.title}: throughput against concurrency", "tok/s", throughput)]
    charts.append(line_chart(f"{entry.recipe.title}: time to first token against concurrency", "ms", latency))
    return [c for c in charts if c]


def history_chart(entry: Entry) -> str:
    """Generation against concurrency, one line per run."""
    runs = [run for run in entry.runs if len(run.levels) > 1]
    if len(runs) < 2:
        return ""
    series = [Series(run.label or run.stamp, _points(run.levels, lambda lv: lv.generation_tps)) for run in runs]
    return line_chart(f"{entry.recipe.title}: generation across runs", "tok/s", series)


def _is_stale(entry: Entry, validation: view.Validation | None) -> bool:
    run = entry.latest
    if validation is None or run is None or not isinstance(run.provenance, MeasuredProvenance):
        return False
    return version_key(validation.vllm_version) > version_key(run.provenance.vllm_version)


def recipe_body(entry: Entry, validation: view.Validation | None = None) -> str:
    """The recipe page's body: every section under the title, as HTML."""
    recipe, path = entry.recipe, recipe_path(entry)
    first_level = entry.latest.levels[0].concurrency if entry.latest else recipe.sweep.concurrency[0]
    return render(
        "recipe.html.j2",
        id=entry.id,
        r=recipe,
        latest=entry.latest,
        runs=entry.runs,
        columns=_columns(entry.latest.levels) if entry.latest else [],
        charts=recipe_charts(entry),
        history_chart=history_chart(entry),
        comparisons=view.comparison_rows(entry),
        metric_labels=view.METRIC_LABELS,
        roof=view.roofline(entry),
        launch=view.launch_blocks(recipe),
        bench=view.bench_text(recipe, first_level),
        validation=validation,
        provenance=view.provenance_line,
        methodology_url=link(path, METHODOLOGY),
        flag_text=lambda name: " ".join(flag_words(name, recipe.serving.flags[name])),
    )


def recipe_page(entry: Entry, validation: view.Validation | None, body: str, compared: bool = False) -> Page:
    """The recipe page from its body; `compared` when a comparison page for its model and platform exists."""
    recipe, path = entry.recipe, recipe_path(entry)
    stale = _is_stale(entry, validation)
    head = render(
        "recipe_head.html.j2",
        r=recipe,
        validation=validation,
        stale=stale,
        warnings=sum(f.level == "warning" for f in validation.findings) if validation else 0,
        hardware=view.hardware_line(recipe),
        topology=view.topology_label(recipe),
        verified=entry.verified,
        compare_url=link(path, compare_path(recipe.model, recipe.hardware.platform)) if compared else "",
    )
    return Page(path, recipe.title, recipe.summary, head=head, lead=paragraphs(recipe.summary), body=body)


def render_recipe(entry: Entry, validation: view.Validation | None = None, compared: bool = False) -> Page:
    """The whole recipe page."""
    return recipe_page(entry, validation, recipe_body(entry, validation), compared)


def index_rows(entries: list[Entry], validations: dict[str, view.Validation] | None = None) -> list[dict[str, Any]]:
    """One row per recipe with its headline figures and the vLLM releases that accept its flags."""
    rows = []
    for entry in entries:
        recipe, run = entry.recipe, entry.latest
        validation = (validations or {}).get(entry.id)
        best = view.best_generation(run)
        single = run.level(1) if run else None
        rows.append(
            {
                "url": link(INDEX, recipe_path(entry)),
                "title": recipe.title,
                "model": recipe.model,
                "hardware": recipe.hardware.name,
                "topology": view.topology_label(recipe),
                "status": recipe.status,
                "verified": entry.verified.isoformat() if entry.verified else None,
                "single": single.generation_tps if single else None,
                "best": best.generation_tps if best else None,
                "best_c": best.concurrency if best else None,
                "text": " ".join([recipe.title, recipe.model, *recipe.serving.flags]).lower(),
                "vllm": " ".join(accepted_by(validation.drift)) if validation else "",
            }
        )
    return rows


FILTERS = [("model", "Model"), ("hardware", "Hardware"), ("topology", "Topology"), ("status", "Status")]
INDEX_LEAD = (
    "<p>How to serve a model on a given machine, with the exact launch command and dated numbers for every "
    "concurrency. Every recipe's flags are checked against vLLM's own argument parser before it is published; "
    "every figure says whether it was imported from a named source or measured by the catalogue's runner. "
    'See <a href="{methodology}">how numbers are measured</a> and the <a href="{compare}">side-by-side comparisons</a>.</p>'
)


def render_index(entries: list[Entry], validations: dict[str, view.Validation] | None = None) -> Page:
    """The catalogue index: every recipe, sortable and filterable (also by the vLLM releases that accept it)."""
    rows = index_rows(entries, validations)
    options = {key: sorted({str(row[key]) for row in rows}) for key, _ in FILTERS}
    options["vllm"] = sorted({v for row in rows for v in row["vllm"].split()}, key=version_key, reverse=True)
    lead = INDEX_LEAD.format(methodology=link(INDEX, METHODOLOGY), compare=link(INDEX, COMPARE_INDEX))
    body = render("index.html.j2", rows=rows, filters=FILTERS, options=options)
    title = "LLM inference recipes"
    return Page(INDEX, title, "Dated, reproducible vLLM serving recipes with validated launch commands.", lead=lead, body=body, hide=("navigation",))


COMPARE_METRICS = [
    ("generation", "Generation (tok/s)", lambda lv: lv.generation_tps, True, "Sustained output tok/s; higher is better."),
    ("prefill", "Prefill (tok/s)", lambda lv: lv.prefill_tps, True, "Prompt tok/s; higher is better."),
    ("ttft", "Time to first token (ms)", lambda lv: lv.ttft_ms.mean if lv.ttft_ms else None, False, "Mean TTFT; lower is better."),
    ("peak", "Peak (tok/s)", lambda lv: lv.peak_tps, True, "Highest one-second output rate; higher is better."),
]


def _short_names(ids: list[str]) -> list[str]:
    """Ids without the '-'-separated words they all share: gptoss-120b-topology-solo -> topology-solo."""
    common = os.path.commonprefix([i.split("-") for i in ids])
    return ["-".join(i.split("-")[len(common):]) or i for i in ids]


def _winner_rows(levels: list[list[LevelResult]], get: Callable[[LevelResult], Any], higher: bool) -> list[dict[str, Any]]:
    rows = []
    for c in sorted({lv.concurrency for ls in levels for lv in ls if get(lv) is not None}):
        values = [next((get(lv) for lv in ls if lv.concurrency == c), None) for ls in levels]
        present = sorted(((v, i) for i, v in enumerate(values) if v is not None), reverse=higher)
        best = present[0][1] if len(present) > 1 else None
        margin = (present[0][0] - present[1][0]) / present[1][0] * 100 if len(present) > 1 and present[1][0] else None
        rows.append({"c": c, "cells": values, "best": best, "margin": margin})
    return rows


def render_compare(model: str, platform: str, members: list[Entry]) -> Page:
    """Side-by-side tables per metric with a winner column."""
    path = compare_path(model, platform)
    shorts = _short_names([m.id for m in members])
    member_views = [
        {"url": link(path, recipe_path(m)), "recipe": m.recipe, "short": s, "topology": view.topology_label(m.recipe),
         "status": m.recipe.status, "verified": m.verified}
        for m, s in zip(members, shorts)
    ]
    levels = [m.latest.levels if m.latest else [] for m in members]
    tables = []
    for anchor, title, get, higher, note in COMPARE_METRICS:
        if sum(any(get(lv) is not None for lv in ls) for ls in levels) < 2:
            continue
        series = [Series(s, _points(ls, get)) for s, ls in zip(shorts, levels)]
        chart = line_chart(f"{model}: {title.lower()}", title.split(" (")[-1].rstrip(")"), series) if len(members) <= MAX_SERIES else ""
        tables.append({"anchor": anchor, "title": title, "note": note, "rows": _winner_rows(levels, get, higher), "chart": chart})
    lead = paragraphs(
        f"Recipes for `{model}` on the `{platform}` platform, side by side. The winner column names the best "
        "recipe at each concurrency and its margin over the runner-up."
    )
    body = render("compare.html.j2", members=member_views, tables=tables, max_series=MAX_SERIES)
    title = f"{model} on {platform}: recipes compared"
    return Page(path, title, f"{len(members)} recipes for {model} on {platform}, compared per concurrency.", lead=lead, body=body)


def render_compare_index(groups: dict[tuple[str, str], list[Entry]]) -> Page:
    """The list of comparison pages."""
    items = [{"url": link(COMPARE_INDEX, compare_path(model, platform)), "model": model, "platform": platform,
              "count": len(members)} for (model, platform), members in groups.items()]
    lead = "<p>Recipes that share a model and a hardware platform, side by side.</p>"
    return Page(COMPARE_INDEX, "Comparisons", "Recipes that share a model and a hardware platform, side by side.",
                lead=lead, body=render("compare_index.html.j2", groups=items))


def page_jobs(
    entries: list[Entry], validations: dict[str, view.Validation] | None = None, bodies: dict[str, str] | None = None
) -> list[Callable[[], Page]]:
    """One call per generated page, each independent of the others (so they can run in any process).

    `bodies` are recipe bodies already rendered, by id.
    """
    validations, bodies = validations or {}, bodies or {}
    published = [e for e in entries if e.recipe.publish]
    groups = view.comparable_groups(published)
    grouped = {e.id for members in groups.values() for e in members}
    jobs: list[Callable[[], Page]] = [partial(render_index, published, validations)]
    for e in entries:
        validation = validations.get(e.id)
        body = bodies.get(e.id) or recipe_body(e, validation)
        jobs.append(partial(recipe_page, e, validation, body, e.id in grouped))
    jobs.append(partial(render_compare_index, groups))  # the nav links to it, so it exists even when empty
    jobs += [partial(render_compare, model, platform, members) for (model, platform), members in groups.items()]
    return jobs


def build_pages(
    entries: list[Entry], validations: dict[str, view.Validation] | None = None, bodies: dict[str, str] | None = None
) -> dict[str, Page]:
    """Every generated page by path."""
    return {page.path: page for page in (job() for job in page_jobs(entries, validations, bodies))}
