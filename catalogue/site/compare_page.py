"""The comparison pages: recipes of one model on one platform, side by side within each workload, and their list."""

from __future__ import annotations

from catalogue.models.loading import Entry
from catalogue.models.topology import nodes_used
from catalogue.site import capacity_headline, view
from catalogue.site.charts import Series, line_chart, pareto_chart
from catalogue.site.compare import Group, Member, capacity_groups, compare, pareto_points
from catalogue.site.page import Page
from catalogue.site.prose import paragraphs
from catalogue.site.quality_view import KINDS, compare_rows
from catalogue.site.run_charts import pareto_series, points
from catalogue.site.templating import render
from catalogue.site.urls import COMPARE_INDEX, link, recipe_path


def compare_path(model: str, platform: str) -> str:
    """Where a comparison page goes."""
    return f"compare/{view.group_slug(model, platform)}.md"


def _short_names(ids: list[str]) -> list[str]:
    """Ids without the '-'-separated words they all share: gptoss-120b-topology-solo -> topology-solo."""
    words = [i.split("-") for i in ids]
    shared = 0
    while all(len(w) > shared and w[shared] == words[0][shared] for w in words):
        shared += 1
    return ["-".join(w[shared:]) or i for w, i in zip(words, ids)]


def _group_charts(model: str, group: Group) -> dict[str, str]:
    """The group's Pareto chart, and one chart per table (per node where the table ranks per node)."""
    charts = {
        "pareto": pareto_chart(
            f"{model}, {group.workload.describe()}: tok/s per user against output tok/s per node",
            [pareto_series(m.short, pareto_points(m), m.run.levels if m.run else []) for m in group.members],
        )
    }
    for table in group.tables:
        metric = table.metric
        series = [
            Series(m.short, points(m.run.levels if m.run else [], metric.get, m.nodes if table.per_node else 1))
            for m in group.members
        ]
        unit = metric.unit + (" per node" if table.per_node else "")
        charts[metric.name] = line_chart(f"{model}: {metric.label.lower()} against concurrency", unit, series)
    return charts


def render_compare(model: str, platform: str, entries: list[Entry]) -> Page:
    """Recipes compared within each workload; the others listed apart with the reason."""
    path = compare_path(model, platform)
    members = [
        Member(e, s, nodes_used(e.recipe, e.latest)) for e, s in zip(entries, _short_names([e.id for e in entries]))
    ]
    groups, apart = compare(members)
    about = {
        m.short: {
            "url": link(path, recipe_path(m.entry)),
            "topology": view.topology_label(m.entry.recipe),
            "provenance": (
                ((note.capitalize() + ". ") if (note := view.partial_note(m.run)) else "") + view.provenance_line(m.run)
                if m.run
                else ""
            ),
        }
        for m in members
    }
    cap_groups, cap_apart = capacity_groups(members)
    capacities = (
        " Capacities are ranked only under the same workload and the same latency objective."
        if cap_groups or cap_apart
        else ""
    )
    lead = paragraphs(
        f"Recipes for `{model}` on the `{platform}` platform. Figures are put side by side only when the runs measured "
        "the same workload (tool, prompts, lengths, repetitions); set-ups with more machines are ranked by throughput "
        f"per node.{capacities} Everything else is listed apart, with the reason."
    )
    body = render(
        "compare.html.j2",
        groups=groups,
        apart=apart,
        about=about,
        charts=[_group_charts(model, g) for g in groups],
        cap_groups=cap_groups,
        cap_apart=cap_apart,
        cap_figure=capacity_headline.capacity_figure,
        bracket=capacity_headline.bracket_text,
        quality_rows=compare_rows([(m.short, m.entry) for m in members]),
        quality_kinds=[label for _, label in KINDS],
    )
    title = f"{model} on {platform}: recipes compared"
    return Page(
        path,
        title,
        f"{len(entries)} recipes for {model} on {platform}, compared like for like.",
        lead=lead,
        body=body,
        hide=("navigation", "toc"),
    )


def render_compare_index(groups: dict[tuple[str, str], list[Entry]]) -> Page:
    """The list of comparison pages."""
    items = [
        {
            "url": link(COMPARE_INDEX, compare_path(model, platform)),
            "model": model,
            "platform": platform,
            "count": len(members),
        }
        for (model, platform), members in groups.items()
    ]
    lead = "<p>Recipes that share a model and a hardware platform, side by side.</p>"
    return Page(
        COMPARE_INDEX,
        "Comparisons",
        "Recipes that share a model and a hardware platform, side by side.",
        lead=lead,
        body=render("compare_index.html.j2", groups=items),
    )
