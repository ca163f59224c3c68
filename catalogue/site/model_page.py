"""A page per model: its recipes grouped by hardware and Sparks, each with the headline figures its own page leads
with (catalogue.site.headline), which recipe to start from for which need, and the like-for-like comparisons."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from catalogue.models.loading import Entry
from catalogue.site import view
from catalogue.site.headline import Figure, figures
from catalogue.site.index_page import index_row
from catalogue.site.page import Page
from catalogue.site.templating import fmt_num, render
from catalogue.site.urls import link, model_path, recipe_path


@dataclass(frozen=True)
class ModelRecipe:
    """One recipe on its model's page."""

    entry: Entry
    row: dict[str, Any]
    """Its index row (catalogue.site.index_page.index_row)."""
    figures: list[Figure]
    url: str

    @property
    def by_key(self) -> dict[str, Figure]:
        return {f.key: f for f in self.figures}


@dataclass(frozen=True)
class Advice:
    """Which recipe to start from for one need, and the figure that says so."""

    need: str
    recipe: ModelRecipe
    why: str


def model_groups(entries: list[Entry]) -> dict[str, list[Entry]]:
    """Published recipes by model, models in family and name order, recipes in catalogue order."""
    groups: dict[str, list[Entry]] = {}
    for entry in sorted(entries, key=lambda e: (view.model_family(e.recipe.model).lower(), e.recipe.model.lower())):
        groups.setdefault(entry.recipe.model, []).append(entry)
    return groups


def _one_workload(recipes: list[ModelRecipe], key: str) -> list[ModelRecipe]:
    """The recipes with figure `key` under the workload most of them measured (figures of different workloads are not
    compared)."""
    having = [r for r in recipes if r.row[key] is not None]
    counts: dict[str, int] = {}
    for r in having:
        counts[r.row["workload"]] = counts.get(r.row["workload"], 0) + 1
    if not counts:
        return []
    common = max(counts, key=lambda w: (counts[w], w))
    return [r for r in having if r.row["workload"] == common]


def _max_len(entry: Entry) -> int | None:
    value = entry.recipe.serving.flags.get("max-model-len")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _on(recipe: ModelRecipe) -> str:
    """' on 2 Sparks' for a set-up of several machines, else ''."""
    nodes = recipe.row.get("nodes", 1)
    return f" on {nodes} Sparks" if nodes > 1 else ""


def advice(recipes: list[ModelRecipe]) -> list[Advice]:
    """For one user (the highest c=1), for many users (the highest best generation per Spark) and for the longest
    context (the largest --max-model-len): each compared only among recipes that measured the same workload."""
    out = []
    single = _one_workload(recipes, "single")
    if len(single) > 1:
        top = max(single, key=lambda r: r.row["single"])
        out.append(
            Advice(
                "one user at a time",
                top,
                f"{fmt_num(top.row['single'])} tok/s at c=1{_on(top)}, the highest of {len(single)} recipes "
                f"measured under {top.row['workload']}",
            )
        )
    batch = _one_workload(recipes, "per_node")
    if len(batch) > 1:
        top = max(batch, key=lambda r: r.row["per_node"])
        out.append(
            Advice(
                "many users at once",
                top,
                f"{fmt_num(top.row['per_node'])} tok/s per Spark at c={top.row['best_c']}{_on(top)}, the highest "
                f"of {len(batch)} recipes measured under {top.row['workload']}",
            )
        )
    lengths = [(n, r) for r in recipes if (n := _max_len(r.entry)) is not None]
    if len(lengths) > 1 and len({n for n, _ in lengths}) > 1:
        n, top = max(lengths, key=lambda p: p[0])
        out.append(Advice("the longest context", top, f"--max-model-len {n:,} tokens, the most of {len(lengths)}"))
    return out


def render_model(model: str, entries: list[Entry], compare_links: list[tuple[str, str]]) -> Page:
    """The model's page; `compare_links`: (platform, comparison page path) for each comparison of this model."""
    path = model_path(model)
    recipes = [ModelRecipe(e, row := index_row(e, None), figures(row), link(path, recipe_path(e))) for e in entries]
    hardware: dict[tuple[str, int], list[ModelRecipe]] = {}
    for r in sorted(recipes, key=lambda r: (r.row["hardware"], r.row["nodes"], not r.figures)):
        hardware.setdefault((r.row["hardware"], r.row["nodes"]), []).append(r)
    measured = sum(bool(r.figures) for r in recipes)
    tips = advice(recipes)
    body = render(
        "model.html.j2",
        path=path,
        hardware=hardware,
        tips=tips,
        measured=measured,
        compare=[(platform, link(path, target)) for platform, target in compare_links],
    )
    family = view.model_family(model)
    count = f"{len(recipes)} recipe{'s' if len(recipes) > 1 else ''}"
    lead = (
        f"<p>{count} for <code>{html.escape(model)}</code> (family {html.escape(family)}), {measured} with dated "
        "figures. Figures of different workloads are not comparable: each names its own.</p>"
    )
    return Page(
        path,
        model,
        f"{count} for {model}: headline figures, which to start from, launch commands.",
        lead=lead,
        body=body,
        hide=("navigation",),
    )
