"""The static JSON API (`api/v1/`): the published catalogue as data, built with the site.

`api/v1/index.json` lists every published recipe with its headline figures, its capacity where a run searched one,
and drift verdicts; `api/v1/recipes/<id>.json` holds one recipe, all its runs (concurrency levels, open-loop rate
levels, their SLO and capacity, as the run files hold them) and its drift row; `api/v1/schema/`
holds the JSON Schemas of both, generated from the models below. `api_documents` turns entries
and their flag checks into those files' text; the MkDocs hook and `catalogue export` write them.
The figures are the ones the pages show: the same headline run (`view.headline_run`), the same best
level (`view.best_generation`), the same capacity (`view.capacity_run`), the same drift row
(`flags.drift.drift_row`, computed once by the build).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from catalogue.flags.drift import DriftCell, accepted_by
from catalogue.models.benchmark import BenchmarkRun
from catalogue.models.loading import Entry
from catalogue.models.recipe import Recipe
from catalogue.models.slo import Slo
from catalogue.models.strict import Strict
from catalogue.models.topology import node_count
from catalogue.site.agents_view import ApiAgents
from catalogue.site.agents_view import api_agents as agents
from catalogue.site.machine_view import quotable
from catalogue.site.urls import model_path, page_url, recipe_path
from catalogue.site.view import (
    Validation,
    best_generation,
    capacity_run,
    headline_run,
    model_family,
    topology_label,
    withheld_peaks,
)
from catalogue.stats.capacity_conditioning import noise_bound
from catalogue.stats.metrics import p99_withheld, tokens_per_joule

API_VERSION: Literal["v1"] = "v1"
API_DIR = f"api/{API_VERSION}"
INDEX_PATH = f"{API_DIR}/index.json"
INDEX_SCHEMA_PATH = f"{API_DIR}/schema/index.schema.json"
RECIPE_SCHEMA_PATH = f"{API_DIR}/schema/recipe.schema.json"
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def recipe_document_path(recipe_id: str) -> str:
    """Where a recipe's document goes, relative to the site root."""
    return f"{API_DIR}/recipes/{recipe_id}.json"


class ApiHardware(Strict):
    """The machines a recipe runs on."""

    name: str = Field(description="Hardware name as the recipe gives it, e.g. 'ASUS GX10 / NVIDIA DGX Spark'.")
    platform: str = Field(description="Platform profile name (platforms/<name>.yaml), e.g. 'dgx-spark'.")
    nodes: int = Field(ge=1, description="Machines the topology uses: 1 (solo), the cluster's nodes, or the replicas.")


class DriftVerdict(Strict):
    """One committed vLLM release's verdict on a recipe's flags (the recipe page's drift row)."""

    version: str = Field(description="The release's full version, e.g. '0.31.0'.")
    release: str = Field(description="The release as the pages name it, e.g. '0.31'.")
    accepted: bool = Field(description="Whether that release's argument parser accepts every upstream flag.")
    problems: list[str] = Field(description="One line per refused flag, e.g. '--x renamed to --y'; empty if accepted.")


class Headline(Strict):
    """The index's headline figures and the run and workload they come from (the page's newest run)."""

    run: str = Field(description="Id (UTC stamp) of the run the figures come from: runs/<id>.json.")
    measured_on: dt.date | None = Field(description="When the run was measured; null if its source does not say.")
    method: Literal["measured", "imported"] = Field(description="Measured by the catalogue's runner, or imported.")
    workload: str | None = Field(description="What the benchmark client sent, in words; null if not stated.")
    best_generation_tps: float | None = Field(description="Highest sustained generation rate of the run, tok/s.")
    best_concurrency: int | None = Field(description="The concurrency of that best generation rate.")
    single_stream_generation_tps: float | None = Field(description="Generation at concurrency 1, tok/s; null if none.")
    best_output_tokens_per_j: float | None = Field(
        None,
        description="Output tokens per joule of GPU energy at the best level; null when its power was not measured.",
    )


class ApiCapacity(Strict):
    """The capacity the index shows: a capacity search's result, its objective, and the run and workload it comes
    from (the first workload on the page whose run searched capacity)."""

    run: str = Field(description="Id (UTC stamp) of the run the capacity comes from: runs/<id>.json.")
    measured_on: dt.date | None = Field(description="When that run was measured.")
    workload: str | None = Field(description="What the benchmark client sent, in words; null if not stated.")
    rps: float | None = Field(
        description="Highest request rate that met the objective, req/s; null: even the lowest missed."
    )
    upper_rps: float | None = Field(
        description="Lowest rate above it that missed, req/s (the bracket's top); null: none missed."
    )
    converged: bool = Field(description="Whether the search pinned the capacity to within its tolerance.")
    tolerance: float = Field(description="The precision the search aimed for (0.1: within 10 %).")
    stopped: str | None = Field(description="Why the search ended before its bracket closed, in words.")
    concurrent_requests: float | None = Field(
        description="Requests in flight at capacity by Little's law: achieved rate × mean end-to-end latency."
    )
    slo: Slo = Field(description="The latency objective (vLLM --goodput keys, ms) the capacity was measured against.")
    slo_description: str = Field(description="The objective in words, e.g. 'p95 TTFT ≤ 2 s and p95 TPOT ≤ 100 ms'.")
    noise_bound: str | None = Field(
        None,
        description="Set when the median at concurrency 1 was already 40 % of a limit, or a limit's percentile 70 % "
        "of it at half the capacity or less: the limit binds where latency barely rises with load, so the capacity "
        "moves with run-to-run noise (in words; catalogue.stats.capacity_conditioning).",
    )


class IndexRecipe(Strict):
    """One published recipe in the index."""

    id: str = Field(description="Recipe id (its folder name).")
    title: str = Field(description="Recipe title, plain text.")
    model: str = Field(description="Model as served, e.g. 'openai/gpt-oss-120b'.")
    hardware: ApiHardware = Field(description="Hardware name, platform and machine count.")
    topology: str = Field(description="Topology as the pages name it, e.g. 'solo', 'cluster TP=2 (2 nodes)'.")
    topology_kind: Literal["solo", "cluster", "replicas"] = Field(description="The topology's kind.")
    status: str = Field(description="Maturity: production, experimental, community or deprecated.")
    verified: dt.date | None = Field(description="Date of the newest measurement among its runs.")
    simulated: bool = Field(
        False, description="True when it is served by the simulator or any of its runs was: no figure is measured."
    )
    page: str = Field(description="The recipe's HTML page, relative to the site root.")
    document: str = Field(description="The recipe's JSON document, relative to the site root.")
    headline: Headline | None = Field(description="Headline figures of the newest run; null without a run.")
    capacity: ApiCapacity | None = Field(
        None, description="The capacity the index shows; null when no run of the recipe searched capacity."
    )
    agents: ApiAgents | None = Field(None, description="The capacity in sessions the index shows; null: none.")
    accepted_by: list[str] = Field(description="Committed vLLM releases whose parser accepts its flags.")
    drift: list[DriftVerdict] = Field(description="Every committed vLLM release's verdict, oldest first.")


class ApiModelHardware(Strict):
    """One hardware set-up of a model's page: its recipes."""

    name: str = Field(description="Hardware name as the recipes give it.")
    nodes: int = Field(ge=1, description="Machines the set-up uses.")
    recipes: list[str] = Field(description="Recipe ids, those with headline figures first, then in id order.")


class ApiModel(Strict):
    """One model's page: its recipes grouped by hardware and machine count, as the site's model page groups them."""

    model: str = Field(description="Model as served, e.g. 'openai/gpt-oss-120b'.")
    family: str = Field(description="The model's family, from its name: the words before its size (e.g. 'gpt-oss').")
    page: str = Field(description="The model's HTML page, relative to the site root.")
    hardware: list[ApiModelHardware] = Field(description="Its recipes by hardware name and machine count.")


class ApiIndex(Strict):
    """api/v1/index.json: every published recipe, and every model with its recipes grouped."""

    version: Literal["v1"] = Field(description="API version; a change that breaks readers gets a new one.")
    generated_at: dt.datetime = Field(description="When the site was built (UTC; SOURCE_DATE_EPOCH when set).")
    recipes: list[IndexRecipe] = Field(description="Every published recipe, sorted by id.")
    models: list[ApiModel] = Field(
        default_factory=list, description="Every model of a published recipe, in family and model order."
    )


class ApiRun(BenchmarkRun):
    """One run as its file holds it, plus its id, its workload in words and its withheld peaks."""

    id: str = Field(description="The run's id, its UTC stamp: its file is runs/<id>.json.")
    simulated: bool = Field(
        False, description="True: a simulator served it (workload.simulator names the profile); never a measurement."
    )
    workload_description: str | None = Field(description="The workload in words; null if not stated.")
    withheld_peaks: list[str] = Field(
        description="Levels whose one-second peak the pages do not publish, with why (peak_tps keeps the raw value)."
    )
    unbounded_p99: list[str] = Field(
        default_factory=list,
        description="Levels whose TTFT p99 comes from too few requests to bound it at 95 % (order statistics), with "
        "how many: ttft_ms.p99 keeps the raw value, which is then their largest values, not a percentile.",
    )


class RecipeDocument(Strict):
    """api/v1/recipes/<id>.json: one recipe, its runs and its drift row."""

    version: Literal["v1"] = Field(description="API version; a change that breaks readers gets a new one.")
    generated_at: dt.datetime = Field(description="When the site was built (UTC; SOURCE_DATE_EPOCH when set).")
    id: str = Field(description="Recipe id (its folder name).")
    page: str = Field(description="The recipe's HTML page, relative to the site root.")
    simulated: bool = Field(
        False, description="True when it is served by the simulator or any of its runs was: no figure is measured."
    )
    recipe: Recipe = Field(description="The recipe file, as its model reads it (recipe.schema.json in schemas/).")
    runs: list[ApiRun] = Field(description="Every run, oldest first.")
    latest_run: str | None = Field(
        description="Id of the newest run; null without a run (the page leads with `headline.run`)."
    )
    headline: Headline | None = Field(description="The index's headline figures for this recipe.")
    capacity: ApiCapacity | None = Field(
        None, description="The index's capacity for this recipe; null when no run searched capacity."
    )
    agents: ApiAgents | None = Field(None, description="The index's capacity in sessions; null: no agent search.")
    drift: list[DriftVerdict] = Field(description="Every committed vLLM release's verdict, oldest first.")


def build_time() -> dt.datetime:
    """Now in UTC to the second, or $SOURCE_DATE_EPOCH (reproducible builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    now = dt.datetime.fromtimestamp(int(epoch), dt.UTC) if epoch else dt.datetime.now(dt.UTC)
    return now.replace(microsecond=0)


def drift_verdicts(row: Sequence[DriftCell]) -> list[DriftVerdict]:
    """The drift row as data."""
    return [
        DriftVerdict(version=c.version, release=c.short_version, accepted=c.accepted, problems=list(c.problems))
        for c in row
    ]


def headline(entry: Entry) -> Headline | None:
    """The index page's figures (the headline run: c=1 and best generation) with the run they come from."""
    run = headline_run(entry)
    if run is None:
        return None
    best, single = best_generation(run, entry.platform), quotable(run.level(1), entry.platform)
    return Headline(
        run=run.stamp,
        measured_on=run.measured_on,
        method=run.provenance.method,
        workload=run.workload.describe() if run.workload else None,
        best_generation_tps=best.generation_tps if best else None,
        best_concurrency=best.concurrency if best else None,
        single_stream_generation_tps=single.generation_tps if single else None,
        best_output_tokens_per_j=tokens_per_joule(best) if best else None,
    )


def capacity(entry: Entry) -> ApiCapacity | None:
    """The index page's capacity (`view.capacity_run`) with the run, workload and objective it comes from."""
    found = capacity_run(entry)
    if found is None or found.run.capacity is None or found.run.slo is None:
        return None
    run, cap, slo = found.run, found.run.capacity, found.run.slo
    return ApiCapacity(
        run=run.stamp,
        measured_on=run.measured_on,
        workload=run.workload.describe() if run.workload else None,
        rps=cap.rps,
        upper_rps=cap.upper_rps,
        converged=cap.converged,
        tolerance=cap.tolerance,
        stopped=cap.stopped,
        concurrent_requests=cap.concurrent_requests,
        slo=slo,
        slo_description=slo.describe(),
        noise_bound=noise_bound(run),
    )


def api_run(run: BenchmarkRun) -> ApiRun:
    """A run with its id, workload in words and withheld peaks."""
    return ApiRun.model_validate(
        {
            **dict(run),
            "id": run.file_stem,
            "simulated": run.from_simulator,
            "workload_description": run.workload.describe() if run.workload else None,
            "withheld_peaks": withheld_peaks(run),
            "unbounded_p99": withheld_peaks(run, p99_withheld),
        }
    )


def index_recipe(entry: Entry, validation: Validation) -> IndexRecipe:
    recipe = entry.recipe
    drift = drift_verdicts(validation.drift)
    return IndexRecipe(
        id=entry.id,
        title=recipe.title,
        model=recipe.model,
        hardware=ApiHardware(name=recipe.hardware.name, platform=recipe.hardware.platform, nodes=node_count(recipe)),
        topology=topology_label(recipe),
        topology_kind=recipe.topology.kind,
        status=recipe.status,
        verified=entry.verified,
        simulated=entry.simulated,
        page=page_url(recipe_path(entry)),
        document=recipe_document_path(entry.id),
        headline=headline(entry),
        capacity=capacity(entry),
        agents=agents(entry),
        accepted_by=accepted_by(validation.drift),
        drift=drift,
    )


def recipe_document(entry: Entry, validation: Validation, generated_at: dt.datetime) -> RecipeDocument:
    latest = entry.latest
    return RecipeDocument(
        version=API_VERSION,
        generated_at=generated_at,
        id=entry.id,
        page=page_url(recipe_path(entry)),
        simulated=entry.simulated,
        recipe=entry.recipe,
        runs=[api_run(run) for run in entry.runs],
        latest_run=latest.stamp if latest else None,
        headline=headline(entry),
        capacity=capacity(entry),
        agents=agents(entry),
        drift=drift_verdicts(validation.drift),
    )


def api_models(recipes: Sequence[IndexRecipe]) -> list[ApiModel]:
    """The model pages' grouping: by model (family, then name), then by hardware name and machine count."""
    groups: dict[str, dict[tuple[str, int], list[IndexRecipe]]] = {}
    for r in sorted(recipes, key=lambda r: (model_family(r.model).lower(), r.model.lower(), r.id)):
        groups.setdefault(r.model, {}).setdefault((r.hardware.name, r.hardware.nodes), []).append(r)
    return [
        ApiModel(
            model=model,
            family=model_family(model),
            page=page_url(model_path(model)),
            hardware=[
                ApiModelHardware(
                    name=name,
                    nodes=nodes,
                    recipes=[r.id for r in sorted(rs, key=lambda r: r.headline is None and r.capacity is None)],
                )
                for (name, nodes), rs in sorted(hardware.items())
            ],
        )
        for model, hardware in groups.items()
    ]


def schema_text(model: type[BaseModel]) -> str:
    """A model's JSON Schema (the form it is written in), naming its dialect."""
    schema = {"$schema": JSON_SCHEMA_DIALECT, **model.model_json_schema(mode="serialization")}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def api_schemas() -> dict[str, str]:
    """Path -> JSON Schema text of both documents."""
    return {
        INDEX_SCHEMA_PATH: schema_text(ApiIndex),
        RECIPE_SCHEMA_PATH: schema_text(RecipeDocument),
    }


class KeptDocuments:
    """What a long-lived process (`mkdocs serve`) keeps between builds: each recipe's index row and document
    text while its entry and flag check are the same objects (catalogue.site.build.Rebuilds keeps those
    while the recipe's files are unchanged), and the schemas. A kept document keeps its `generated_at`."""

    def __init__(self) -> None:
        self.recipes: dict[str, tuple[Entry, Validation, IndexRecipe, str]] = {}
        self.schemas: dict[str, str] | None = None


def api_documents(
    recipes: Sequence[tuple[Entry, Validation]],
    generated_at: dt.datetime | None = None,
    kept: KeptDocuments | None = None,
) -> dict[str, str]:
    """Path (relative to the site root) -> text of every API file: the index, one document per published
    recipe (examples, `publish: false`, are left out) and the two schemas. With `kept`, a recipe whose
    entry and check are the objects of the last call is not written again."""
    when = generated_at or build_time()
    kept = kept or KeptDocuments()
    parts = {}
    for entry, validation in sorted(((e, v) for e, v in recipes if e.recipe.publish), key=lambda p: p[0].id):
        known = kept.recipes.get(entry.id)
        if known is None or known[0] is not entry or known[1] is not validation:
            text = recipe_document(entry, validation, when).model_dump_json(indent=2) + "\n"
            known = (entry, validation, index_recipe(entry, validation), text)
        parts[entry.id] = known
    kept.recipes = parts
    listed = [part[2] for part in parts.values()]
    index = ApiIndex(version=API_VERSION, generated_at=when, recipes=listed, models=api_models(listed))
    files = {INDEX_PATH: index.model_dump_json(indent=2) + "\n"}
    files.update({recipe_document_path(recipe_id): part[3] for recipe_id, part in parts.items()})
    if kept.schemas is None:
        kept.schemas = api_schemas()
    return {**files, **kept.schemas}
