"""Derived figures for pages: headline numbers, deltas, roofline, provenance lines, groups."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import yaml

from catalogue.benchmark import BenchmarkRun, ImportedProvenance, LevelResult, MeasuredProvenance
from catalogue.flags.drift import DriftCell
from catalogue.flags.validate import Finding
from catalogue.launch import bench_argv, shell_command
from catalogue.loading import Entry
from catalogue.metrics import BY_NAME, metric_value, peak_withheld
from catalogue.platform import Platform, ProfilePart
from catalogue.recipe import ClusterTopology, Comparison, Recipe, ReplicasTopology
from catalogue.reproduce import missing_pins
from catalogue.topology import LITELLM_VERSION, layout, placeholder_nodes
from catalogue.workload import Workload


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


def comparison_rows(entry: Entry) -> list[ComparisonRow]:
    """Every comparison with ours, the delta and whether the workloads match, in recipe order."""
    rows = []
    for comparison in entry.recipe.comparisons:
        found = entry.ours(comparison)
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
                )
            )
    return rows


def withheld_peaks(run: BenchmarkRun) -> list[str]:
    """'at c=1, 2: <why>' for the levels whose one-second peak is not published, one line per reason."""
    reasons: dict[str, list[str]] = {}
    for lv in run.levels:
        if why := peak_withheld(lv):
            reasons.setdefault(why, []).append(str(lv.concurrency))
    return [f"at c={', '.join(cs)}: {why}" for why, cs in reasons.items()]


def best_generation(run: BenchmarkRun | None) -> LevelResult | None:
    """The level with the highest sustained generation rate."""
    levels = [lv for lv in (run.levels if run else []) if lv.generation_tps is not None]
    return max(levels, key=lambda lv: lv.generation_tps or 0.0) if levels else None


def roofline(entry: Entry) -> dict[str, float] | None:
    """Single-stream ceiling = bandwidth / bytes per token, and the c=1 generation's share of it."""
    recipe, run = entry.recipe, entry.latest
    bandwidth = recipe.hardware.memory_bandwidth_gbs
    if recipe.roofline is None or not bandwidth:
        return None
    ceiling = bandwidth / recipe.roofline.bytes_per_token_gb
    single = run.level(1) if run else None
    out = {"ceiling": ceiling, "bandwidth": bandwidth, "bytes": recipe.roofline.bytes_per_token_gb}
    if single is not None and single.generation_tps is not None:
        out["measured"] = single.generation_tps
        out["share"] = single.generation_tps / ceiling * 100
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


def command_text(argv: list[str], serve: list[str]) -> str:
    """A copyable command; the in-container command (`vllm serve ...`) starts its own line after the image."""
    head = argv[: len(argv) - len(serve)]
    return shell_command(head) + " \\\n  " + shell_command(serve) if head else shell_command(serve)


@dataclass(frozen=True)
class LaunchBlock:
    """One copyable block of the launch section: a node's command, the router's config or its command."""

    title: str | None
    text: str
    argv: list[str] | None
    """What the text splits back to (None for the YAML config)."""
    profile: ProfilePart | None = None
    """What the platform profile put into this command (marked under it), and the recipe options it made moot."""


def launch_blocks(recipe: Recipe, platform: Platform | None = None) -> list[LaunchBlock]:
    """Every command a reader runs, node by node (cluster) or replica by replica plus the router (replicas)."""
    lay = layout(recipe, placeholder_nodes(recipe), platform=platform)
    if lay.kind == "solo":
        server = lay.servers[0]
        return [LaunchBlock(None, command_text(server.argv(), server.serve), server.argv(), server.profile)]
    blocks = []
    for server in lay.servers:
        blocks.append(
            LaunchBlock(
                f"{server.role}, on {server.node.address}",
                command_text(server.argv(), server.serve),
                server.argv(),
                server.profile,
            )
        )
        if server.exec_serve:
            exec_argv = ["docker", "exec", "<container>", *server.exec_serve]
            blocks.append(
                LaunchBlock("then, once every node has joined, on the head", shell_command(exec_argv), exec_argv)
            )
    if lay.router is not None:
        config = yaml.safe_dump(lay.router.config, sort_keys=False).rstrip()
        blocks.append(LaunchBlock(f"router config, litellm.yaml (LiteLLM {LITELLM_VERSION})", config, None))
        argv = lay.router.argv()
        blocks.append(LaunchBlock("router, with LITELLM_MASTER_KEY set", shell_command(argv), argv))
    return blocks


def bench_text(recipe: Recipe, concurrency: int) -> str:
    """The copyable `vllm bench serve` command for one level."""
    return shell_command(bench_argv(recipe, concurrency))


def comparable_groups(entries: list[Entry]) -> dict[tuple[str, str], list[Entry]]:
    """Recipes that share a model and a hardware platform, two or more per group."""
    groups: dict[tuple[str, str], list[Entry]] = {}
    for entry in entries:
        groups.setdefault((entry.recipe.model, entry.recipe.hardware.platform), []).append(entry)
    return {key: members for key, members in sorted(groups.items()) if len(members) > 1}


def group_slug(model: str, platform: str) -> str:
    """File stem of a comparison page."""
    return f"{model.replace('/', '-').lower()}--{platform}"


@dataclass(frozen=True)
class MachineAsks:
    """What a recipe asks of the machine that runs it (the run policy), for the page's box."""

    consent: list[tuple[str, str, str]]
    """(option, what it allows, the recipe's reason) for each option the owner must allow."""
    notes: list[tuple[str, str]]
    """(option, what it means) for each note."""
    from_host: list[str]
    """Variables taken from the owner's environment by name."""
    runner_owned: list[str]
    """Options the runner handles itself (it drops -d, --rm, --restart, --name)."""

    def __bool__(self) -> bool:
        return bool(self.consent or self.notes or self.from_host or self.runner_owned)


RUNNER_OWNED = {"detach": "-d", "rm": "--rm", "restart": "--restart", "name": "--name"}


def machine_asks(recipe: Recipe) -> MachineAsks:
    """The consent items with their reasons, the notes, the variables from the host, the runner-handled options."""
    from catalogue.policy import check_serving, walk_options

    found = check_serving(recipe.serving, source="")
    reasons = {" ".join(c.option.split()): c.reason for c in recipe.serving.consent}
    consent = [(f.option, f.why, reasons.get(f.option, "")) for f in found if f.cls == "consent"]
    notes = [(f.option, f.why) for f in found if f.cls == "note"]
    options = list(recipe.serving.container.options) if recipe.serving.container else []
    owned = [RUNNER_OWNED[name] for _, name, _ in walk_options(options) if name in RUNNER_OWNED]
    return MachineAsks(consent, notes, list(recipe.serving.env_from_host), list(dict.fromkeys(owned)))


@dataclass(frozen=True)
class ReproduceBlock:
    """The newest measured run's reproduction: its stamp and what keeps it from being fully pinned."""

    stamp: str
    missing: list[str]
    host_facts: list[str]
    """One line per host: engine, kernel, OS, CPU, image, vLLM, model revision, GPU."""


def reproduce_block(entry: Entry) -> ReproduceBlock | None:
    """The "reproduce this run" block of the newest measured run, if there is one."""
    measured = [r for r in entry.runs if isinstance(r.provenance, MeasuredProvenance)]
    if not measured:
        return None
    run = max(measured, key=lambda r: r.recorded_at)
    prov = run.provenance
    assert isinstance(prov, MeasuredProvenance)
    facts = [
        "; ".join(
            f"{label} {value}"
            for label, value in (
                ("host", h.host),
                ("docker", h.docker_version),
                ("kernel", h.kernel),
                ("OS", h.os),
                ("CPU", h.cpu),
                ("image", h.image_digest or h.image_id),
                ("vLLM", h.vllm_version),
                ("commit", h.vllm_commit),
                ("model revision", h.model_revision),
                ("GPU", h.gpu),
                ("driver", h.gpu_driver),
                ("CUDA", h.cuda),
            )
            if value
        )
        for h in prov.hosts
    ]
    return ReproduceBlock(run.stamp, missing_pins(run), facts)
