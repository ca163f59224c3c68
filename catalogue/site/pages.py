"""Render every page of the catalogue as Markdown: recipe pages, the index, comparison pages."""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from catalogue.benchmark import LevelResult, MeasuredProvenance
from catalogue.flags.snapshot import version_key
from catalogue.launch import flag_words
from catalogue.loading import Entry
from catalogue.site import view
from catalogue.site.charts import Series, line_chart

TEMPLATES = Path(__file__).parent / "templates"


def fmt_num(value: Any) -> str:
    """Figures for tables: thousands separators, no trailing zeros, an em dash for none."""
    if value is None or value == "":
        return "—"
    number = float(value)
    if number.is_integer():
        return f"{int(number):,}"
    return f"{number:,.1f}" if abs(number) >= 100 else f"{number:,.2f}".rstrip("0").rstrip(".")


CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def markdown_text(value: str) -> Markup:
    """Recipe prose: `<`, `>` and `&` escaped outside code spans (Markdown escapes inside them)."""
    out, last = [], 0
    for match in CODE_SPAN.finditer(value.strip()):
        out.append(html.escape(value.strip()[last : match.start()], quote=False))
        out.append(match.group(0))
        last = match.end()
    out.append(html.escape(value.strip()[last:], quote=False))
    return Markup("".join(out))


def attr_text(value: str) -> str:
    """Front-matter text: the theme puts it into <title> and attributes unescaped, so escape it here."""
    return html.escape(" ".join(value.split()), quote=True)


def code_span(text: str) -> Markup:
    """Inline code whose backtick fence is longer than any run inside it."""
    ticks = "`" * (max((len(r) for r in _backtick_runs(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Markup(f"{ticks}{pad}{text}{pad}{ticks}")


def code_fence(text: str, lang: str = "") -> Markup:
    """A fenced code block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in text.split("\n") for run in _backtick_runs(run)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markup(f"{fence}{lang}\n{text}\n{fence}")


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for char in line:
        current = current + char if char == "`" else ""
        runs.append(current)
    return runs


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The Jinja2 environment: autoescaping on, so every recipe string is HTML-escaped."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined, trim_blocks=False)
    env.filters.update(num=fmt_num, md=markdown_text, fence=code_fence, code=code_span, attr_text=attr_text)
    return env


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


def render_recipe(entry: Entry, validation: view.Validation | None = None) -> str:
    """The recipe page."""
    recipe = entry.recipe
    first_level = entry.latest.levels[0].concurrency if entry.latest else recipe.sweep.concurrency[0]
    return environment().get_template("recipe.md.j2").render(
        id=entry.id,
        r=recipe,
        hardware=view.hardware_line(recipe),
        topology=view.topology_label(recipe),
        verified=entry.verified,
        latest=entry.latest,
        runs=entry.runs,
        columns=_columns(entry.latest.levels) if entry.latest else [],
        charts=recipe_charts(entry),
        history_chart=history_chart(entry),
        comparisons=view.comparison_rows(entry),
        metric_labels=view.METRIC_LABELS,
        roof=view.roofline(entry),
        launch=view.launch_text(recipe),
        bench=view.bench_text(recipe, first_level),
        validation=validation,
        stale=_is_stale(entry, validation),
        provenance=view.provenance_line,
        flag_text=lambda name: code_span(" ".join(flag_words(name, recipe.serving.flags[name]))),
    )


def index_rows(entries: list[Entry]) -> list[dict[str, Any]]:
    """One row per recipe with its headline figures."""
    rows = []
    for entry in entries:
        recipe, run = entry.recipe, entry.latest
        best = view.best_generation(run)
        single = run.level(1) if run else None
        rows.append(
            {
                "id": entry.id,
                "title": recipe.title,
                "model": recipe.model,
                "hardware": recipe.hardware.name,
                "topology": view.topology_label(recipe),
                "status": recipe.status,
                "verified": entry.verified.isoformat() if entry.verified else None,
                "single": single.generation_tps if single else None,
                "best": best.generation_tps if best else None,
                "best_c": best.concurrency if best else None,
                "text": " ".join([recipe.title, recipe.model, recipe.summary, *recipe.serving.flags]).lower(),
            }
        )
    return rows


FILTERS = [("model", "Model"), ("hardware", "Hardware"), ("topology", "Topology"), ("status", "Status")]


def render_index(entries: list[Entry]) -> str:
    """The catalogue index: every recipe, sortable and filterable."""
    rows = index_rows(entries)
    options = {key: sorted({str(row[key]) for row in rows}) for key, _ in FILTERS}
    groups = view.comparable_groups(entries)
    return environment().get_template("index.md.j2").render(rows=rows, filters=FILTERS, options=options, groups=groups)


COMPARE_METRICS = [
    ("Generation (tok/s)", lambda lv: lv.generation_tps, True, "Sustained output tok/s; higher is better."),
    ("Prefill (tok/s)", lambda lv: lv.prefill_tps, True, "Prompt tok/s; higher is better."),
    ("Time to first token (ms)", lambda lv: lv.ttft_ms.mean if lv.ttft_ms else None, False, "Mean TTFT; lower is better."),
    ("Peak (tok/s)", lambda lv: lv.peak_tps, True, "Highest one-second output rate; higher is better."),
]


def _short_names(ids: list[str]) -> list[str]:
    """Ids without the '-'-separated words they all share: gptoss-120b-topology-solo -> topology-solo."""
    common = os.path.commonprefix([i.split("-") for i in ids])
    return ["-".join(i.split("-")[len(common):]) or i for i in ids]


def render_compare(model: str, platform: str, members: list[Entry]) -> str:
    """Side-by-side tables per metric with a winner column."""
    shorts = _short_names([m.id for m in members])
    member_views = [
        {"id": m.id, "recipe": m.recipe, "short": s, "topology": view.topology_label(m.recipe), "status": m.recipe.status, "verified": m.verified}
        for m, s in zip(members, shorts)
    ]
    tables = []
    for title, get, higher, note in COMPARE_METRICS:
        levels = [m.latest.levels if m.latest else [] for m in members]
        concurrencies = sorted({lv.concurrency for ls in levels for lv in ls if get(lv) is not None})
        if sum(any(get(lv) is not None for lv in ls) for ls in levels) < 2:
            continue
        rows = []
        for c in concurrencies:
            values = [next((get(lv) for lv in ls if lv.concurrency == c), None) for ls in levels]
            present = sorted(((v, i) for i, v in enumerate(values) if v is not None), reverse=higher)
            best = present[0][1] if len(present) > 1 else None
            margin = (present[0][0] - present[1][0]) / present[1][0] * 100 if len(present) > 1 and present[1][0] else None
            rows.append({"c": c, "cells": values, "best": best, "margin": margin})
        series = [Series(s, _points(ls, get)) for s, ls in zip(shorts, levels)]
        tables.append({"title": title, "note": note, "rows": rows, "chart": line_chart(f"{model}: {title.lower()}", title.split(" (")[-1].rstrip(")"), series)})
    title = f"{model} on {platform}: recipes compared"
    return environment().get_template("compare.md.j2").render(title=title, model=model, platform=platform, members=member_views, tables=tables)


def render_compare_index(groups: dict[tuple[str, str], list[Entry]]) -> str:
    """List of comparison pages."""
    lines = ["# Comparisons", "", "Recipes that share a model and a hardware platform, side by side.", ""]
    for (model, platform), members in groups.items():
        lines.append(f"- [{escape(model)} on {escape(platform)}]({view.group_slug(model, platform)}.md) — {len(members)} recipes")
    return "\n".join(lines) + "\n"


def build_pages(entries: list[Entry], validations: dict[str, view.Validation] | None = None) -> dict[str, str]:
    """Every generated page: relative path -> Markdown."""
    validations = validations or {}
    published = [e for e in entries if e.recipe.publish]
    pages = {"index.md": render_index(published)}
    for entry in entries:
        folder = "recipes" if entry.recipe.publish else "examples"
        pages[f"{folder}/{entry.id}.md"] = render_recipe(entry, validations.get(entry.id))
    groups = view.comparable_groups(published)
    if groups:
        pages["compare/index.md"] = render_compare_index(groups)
        for (model, platform), members in groups.items():
            pages[f"compare/{view.group_slug(model, platform)}.md"] = render_compare(model, platform, members)
    return pages
