"""Derived figures for pages: headline numbers, deltas, roofline, provenance lines, groups (what a page gives
to copy: catalogue.site.launch_view)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from catalogue.flags.drift import DriftCell
from catalogue.flags.validate import Finding
from catalogue.models.benchmark import BenchmarkRun, ImportedProvenance, LevelResult
from catalogue.models.loading import Entry
from catalogue.models.platform import Platform
from catalogue.models.recipe import ClusterTopology, Comparison, Recipe, ReplicasTopology
from catalogue.models.workload import Workload
from catalogue.site.machine_view import headline_levels, quotable
from catalogue.stats.metrics import BY_NAME, metric_value, peak_withheld


@dataclass(frozen=True)
class ComparisonRow:
    """A comparison with our figure and the delta computed from the data."""

    comparison: Comparison
    ours: float
    delta_pct: float
    label: str
    """The metric's header, e.g. 'Generation (tok/s)'."""
    apart: str | None
    """Why the two figures are not like for like (workloads differ or are not stated); None when they are."""
    partial: str | None = None
    """'partial run: <why>' when our figure comes from a run that stopped part-way."""


@dataclass(frozen=True)
class Validation:
    """What the page says about its flag check."""

    vllm_version: str
    checked_on: dt.date
    source: str
    findings: list[Finding] = field(default_factory=list)
    drift: list[DriftCell] = field(default_factory=list)
    """The recipe checked against every committed vLLM release, oldest first."""

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]


def topology_label(recipe: Recipe) -> str:
    """Short topology name: solo, cluster TP=2 (2 nodes), 2x replicas (router strategy)."""
    topo = recipe.topology
    if isinstance(topo, ClusterTopology):
        return f"cluster TP={topo.tensor_parallel_size} ({topo.nodes} nodes)"
    if isinstance(topo, ReplicasTopology):
        return f"{topo.replicas}x replicas ({topo.router} {topo.routing_strategy})"
    return "solo"


def hardware_line(recipe: Recipe) -> str:
    """'ASUS GX10 / NVIDIA DGX Spark (GB10 Superchip, 128 GB LPDDR5x unified, 273 GB/s)'."""
    hw = recipe.hardware
    memory = f"{hw.memory_gb:g} GB" + (f" {hw.memory_type}" if hw.memory_type else "")
    details = [hw.accelerator, memory]
    if hw.memory_bandwidth_gbs:
        details.append(f"{hw.memory_bandwidth_gbs:g} GB/s")
    if hw.interconnect:
        details.append(hw.interconnect)
    return f"{hw.name} ({', '.join(details)})"


def workload_gap(ours: Workload | None, theirs: Workload | None) -> str | None:
    """Why two figures are not like for like, in words; None when both workloads are stated and equal."""
    if ours is None or not ours.known:
        return "our run's workload is not stated" + (f"; theirs: {theirs.describe()}" if theirs else "")
    if theirs is None:
        return "their workload is not stated"
    if ours.key != theirs.key:
        return "different workload: " + "; ".join(ours.differences(theirs)) + " (ours vs theirs)"
    return None


def our_figure(entry: Entry, comparison: Comparison) -> tuple[BenchmarkRun, LevelResult] | None:
    """Our run and level at a comparison's concurrency: the newest run with the metric there (of the comparison's
    own workload when one has it, else not of a named profile), passing over a run that stopped part-way when a
    complete run of the same workload has it."""
    found = []
    for run in sorted(entry.runs, key=run_order, reverse=True):
        level = run.level(comparison.concurrency)
        if level is not None and metric_value(level, comparison.metric) is not None:
            found.append((run, level))
    key = comparison.workload.key if comparison.workload is not None else None
    found.sort(
        key=lambda f: (workload_key(f[0]) != key, f[0].workload is not None and f[0].workload.profile is not None)
    )
    for run, level in found:
        if run.complete or not any(r.complete and workload_key(r) == workload_key(run) for r, _ in found):
            return run, level
    return None


def comparison_rows(entry: Entry) -> list[ComparisonRow]:
    """Every comparison with ours, the delta and whether the workloads match, in recipe order."""
    rows = []
    for comparison in entry.recipe.comparisons:
        found = our_figure(entry, comparison)
        if found is None:
            continue
        run, level = found
        ours = metric_value(level, comparison.metric)
        if ours is not None:
            rows.append(
                ComparisonRow(
                    comparison,
                    ours,
                    (ours - comparison.value) / comparison.value * 100,
                    BY_NAME[comparison.metric].header,
                    workload_gap(run.workload, comparison.workload),
                    partial_note(run),
                )
            )
    return rows


def run_order(run: BenchmarkRun) -> tuple[dt.date, dt.datetime]:
    """Newest last: the measuring date (undated runs first), then the recording time."""
    return (run.measured_on or dt.date.min, run.recorded_at)


def workload_key(run: BenchmarkRun) -> tuple | None:
    """The key a run is grouped under on its page: its workload's key, None when the workload is not stated."""
    return run.workload.key if run.workload is not None else None


@dataclass(frozen=True)
class WorkloadRuns:
    """One workload a recipe measured: the run its page shows for it, and every run of it, newest first."""

    key: tuple | None
    workload: Workload | None
    run: BenchmarkRun
    """The newest complete run of the workload; the newest run only when none is complete."""
    runs: list[BenchmarkRun]

    @property
    def describe(self) -> str:
        return self.workload.describe() if self.workload is not None else "not stated"

    @property
    def partial(self) -> bool:
        return not self.run.complete


def workloads(entry: Entry, headline: tuple | None = None) -> list[WorkloadRuns]:
    """The newest run of each workload key (runs with a concurrency sweep or open-loop rate levels), newest
    workload first, a named profile's (the Arena's) after the others by depth; `headline` (a workload key the recipe
    names) first when given. A run that stopped part-way is shown only while its workload has no complete run."""
    if headline is None and entry.recipe.headline_workload is not None:  # the recipe's own choice, matched by key
        headline = entry.recipe.headline_workload.key
    groups: dict[tuple | None, list[BenchmarkRun]] = {}
    for run in sorted((r for r in entry.runs if r.levels or r.rates), key=run_order, reverse=True):
        groups.setdefault(workload_key(run), []).append(run)
    out = []
    for key, runs in groups.items():
        shown = next((r for r in runs if r.complete), runs[0])
        out.append(WorkloadRuns(key, shown.workload, shown, runs))
    out.sort(key=lambda w: run_order(w.runs[0]), reverse=True)
    out.sort(key=_profile_order)  # stable: a named profile's workloads after the others, by depth
    out.sort(key=lambda w: headline is None or w.key != headline)  # stable: the chosen workload first
    return out


def _profile_order(group: WorkloadRuns) -> tuple[bool, int]:
    workload = group.workload
    if workload is None or workload.profile is None:
        return (False, 0)
    return (True, workload.context_depth)


def headline_run(entry: Entry, headline: tuple | None = None) -> BenchmarkRun | None:
    """The run the index and the roofline quote: the shown run of the first workload with a concurrency sweep
    (never a partial run while a complete run of the same workload exists)."""
    found = [w for w in workloads(entry, headline) if w.run.levels]
    return found[0].run if found else None


def capacity_run(entry: Entry) -> WorkloadRuns | None:
    """The first workload (in page order) whose shown run carries a capacity search's result: what the index's
    capacity column quotes."""
    return next((w for w in workloads(entry) if w.run.capacity is not None and w.run.slo is not None), None)


def partial_note(run: BenchmarkRun | None) -> str | None:
    """'partial run: <why>' for a run that stopped part-way, else None."""
    if run is None or run.complete:
        return None
    return f"partial run: {run.incomplete_reason}" if run.incomplete_reason else "partial run"


SIZE_WORD = re.compile(r"^(\d+(\.\d+)?[bmkt]|a\d+(\.\d+)?b|e\d+b|\d+x\d+b)$", re.I)


def model_family(model: str) -> str:
    """The model's family from its id: the words of its name before the size ('openai/gpt-oss-120b' -> 'gpt-oss',
    'Qwen/Qwen3-30B-A3B' -> 'Qwen3', 'meta-llama/Llama-3.3-70B-Instruct' -> 'Llama-3.3')."""
    name = model.rsplit("/", 1)[-1]
    words = name.split("-")
    kept = []
    for word in words:
        if SIZE_WORD.match(word):
            break
        kept.append(word)
    return "-".join(kept) or name


def memory_per_node(recipe: Recipe) -> float | None:
    """GB of each node's memory vLLM takes: --gpu-memory-utilization × the node's memory, when the recipe sets it."""
    value = recipe.serving.flags.get("gpu-memory-utilization")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) * recipe.hardware.memory_gb


def withheld_peaks(run: BenchmarkRun, why_not: Callable[[LevelResult], str | None] = peak_withheld) -> list[str]:
    """'at c=1, 2: <why>' for the levels whose figure (the one-second peak; with `why_not`, another) is not
    published, one line per reason."""
    reasons: dict[str, list[str]] = {}
    for lv in run.levels:
        if why := why_not(lv):
            reasons.setdefault(why, []).append(str(lv.concurrency))
    return [f"at c={', '.join(cs)}: {why}" for why, cs in reasons.items()]


def best_generation(run: BenchmarkRun | None, platform: Platform | None = None) -> LevelResult | None:
    """The level with the highest sustained generation rate, of those that did not throttle on `platform`."""
    levels = [lv for lv in headline_levels(run.levels if run else [], platform) if lv.generation_tps is not None]
    return max(levels, key=lambda lv: lv.generation_tps or 0.0) if levels else None


def roofline(entry: Entry) -> dict[str, float | str] | None:
    """Single-stream ceiling = bandwidth / bytes per token, and the c=1 decode speed's share of it: 1000 ÷ mean
    TPOT where the run has it (the ceiling bounds decoding, not the time to the first token), else the c=1
    generation (which includes that time, so its share reads low)."""
    recipe, run = entry.recipe, headline_run(entry)
    bandwidth = recipe.hardware.memory_bandwidth_gbs
    if recipe.roofline is None or not bandwidth:
        return None
    ceiling = bandwidth / recipe.roofline.bytes_per_token_gb
    single = quotable(run.level(1), entry.platform) if run else None
    out: dict[str, float | str] = {
        "ceiling": ceiling,
        "bandwidth": bandwidth,
        "bytes": recipe.roofline.bytes_per_token_gb,
    }
    if single is None:
        return out
    if single.tpot_ms is not None and single.tpot_ms.mean:
        out["measured"], out["basis"] = 1000 / single.tpot_ms.mean, "decode speed (1000 ÷ mean TPOT)"
    elif single.generation_tps is not None:
        out["measured"], out["basis"] = single.generation_tps, "generation, which includes the wait for the first token"
    if "measured" in out:
        out["share"] = float(out["measured"]) / ceiling * 100
    return out


def provenance_line(run: BenchmarkRun) -> str:
    """Where a run's figures come from, in one sentence."""
    p = run.provenance
    if isinstance(p, ImportedProvenance):
        when = p.source_date.isoformat() if p.source_date else "date not stated by the source"
        extra = "; ".join(
            x
            for x in (
                p.tool and f"tool: {p.tool}",
                p.image and f"image: {p.image}",
                p.vllm_version and p.vllm_version not in (p.image or "") and f"vLLM {p.vllm_version}",
                p.conditions,
            )
            if x
        )
        how = f" Read from the {p.imported_with} by catalogue import." if p.imported_with else ""
        return f"Imported from “{p.source_title}” ({p.source}; {when})" + (f"; {extra}" if extra else "") + "." + how
    gpu = p.gpu or "no GPU (CPU)"
    where = p.image or "local process"
    parts = [f"vLLM {p.vllm_version}", where, gpu, f"host {p.host}"]
    if p.nodes:
        parts.append("nodes: " + ", ".join(f"{n.role} on {n.host}" for n in p.nodes))
    if p.router:
        strategy = (p.router.get("router_settings") or {}).get("routing_strategy", "?")
        parts.append(f"through {p.router_version or 'a router'} ({strategy})")
    if p.client:
        parts.append(p.client + (f" (vLLM {p.client_vllm_version})" if p.client_vllm_version else ""))
    when = f"{run.recorded_at:%Y-%m-%d %H:%M} UTC"
    return f"Measured by the catalogue runner {p.runner_version} on {when}: {', '.join(parts)}."


def comparable_groups(entries: list[Entry]) -> dict[tuple[str, str], list[Entry]]:
    """Recipes that share a model and a hardware platform, two or more per group."""
    groups: dict[tuple[str, str], list[Entry]] = {}
    for entry in entries:
        groups.setdefault((entry.recipe.model, entry.recipe.hardware.platform), []).append(entry)
    return {key: members for key, members in sorted(groups.items()) if len(members) > 1}


def group_slug(model: str, platform: str) -> str:
    """File stem of a comparison page."""
    return f"{model.replace('/', '-').lower()}--{platform}"
