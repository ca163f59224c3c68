"""Every page of the catalogue as a `Page`: recipe pages, the index, comparison pages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from catalogue.benchmark import BenchmarkRun, LevelResult, MeasuredProvenance
from catalogue.engine_timing import level_bursts
from catalogue.flags.snapshot import version_key
from catalogue.launch import flag_words
from catalogue.loading import Entry
from catalogue.metrics import BY_NAME, METRICS, Metric, p99_withheld
from catalogue.site import capacity_headline, openloop, view
from catalogue.site.agents_view import agents_section, capacity_text
from catalogue.site.arena_view import ArenaSection, arena_section
from catalogue.site.asks import machine_asks
from catalogue.site.charts import Series, line_chart, pareto_chart
from catalogue.site.compare import Group, Member, capacity_groups, compare, pareto_points, run_pareto_points
from catalogue.site.history import history_rows, main_metric, trend_charts
from catalogue.site.index_page import IndexRow, render_index
from catalogue.site.machine_view import machine_box, throttled
from catalogue.site.page import Page
from catalogue.site.passport_view import where_it_ran
from catalogue.site.prose import paragraphs
from catalogue.site.quality_view import KINDS, compare_rows, quality_box
from catalogue.site.spec_view import spec_summary
from catalogue.site.templating import render
from catalogue.site.urls import COMPARE_INDEX, METHODOLOGY, file_link, link, recipe_path
from catalogue.sparkrun_export import sparkrun_path
from catalogue.topology import nodes_used


def compare_path(model: str, platform: str) -> str:
    """Where a comparison page goes."""
    return f"compare/{view.group_slug(model, platform)}.md"


def _columns(levels: list[LevelResult]) -> list[Metric]:
    return [m for m in METRICS if any(m.get(lv) is not None for lv in levels)]


def _has_spread(levels: list[LevelResult]) -> bool:
    return any(m.spread(lv) for m in METRICS if m.spread for lv in levels)


def _points(
    levels: list[LevelResult], get: Callable[[LevelResult], Any], scale: float = 1.0
) -> list[tuple[float, float]]:
    return [(lv.concurrency, float(v) / scale) for lv in levels if (v := get(lv)) is not None]


def _series(levels: list[LevelResult], names: list[str]) -> list[Series]:
    return [Series(BY_NAME[n].label, _points(levels, BY_NAME[n].get)) for n in names]


def _pareto_series(name: str, points: list[tuple[float, float]], levels: list[LevelResult]) -> Series:
    concurrencies = [lv.concurrency for lv in sorted(levels, key=lambda lv: lv.concurrency) if lv.generation_tps]
    return Series(name, points, labels={x: f"c={c}" for (x, _), c in zip(points, concurrencies)})


def recipe_charts(entry: Entry, run: BenchmarkRun | None = None, about: str = "") -> list[str]:
    """Throughput and TTFT against concurrency, and interactivity against throughput, for one run (the newest
    by default); `about` names its workload in the titles."""
    run = run if run is not None else entry.latest
    if run is None or len(run.levels) < 2:
        return []
    title = entry.recipe.title + (f" ({about})" if about else "")
    ttft = [
        Series(
            "TTFT mean",
            _points(run.levels, BY_NAME["ttft_mean_ms"].get),
            spread={lv.concurrency: lv.ttft_ms.std for lv in run.levels if lv.ttft_ms and lv.ttft_ms.std},
        )
    ]
    nodes = nodes_used(entry.recipe, run)
    charts = [
        line_chart(
            f"{title}: throughput against concurrency",
            "tok/s",
            _series(run.levels, ["prefill_tps", "generation_tps", "peak_tps", "total_tps"])
            if main_metric(run).name == "prefill_tps"
            else _series(run.levels, ["generation_tps", "peak_tps", "total_tps"]),
        ),
        line_chart(f"{title}: time to first token against concurrency (± stdev over requests)", "ms", ttft),
        pareto_chart(
            f"{title}: tok/s per user against output tok/s per node",
            [
                _pareto_series(
                    f"{nodes} node(s)" if nodes > 1 else "this recipe", run_pareto_points(run, nodes), run.levels
                )
            ],
        ),
    ]
    return [c for c in charts if c]


def history_charts(entry: Entry) -> list[str]:
    """The figure each workload measures best against concurrency, one line per run, one chart per workload with
    two or more such runs."""
    out = []
    for group in view.workloads(entry):
        runs = [run for run in group.runs[::-1] if len(run.levels) > 1]
        if len(runs) < 2:
            continue
        metric = main_metric(group.run)
        series = [
            Series(
                (run.label or run.stamp) + (" (partial)" if not run.complete else ""), _points(run.levels, metric.get)
            )
            for run in runs
        ]
        out.append(
            line_chart(
                f"{entry.recipe.title}: {metric.label.lower()} across runs ({group.describe})", metric.unit, series
            )
        )
    return out


def history_chart(entry: Entry) -> str:
    """The first workload's chart of `history_charts` (kept for callers that want one)."""
    charts = history_charts(entry)
    return charts[0] if charts else ""


@dataclass(frozen=True)
class WorkloadSection:
    """One workload on the recipe page: its shown run, table columns, charts."""

    anchor: str
    group: view.WorkloadRuns
    columns: list[Metric]
    spread: bool
    charts: list[str]
    withheld: list[str]
    older: int
    """How many older runs of this workload the history keeps."""
    open_loop: openloop.OpenLoop | None = None
    """The run's open-loop rate levels: capacity headline, rate table, latency–load charts."""
    withheld_p99: list[str] = field(default_factory=list)
    """Levels whose TTFT p99 is not published: too few requests to bound it."""
    arena: ArenaSection | None = None
    """A named profile's (the Spark Arena's) line and the leaderboard figures of its workload."""


def workload_sections(entry: Entry, headline: tuple | None = None) -> list[WorkloadSection]:
    """The newest run of each workload, headline workload (or newest) first, ready for the page."""
    groups = view.workloads(entry, headline)
    many = len(groups) > 1
    return [
        WorkloadSection(
            f"workload-{i}",
            g,
            _columns(g.run.levels),
            _has_spread(g.run.levels),
            recipe_charts(entry, g.run, g.describe if many else ""),
            view.withheld_peaks(g.run),
            len(g.runs) - 1,
            openloop.open_loop(g.run, entry.recipe.title + (f" ({g.describe})" if many else "")),
            view.withheld_peaks(g.run, p99_withheld),
            arena_section(entry, g),
        )
        for i, g in enumerate(groups, 1)
    ]


def staleness(entry: Entry, validation: view.Validation | None) -> str | None:
    """'measured with vLLM 0.32.0, 1 release behind 0.33.0' when the newest measured run used an older vLLM
    than the newest one the catalogue knows (the checker's, or the newest committed release snapshot)."""
    run = entry.latest
    if validation is None or run is None or not isinstance(run.provenance, MeasuredProvenance):
        return None
    used = version_key(run.provenance.vllm_version)
    known = {validation.vllm_version, *(cell.version for cell in validation.drift)}
    newer = sorted((v for v in known if version_key(v) > used), key=version_key)
    if not newer:
        return None
    count = len(newer)
    releases = f"{count} release{'s' if count > 1 else ''}"
    return f"measured with vLLM {run.provenance.vllm_version}, {releases} behind {newer[-1]}"


def recipe_body(entry: Entry, validation: view.Validation | None = None) -> str:
    """The recipe page's body: every section under the title, as HTML."""
    recipe, path = entry.recipe, recipe_path(entry)
    first_level = entry.latest.levels[0].concurrency if entry.latest else recipe.sweep.concurrency[0]
    return render(
        "recipe.html.j2",
        id=entry.id,
        r=recipe,
        sections=workload_sections(entry),
        runs=entry.runs,
        history_charts=history_charts(entry),
        history=history_rows(entry),
        trend_charts=trend_charts(entry),
        comparisons=view.comparison_rows(entry),
        roof=view.roofline(entry),
        launch=view.launch_blocks(recipe, entry.platform),
        repro=view.reproduce_block(entry),
        refresh_command=view.refresh_command(entry.id, recipe),
        platform_multi_node=bool(entry.platform and entry.platform.multi_node),
        bench=view.bench_text(recipe, first_level),
        asks=machine_asks(recipe, entry.platform),
        validation=validation,
        provenance=view.provenance_line,
        methodology_url=link(path, METHODOLOGY),
        sparkrun_url=file_link(path, sparkrun_path(entry.id)) if recipe.publish else None,
        flag_text=lambda name: " ".join(flag_words(name, recipe.serving.flags[name])),
        where=where_it_ran,
        quality=quality_box,
        machine=lambda run: machine_box(run, entry.platform),
        throttled=lambda level: throttled(level, entry.platform),
        bursts=level_bursts,
        spec=spec_summary(recipe, entry.runs),
        simulated=entry.simulated,
        agents=agents_section(entry),
        capacity_text=capacity_text,
    )


def recipe_page(entry: Entry, validation: view.Validation | None, body: str, compared: bool = False) -> Page:
    """The recipe page from its body; `compared` when a comparison page for its model and platform exists."""
    recipe, path = entry.recipe, recipe_path(entry)
    stale = staleness(entry, validation)
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
            [_pareto_series(m.short, pareto_points(m), m.run.levels if m.run else []) for m in group.members],
        )
    }
    for table in group.tables:
        metric = table.metric
        series = [
            Series(m.short, _points(m.run.levels if m.run else [], metric.get, m.nodes if table.per_node else 1))
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


def page_jobs(
    entries: list[Entry],
    validations: dict[str, view.Validation] | None = None,
    bodies: dict[str, str] | None = None,
    rendered: dict[str, tuple[bool, Page]] | None = None,
    index_known: dict[str, IndexRow] | None = None,
) -> list[Callable[[], Page]]:
    """One call per generated page, each independent of the others (so they can run in any process).

    `bodies` are recipe bodies already rendered, by id; `rendered`, whole recipe pages already rendered
    from the same entry and validation, by id, with whether they link a comparison page (`compared_ids`);
    `index_known`, index rows already made from the same entry and validation, by id.
    """
    validations, bodies, rendered = validations or {}, bodies or {}, rendered or {}
    published = [e for e in entries if e.recipe.publish]
    groups = comparison_groups(entries)
    compared = compared_ids(groups)
    jobs: list[Callable[[], Page]] = [partial(render_index, published, validations, index_known)]
    for e in entries:
        known = rendered.get(e.id)
        if known is not None and known[0] == (e.id in compared):
            jobs.append(partial(_same, known[1]))
            continue
        validation = validations.get(e.id)
        body = bodies.get(e.id) or recipe_body(e, validation)
        jobs.append(partial(recipe_page, e, validation, body, e.id in compared))
    jobs.append(partial(render_compare_index, groups))  # the nav links to it, so it exists even when empty
    jobs += [partial(render_compare, model, platform, members) for (model, platform), members in groups.items()]
    return jobs


def comparison_groups(entries: list[Entry]) -> dict[tuple[str, str], list[Entry]]:
    """The comparison pages' groups: published recipes by model and platform (see view.comparable_groups)."""
    return view.comparable_groups([e for e in entries if e.recipe.publish])


def compared_ids(groups: dict[tuple[str, str], list[Entry]]) -> set[str]:
    """Recipes that have a comparison page (their page links to it)."""
    return {e.id for members in groups.values() for e in members}


def _same(page: Page) -> Page:
    return page


def build_pages(
    entries: list[Entry], validations: dict[str, view.Validation] | None = None, bodies: dict[str, str] | None = None
) -> dict[str, Page]:
    """Every generated page by path."""
    return {page.path: page for page in (job() for job in page_jobs(entries, validations, bodies))}
