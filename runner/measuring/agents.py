"""The agent step of a refresh (`sweep.agents`), last, against the same server in the same boot: for each reuse ratio,
the trace made by catalogue.models.agent_trace, replayed by the pinned AIPerf at each level of concurrent sessions,
vLLM's /metrics read just before and just after each level; then the capacity search in sessions. One run file per reuse
ratio (`<stamp>-agents-reuse<pct>.json`); a failing replay is a note and never fails the refresh.

The replayer is AIPerf 0.13.0, the project's pinned client: its `mooncake_trace` loader reads `session_id`,
`hash_ids`, `input_length`, `output_length` and `delay` as multi-turn sessions, holds `--concurrency` session slots
(a slot is held from a session's first turn to its last, think time included), resends each session's history with
its live answers (the chat endpoint), and writes every turn's TTFT and latency to `profile_export.jsonl`.
agentx-harness 1.0.12 wraps a fork of the same AIPerf for its own hub-hosted dataset (unreachable here) and adds
nothing the mooncake format needs; it would be a second venv for the same replayer.

AIPerf loads a local tokenizer folder in its decode workers with the hub forced offline, where 0.13 accepts only a
repo id of the hub cache: a model folder beside the recipe is therefore linked into a scratch hub cache as
`catalogue/agent-tokenizer`, and the whole process runs offline.

The capacity search is catalogue.stats.agent_capacity.search, the loop the simulator's check drives too:
simulator/sessions.py replays the same sessions on the simulated engine in virtual time, and
tests/test_simulator_sessions.py holds the search to the model's true capacity in sessions, with prefix caching on and
off.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from catalogue.models import agent_trace
from catalogue.models.agent_trace import AgentTrace
from catalogue.models.benchmark import RUN_STAMP_FORMAT, BenchmarkRun
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import RUNS_DIR
from catalogue.models.recipe import Recipe
from catalogue.models.slo import Slo
from catalogue.models.workload import Workload
from catalogue.policy.secret_scan import mask
from catalogue.stats import agent_capacity, agent_levels
from catalogue.stats.agents import AgentLevel, AgentRun, AgentsSetting
from runner.hosts.raw_files import keep_file, raw_folder, read_json
from runner.measuring.quality import served_model
from runner.measuring.tool_command import interpreter, key_launcher, run_to_end, tool_command
from runner.recording.record import provenance, write_run
from runner.scripts.driver import METRICS_DEADLINE_S, read_page
from runner.state import Boot

LEVEL_TIMEOUT_S = 1800
"""One level's replay; a stalled one is ended."""
KEY_VARIABLE = "AIPERF_CATALOGUE_KEY"
LAUNCHER = key_launcher(KEY_VARIABLE)
"""AIPerf's entry script with the run's key appended inside its process, never on a command line."""
TOKENIZER_ID = "catalogue/agent-tokenizer"
KEPT = ("profile_export.jsonl", "profile_export_aiperf.json")
"""AIPerf's files kept with the run: every turn, and its own summary."""


def aiperf_command() -> str | None:
    """AIPerf: $CATALOGUE_AIPERF, else on PATH or beside this Python; None when not installed."""
    return tool_command("CATALOGUE_AIPERF", "aiperf")


def part_name(reuse: float) -> str:
    """'agents-reuse50': the run file's part for one reuse ratio."""
    return f"agents-reuse{round(reuse * 100)}"


def tokenizer_cache(model_dir: Path, scratch: Path) -> Path:
    """A hub cache in `scratch` holding the model folder's files as TOKENIZER_ID (links, nothing copied)."""
    repo = scratch / ("models--" + TOKENIZER_ID.replace("/", "--"))
    snapshot = repo / "snapshots" / "local"
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text("local")
    for item in model_dir.iterdir():
        if item.is_file() and not (snapshot / item.name).exists():
            (snapshot / item.name).symlink_to(item.resolve())
    return scratch


def aiperf_argv(
    command: str,
    endpoint: str,
    served: str,
    tokenizer: str,
    trace: AgentTrace,
    trace_file: Path,
    sessions: int,
    out: Path,
    seed: int,
) -> list[str]:
    """AIPerf replaying the trace at `sessions` concurrent sessions, every session once and whole, answers forced to
    length; `seed` picks the text of every block (AIPerf seeds each hash id's tokens by seed, trace file and id).

    `--conversation-num` stops AIPerf starting sessions after the trace's last and lets the running ones finish. A
    `--request-count` of every turn does not: a slot that frees first starts the trace again from its first session,
    and the count then ends the last session early (measured at 2 sessions: 25 first turns in 96, s0 replayed twice,
    s23 cut after its second turn)."""
    return [
        command, "profile", "--model", served, "--url", endpoint, "--endpoint-type", "chat", "--streaming",
        "--tokenizer", tokenizer, "--input-file", str(trace_file), "--custom-dataset-type", "mooncake_trace",
        "--concurrency", str(sessions), "--conversation-num", str(trace.sessions),
        "--isl-block-size", str(trace.block_tokens), "--extra-inputs", "ignore_eos:true",
        "--random-seed", str(seed), "--artifact-dir", str(out), "--ui-type", "none", "--no-server-metrics",
    ]  # fmt: skip


def level_seed(trace: AgentTrace, sessions: int, probe: int | None) -> int:
    """A seed of each level's own: the same trace replayed at another level sends other text, so no level finds the
    previous level's blocks in the prefix cache (measured: with one seed, every level after a reuse ratio's first
    read about 79 % hits whatever its reuse, its first 62-74 %)."""
    return trace.seed * 100_000 + (probe or 0) * 1_000 + sessions


def read_metrics(endpoint: str, deadline_s: float = METRICS_DEADLINE_S) -> str:
    """The server's /metrics page ('' when it does not answer, or not whole within one deadline for the whole read:
    the level then has no hit rate). The sweep's reader (runner.scripts.driver.read_page): the server is untrusted."""
    return read_page(f"{endpoint}/metrics", deadline_s) or ""


def replay(r: Boot, env: dict[str, str], argv: list[str], log: Path) -> None:
    """Run AIPerf once; raises ValueError with the reason when it fails."""
    command = argv[0]
    python = interpreter(command)
    if python is None:
        raise ValueError(f"{command} is not a Python entry script: the API key could only go on its command line")
    keyed = {**env, KEY_VARIABLE: r.key}
    code = run_to_end("AIPerf", python, LAUNCHER, argv, keyed, log, r.running.redact, LEVEL_TIMEOUT_S)
    if code != 0:
        raise ValueError(f"AIPerf exited with code {code} (see {log.name})")


def measure(
    r: Boot,
    env: dict[str, str],
    tokenizer: str,
    trace: AgentTrace,
    trace_file: Path,
    sessions: int,
    probe: int | None,
) -> tuple[AgentLevel, list[str]]:
    """One level: /metrics, the replay, /metrics; its figures and its recorded command."""
    name = f"{part_name(trace.reuse)}-s{sessions}" + (f"-p{probe}" if probe else "")
    scratch_out = Path(tempfile.mkdtemp(prefix="aiperf-"))
    keep = r.plan.raw_dir / name
    command = aiperf_command() or "aiperf"
    argv = aiperf_argv(command, r.plan.endpoint, served_model(r.plan, r.entry.recipe), tokenizer, trace, trace_file,
                       sessions, scratch_out, level_seed(trace, sessions, probe))  # fmt: skip
    try:
        before = read_metrics(r.plan.endpoint)
        replay(r, env, argv, r.plan.raw_dir / f"{name}.log")
        after = read_metrics(r.plan.endpoint)
        raw_folder(keep)  # the client's container can write the raw folder: never through a link it planted
        for kept in KEPT:
            if (scratch_out / kept).is_file():
                keep_file(scratch_out / kept, keep / kept)
    finally:
        shutil.rmtree(scratch_out, ignore_errors=True)
    slo = r.entry.recipe.sweep.slo
    turns = agent_levels.read_turns(keep / KEPT[0])
    found = agent_levels.level(
        sessions, turns, before, after, slo.limits if slo else {}, probe, slo.percentile if slo else 95
    )
    raw = [f"{r.plan.stamp}/{name}/{kept}" for kept in KEPT if (keep / kept).is_file()]
    relative = {str(scratch_out): f"{r.plan.stamp}/{name}", str(trace_file): f"{r.plan.stamp}/{trace_file.name}"}
    recorded = ["aiperf", *(relative.get(w, w) for w in argv[1:])]
    recorded += ["--api-key", mask(r.key)]
    return agent_capacity.label(found.model_copy(update={"raw": raw}), slo), recorded


def search(r: Boot, run: dict, setting: AgentsSetting, slo: Slo) -> tuple[int, str | None]:
    """Add levels until the bracket closes or the probes run out; (probes run, why it stopped early)."""
    assert setting.max_sessions is not None

    def measured(sessions: int, probe: int) -> AgentLevel:
        level, command = measure(r, run["env"], run["tokenizer"], run["trace"], run["file"], sessions, probe)
        run["commands"].append(command)
        return level

    return agent_capacity.search(run["levels"], slo, setting.max_sessions, setting.search_probes, measured)


def prefix_caching(recipe: Recipe) -> bool:
    """Whether the server caches prefixes: vLLM's default (on) unless the recipe turns it off, in 0.32's spelling
    (`--no-enable-prefix-caching`) or 0.33's (`--disable-prefix-caching`)."""
    flags = recipe.serving.flags
    off = flags.get("no-enable-prefix-caching") is True or flags.get("disable-prefix-caching") is True
    return not (off or flags.get("enable-prefix-caching") is False)


def one_reuse(r: Boot, setting: AgentsSetting, trace: AgentTrace, env: dict[str, str], tokenizer: str) -> Path:
    """Every level of one trace, the search, the run file."""
    trace_file = r.plan.raw_dir / f"{part_name(trace.reuse)}.jsonl"
    digest = agent_trace.write(trace, trace_file)
    run: dict = {"levels": [], "commands": [], "env": env, "tokenizer": tokenizer, "trace": trace, "file": trace_file}
    for sessions in setting.sessions:
        level, command = measure(r, env, tokenizer, trace, trace_file, sessions, None)
        run["levels"].append(level)
        run["commands"].append(command)
    slo = r.entry.recipe.sweep.slo
    capacity = None
    if slo is not None and setting.max_sessions is not None:
        probes, stopped = search(r, run, setting, slo)
        capacity = agent_capacity.capacity(run["levels"], slo, probes, stopped)
    return write(r, trace, digest, trace_file, run, capacity)


def write(r: Boot, trace: AgentTrace, digest: str, trace_file: Path, run: dict, capacity: object) -> Path:
    """The reuse ratio's run file, with the refresh's provenance and AIPerf's commands."""
    p = r.progress
    base = provenance(r.plan, vllm_version=p.vllm_version, client_vllm_version=None, flag_snapshot=p.snapshot,
                      image_id=p.image_id, done=[], preflight=p.preflight, hosts=p.hosts)  # fmt: skip
    version = (
        aiperf_version(r.plan.raw_dir / run["levels"][0].raw[-1].split("/", 1)[1]) if run["levels"][0].raw else None
    )
    prov = base.model_copy(
        update={
            "bench_commands": run["commands"],
            "prefill_derivation": "not derived: agent levels report TTFT per turn",
            "client": f"AIPerf {version or ''} on this machine (its own venv), one process per level".replace(
                "  ", " "
            ),
        }
    )
    caching = prefix_caching(r.entry.recipe)
    agents = AgentRun(
        trace=trace,
        trace_file=f"{r.plan.stamp}/{trace_file.name}",
        intended_hit_rate=agent_trace.intended_hit_rate(trace) if caching else 0.0,
        prefix_caching=caching,
        levels=run["levels"],
        capacity=capacity,  # type: ignore[arg-type]
    )
    workload = Workload(
        tool="AIPerf",
        tool_version=version,
        dataset="agent sessions (mooncake trace, catalogue.models.agent_trace)",
        input_len=trace.first_turn_blocks * trace.block_tokens,
        output_len=trace.output_tokens,
        seeds="per level",
        trace=trace.describe(),
        trace_sha256=digest,
    )
    notes = [f"Agent sessions replayed by AIPerf after the other steps of run {r.plan.stamp}, same server and boot."]
    result = BenchmarkRun(
        recorded_at=dt.datetime.strptime(r.plan.stamp, RUN_STAMP_FORMAT).replace(tzinfo=dt.UTC),
        part=part_name(trace.reuse),
        provenance=prov,
        workload=workload,
        slo=r.entry.recipe.sweep.slo,
        agents=agents,
        notes=notes,
    )
    path = r.plan.folder / RUNS_DIR / f"{result.file_stem}.json"
    write_run(result, path)
    return path


def aiperf_version(summary: Path) -> str | None:
    """AIPerf's version from its own summary export."""
    try:
        found = read_json(summary).get("aiperf_version")  # regular, no link, within the limits
    except (OSError, ValueError, AttributeError, CatalogueError):
        return None
    return found if isinstance(found, str) and len(found) < 40 else None


def step_agents(r: Boot) -> None:
    """The refresh's last step: every reuse ratio of sweep.agents; what it wrote, or why not, in the notes."""
    setting = r.entry.recipe.sweep.agents
    if setting is None:
        return
    started = time.monotonic()
    written: list[str] = []
    with tempfile.TemporaryDirectory(prefix="agents-") as scratch:
        env = {"HF_HUB_OFFLINE": "1", "HOME": scratch}
        path = r.entry.recipe.serving.model_path
        if path and (r.entry.folder / path).is_dir():
            env["HF_HUB_CACHE"] = str(tokenizer_cache(r.entry.folder / path, Path(scratch) / "hub"))
            tokenizer = TOKENIZER_ID
        else:
            env["HF_HUB_CACHE"] = os.environ.get("HF_HUB_CACHE") or str(Path.home() / ".cache/huggingface/hub")
            tokenizer = r.entry.recipe.model
        for trace in setting.traces():
            r.bar.show(len(r.progress.levels), f"agent sessions, reuse {trace.reuse:.0%}")
            try:
                written.append(one_reuse(r, setting, trace, env, tokenizer).name)
            except (OSError, ValueError) as exc:
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                r.progress.note(
                    f"agents reuse {trace.reuse:.0%}",
                    f"agents reuse {trace.reuse:.0%}: reuse {trace.reuse:.0%} gave no figures ({why})",
                )
                print(f"\nAgent sessions at reuse {trace.reuse:.0%} gave no figures: {why}", file=sys.stderr)
    took = time.monotonic() - started
    r.progress.note("agents:", f"agents: {len(written)} run file(s) ({', '.join(written)}) in {took:.1f} s")
