"""Every page of the catalogue as a `Page`: recipe pages, the index, comparison pages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from catalogue.flags.snapshot import version_key
from catalogue.models.benchmark import LevelResult, MeasuredProvenance
from catalogue.models.launch import flag_words
from catalogue.models.loading import Entry
from catalogue.publish.sparkrun_export import sparkrun_path
from catalogue.site import launch_view, openloop, view
from catalogue.site.agents_view import agents_section, capacity_text
from catalogue.site.arena_view import ArenaSection, arena_section
from catalogue.site.asks import MachineAsks, machine_asks
from catalogue.site.compare_page import compare_path, render_compare, render_compare_index
from catalogue.site.headline import figures
from catalogue.site.history import history_rows, trend_charts
from catalogue.site.index_page import IndexRow, index_row, render_index
from catalogue.site.machine_view import machine_box, throttled
from catalogue.site.model_page import model_groups, render_model
from catalogue.site.page import Page
from catalogue.site.passport_view import where_it_ran
from catalogue.site.prose import paragraphs
from catalogue.site.quality_view import quality_box
from catalogue.site.run_charts import history_charts, recipe_charts
from catalogue.site.spec_view import spec_summary
from catalogue.site.templating import render
from catalogue.site.urls import METHODOLOGY, file_link, link, methodology, model_path, recipe_path
from catalogue.stats.engine_timing import level_bursts
from catalogue.stats.metrics import METRICS, Metric, p99_withheld


def _columns(levels: list[LevelResult]) -> list[Metric]:
    return [m for m in METRICS if any(m.get(lv) is not None for lv in levels)]


def _has_spread(levels: list[LevelResult]) -> bool:
    return any(m.spread(lv) for m in METRICS if m.spread for lv in levels)


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


@dataclass(frozen=True)
class RecipeParts:
    """What of a recipe page depends on its entry and flag check alone, made once in the batch that loads it: the
    body and the answer box (both show the launch commands and what the recipe asks of the machine)."""

    body: str
    answer: str


def recipe_parts(
    entry: Entry, validation: view.Validation | None = None, row: dict[str, Any] | None = None
) -> RecipeParts:
    """The body and the answer box, sharing their launch blocks and machine asks; `row`: its index row
    (index_page.index_row) already made with the same validation."""
    launch = launch_view.launch_blocks(entry.recipe, entry.platform)
    asks = machine_asks(entry.recipe, entry.platform)
    return RecipeParts(recipe_body(entry, validation, launch, asks), answer_box(entry, validation, row, launch, asks))


def recipe_body(
    entry: Entry,
    validation: view.Validation | None = None,
    launch: list[launch_view.LaunchBlock] | None = None,
    asks: MachineAsks | None = None,
) -> str:
    """The recipe page's body: every section under the title, as HTML (the answer box is the page's head).
    `launch`, `asks`: the recipe's launch blocks and machine asks, when already made (recipe_parts)."""
    recipe, path = entry.recipe, recipe_path(entry)
    first_level = entry.latest.levels[0].concurrency if entry.latest else recipe.sweep.concurrency[0]
    return render(
        "recipe.html.j2",
        id=entry.id,
        path=path,
        method=lambda topic, anchor="": link(path, methodology(topic), anchor),
        r=recipe,
        sections=workload_sections(entry),
        runs=entry.runs,
        history_charts=history_charts(entry),
        history=history_rows(entry),
        trend_charts=trend_charts(entry),
        comparisons=view.comparison_rows(entry),
        roof=view.roofline(entry),
        launch=launch if launch is not None else launch_view.launch_blocks(recipe, entry.platform),
        repro=launch_view.reproduce_block(entry),
        refresh_command=launch_view.refresh_command(entry.id, recipe),
        platform_multi_node=bool(entry.platform and entry.platform.multi_node),
        bench=launch_view.bench_text(recipe, first_level),
        asks=asks if asks is not None else machine_asks(recipe, entry.platform),
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
        agents=agents_section(entry),
        capacity_text=capacity_text,
    )


def answer_box(
    entry: Entry,
    validation: view.Validation | None,
    row: dict[str, Any] | None = None,
    launch: list[launch_view.LaunchBlock] | None = None,
    asks: MachineAsks | None = None,
) -> str:
    """What a recipe page leads with, under its badges and before any prose (its summary included): the simulator's
    warning, the headline figures with workload and date, what it asks of the machine, the launch command.
    `row`, `launch`, `asks`: made already with the same entry and validation (recipe_parts)."""
    recipe, path = entry.recipe, recipe_path(entry)
    row = row if row is not None else index_row(entry, validation)
    return render(
        "answer.html.j2",
        path=path,
        row=row,
        answer=figures(row),
        r=recipe,
        model_url=link(path, model_path(recipe.model)) if recipe.publish else None,
        launch=launch if launch is not None else launch_view.launch_blocks(recipe, entry.platform),
        refresh_command=launch_view.refresh_command(entry.id, recipe),
        asks=asks if asks is not None else machine_asks(recipe, entry.platform),
        simulated=entry.simulated,
        methodology_url=link(path, METHODOLOGY),
    )


def recipe_page(entry: Entry, validation: view.Validation | None, parts: RecipeParts, compared: bool = False) -> Page:
    """The recipe page from its parts; `compared` when a comparison page for its model and platform exists."""
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
    head += parts.answer
    return Page(path, recipe.title, recipe.summary, head=head, lead=paragraphs(recipe.summary), body=parts.body)


def render_recipe(entry: Entry, validation: view.Validation | None = None, compared: bool = False) -> Page:
    """The whole recipe page."""
    return recipe_page(entry, validation, recipe_parts(entry, validation), compared)


def page_jobs(
    entries: list[Entry],
    validations: dict[str, view.Validation] | None = None,
    made: dict[str, RecipeParts] | None = None,
    rendered: dict[str, tuple[bool, Page]] | None = None,
    index_known: dict[str, IndexRow] | None = None,
    shared: SharedPages | None = None,
) -> list[Callable[[], Page]]:
    """One call per generated page, each independent of the others (so they can run in any process).

    `made`: recipe pages' parts already rendered, by id; `rendered`, whole recipe pages already rendered
    from the same entry and validation, by id, with whether they link a comparison page (`compared_ids`);
    `index_known`, index rows already made from the same entry and validation, by id. `shared`: the model and
    comparison pages of the last build (a serve process's), kept where made from the very same entries.
    """
    validations, made, rendered = validations or {}, made or {}, rendered or {}
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
        parts = made.get(e.id) or recipe_parts(e, validation)
        jobs.append(partial(recipe_page, e, validation, parts, e.id in compared))
    jobs.append(partial(render_compare_index, groups))  # the nav links to it, so it exists even when empty
    shared = shared or SharedPages()
    shared.inputs = {}
    for (model, platform), members in groups.items():
        jobs.append(
            shared.job(compare_path(model, platform), members, (), partial(render_compare, model, platform, members))
        )
    for model, members in model_groups(published).items():
        compares = [(platform, compare_path(model, platform)) for m, platform in groups if m == model]
        jobs.append(shared.job(model_path(model), members, compares, partial(render_model, model, members, compares)))
    return jobs


@dataclass
class SharedPages:
    """Model and comparison pages as a serve process last made them, each with what it was made from: its member
    entries (the very objects: catalogue.site.build.Rebuilds keeps an entry while its files are unchanged) and the
    other arguments. A page whose inputs are the same is not rendered again."""

    pages: dict[str, tuple[list[Entry], object, Page]] = field(default_factory=dict)
    inputs: dict[str, tuple[list[Entry], object]] = field(default_factory=dict)
    """This build's inputs by page path (`remember` keeps them with the pages made)."""

    def job(self, path: str, members: list[Entry], other: object, make: Callable[[], Page]) -> Callable[[], Page]:
        self.inputs[path] = (members, other)
        known = self.pages.get(path)
        if known is not None and _same_entries(known[0], members) and known[1] == other:
            return partial(_same, known[2])
        return make

    def remember(self, pages: dict[str, Page]) -> None:
        self.pages = {path: (*made, pages[path]) for path, made in self.inputs.items() if path in pages}
        self.inputs = {}


def _same_entries(old: list[Entry], new: list[Entry]) -> bool:
    return len(old) == len(new) and all(a is b for a, b in zip(old, new))


def comparison_groups(entries: list[Entry]) -> dict[tuple[str, str], list[Entry]]:
    """The comparison pages' groups: published recipes by model and platform (see view.comparable_groups)."""
    return view.comparable_groups([e for e in entries if e.recipe.publish])


def compared_ids(groups: dict[tuple[str, str], list[Entry]]) -> set[str]:
    """Recipes that have a comparison page (their page links to it)."""
    return {e.id for members in groups.values() for e in members}


def _same(page: Page) -> Page:
    return page


def build_pages(entries: list[Entry], validations: dict[str, view.Validation] | None = None) -> dict[str, Page]:
    """Every generated page by path."""
    return {page.path: page for page in (job() for job in page_jobs(entries, validations))}
