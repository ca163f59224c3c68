"""The catalogue's front page: one line per published recipe (its headline figures and the workload they come
from, what it needs, the vLLM releases that accept it), grouped by model family and model, recipes with figures
first and the launch-only ones folded after them; filters, sorting and a "what fits my machine" choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from catalogue.flags.drift import accepted_by
from catalogue.flags.snapshot import version_key
from catalogue.models.loading import Entry
from catalogue.models.topology import nodes_used
from catalogue.site import capacity_headline, openloop, view
from catalogue.site.agents_view import agents_index
from catalogue.site.headline import figures
from catalogue.site.machine_view import quotable
from catalogue.site.page import Page
from catalogue.site.templating import render
from catalogue.site.urls import COMPARE_INDEX, INDEX, METHODOLOGY, link, model_path, recipe_path
from catalogue.stats.metrics import tokens_per_joule


def index_rows(entries: list[Entry], validations: dict[str, view.Validation] | None = None) -> list[dict[str, Any]]:
    """One row per recipe with its headline figures (and the workload they come from), what it needs (nodes,
    memory where known) and the vLLM releases that accept its flags."""
    return [index_row(entry, (validations or {}).get(entry.id)) for entry in entries]


@dataclass(frozen=True)
class IndexRow:
    """One recipe's row of the index: its values (filters, sorting) and its HTML. It depends on that recipe
    alone, so a long-lived process keeps it while the recipe is unchanged (build.Rebuilds)."""

    values: dict[str, Any]
    html: str


def index_row_parts(entry: Entry, validation: view.Validation | None) -> IndexRow:
    """One recipe's row, with its HTML."""
    values = index_row(entry, validation)
    return IndexRow(values, render("index_row.html.j2", row=values))


def index_row(entry: Entry, validation: view.Validation | None) -> dict[str, Any]:
    """One recipe's row (see index_rows)."""
    recipe, run = entry.recipe, view.headline_run(entry)
    best = view.best_generation(run, entry.platform)
    single = quotable(run.level(1), entry.platform) if run else None
    efficiency = tokens_per_joule(best) if best else None
    nodes = nodes_used(recipe, run)
    roof = view.roofline(entry)
    memory = view.memory_per_node(recipe)
    searched = view.capacity_run(entry)
    cap = searched.run.capacity if searched else None
    slo = searched.run.slo if searched else None
    row = {
        "url": link(INDEX, recipe_path(entry)),
        "model_url": link(INDEX, model_path(recipe.model)),
        "title": recipe.title,
        "model": recipe.model,
        "family": view.model_family(recipe.model),
        "hardware": recipe.hardware.name,
        "topology": view.topology_label(recipe),
        "nodes": nodes,
        "memory": round(memory, 1) if memory is not None else None,
        "status": recipe.status,
        "verified": entry.verified.isoformat() if entry.verified else None,
        "single": single.generation_tps if single else None,
        "best": best.generation_tps if best else None,
        "best_c": best.concurrency if best else None,
        "per_node": round(best.generation_tps / nodes, 1) if best and best.generation_tps else None,
        "roofline": round(float(roof["share"])) if roof and "share" in roof else None,
        "tokens_per_j": efficiency,
        "tokens_per_j_why": (
            None if efficiency is not None or best is None else (best.machine.not_measured if best.machine else None)
        ),
        "workload": (run.workload.describe() if run.workload else "not stated") if run else "",
        "measured_on": run.measured_on.isoformat() if run and run.measured_on else None,
        "partial": view.partial_note(run),
        "capacity": (cap.rps or 0.0) if cap else None,
        "capacity_text": capacity_headline.capacity_figure(cap) if cap else None,
        "capacity_slo": slo.describe() if slo else None,
        "capacity_short": openloop.slo_short(slo) if slo else None,
        "capacity_workload": (searched.describe if searched and run is not None and searched.run is not run else None),
        **agents_index(entry),
        "capacity_date": searched.run.measured_on.isoformat() if searched and searched.run.measured_on else None,
        "text": " ".join([recipe.title, recipe.model, *recipe.serving.flags]).lower(),
        "vllm": " ".join(accepted_by(validation.drift)) if validation else "",
    }
    row["figures"] = bool(figures(row))
    return row


FILTERS = [
    ("family", "Model family"),
    ("model", "Model"),
    ("hardware", "Hardware"),
    ("nodes", "Sparks"),
    ("topology", "Topology"),
    ("status", "Status"),
]
SORTS = [
    ("single", "Single-stream generation"),
    ("per_node", "Best throughput per node"),
    ("roofline", "Roofline %"),
    ("tokens_per_j", "Output tokens per joule"),
    ("best", "Best generation"),
    ("memory", "Memory per node"),
    ("verified", "Verified"),
    ("capacity", "Capacity within its latency objective"),
    ("agents", "Agent sessions within its latency objective"),
]
"""The index's 'sort by' choices: (column key, label); numbers sort highest first, memory lowest first."""
INDEX_LEAD = (
    "<p>How to serve a model on a given machine, with the exact launch command and dated numbers for every "
    "concurrency. Every recipe's flags are checked against vLLM's own argument parser before it is published; "
    "every figure says whether it was imported from a named source or measured by the catalogue's runner. "
    'See <a href="{methodology}">how numbers are measured</a> and the '
    '<a href="{compare}">side-by-side comparisons</a>.</p>'
)


def grouped(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, list[dict[str, Any]]]]:
    """(family, model, model page URL, rows) in family and model order (case aside), each model's rows in
    catalogue order."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: (r["family"].lower(), r["model"].lower())):
        groups.setdefault((row["family"], row["model"]), []).append(row)
    return [(family, model, members[0]["model_url"], members) for (family, model), members in groups.items()]


def render_index(
    entries: list[Entry],
    validations: dict[str, view.Validation] | None = None,
    known: dict[str, IndexRow] | None = None,
) -> Page:
    """The catalogue index: every recipe, sortable and filterable (also by the vLLM releases that accept it).
    `known`: rows already made from the same entry and validation, by recipe id."""
    known, validations = known or {}, validations or {}
    parts = [known.get(e.id) or index_row_parts(e, validations.get(e.id)) for e in entries]
    rows = [part.values for part in parts]
    html = {id(part.values): Markup(part.html) for part in parts}
    options: dict[str, list[str]] = {key: sorted({str(row[key]) for row in rows}) for key, _ in FILTERS}
    options["nodes"] = sorted({str(row["nodes"]) for row in rows}, key=int)
    options["memory"] = [f"{m:g}" for m in sorted({row["memory"] for row in rows if row["memory"] is not None})]
    options["vllm"] = sorted({v for row in rows for v in row["vllm"].split()}, key=version_key, reverse=True)
    lead = INDEX_LEAD.format(methodology=link(INDEX, METHODOLOGY), compare=link(INDEX, COMPARE_INDEX))
    measured = [
        (family, model, url, [html[id(r)] for r in members])
        for family, model, url, members in grouped([r for r in rows if r["figures"]])
    ]
    launch_only = [html[id(r)] for _, _, _, members in grouped([r for r in rows if not r["figures"]]) for r in members]
    body = render(
        "index.html.j2",
        groups=measured,
        launch_only=launch_only,
        total=len(rows),
        filters=FILTERS,
        options=options,
        sorts=SORTS,
    )
    title = "LLM inference recipes"
    return Page(
        INDEX,
        title,
        "Dated, reproducible vLLM serving recipes with validated launch commands.",
        lead=lead,
        body=body,
        hide=("navigation", "toc"),
    )
