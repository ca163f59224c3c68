"""The benchmark run file (`recipes/<id>/runs/<UTC stamp>.json`): figures plus where they came from."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from catalogue.models.latency import Stats
from catalogue.models.passport import HostPassport
from catalogue.models.plausible import (
    Burstiness,
    Calibration,
    Concurrency,
    Count,
    PositiveRps,
    PromptTokens,
    Repeats,
    Requests,
    Rps,
    Seconds,
    Tps,
)
from catalogue.models.quality import Quality
from catalogue.models.revision import MAX_REVISION, REVISION_OR_EMPTY
from catalogue.models.slo import Slo
from catalogue.models.strict import Strict
from catalogue.models.workload import Workload
from catalogue.stats.agents import AgentRun
from catalogue.stats.engine_timing import EngineTiming
from catalogue.stats.sampling import LevelMachine
from catalogue.stats.spec_decode import SpecDecodeFigures

RUN_STAMP_FORMAT = "%Y%m%dT%H%M%SZ"


class Figures(Strict):
    """What any level measured: throughput, latency distributions, requests."""

    prefill_tps: Tps | None = Field(
        None,
        description="Prefill speed while prompts are prefilled (a burst rate: c × prompt tokens ÷ mean TTFT when "
        "derived), tok/s; not the level's sustained ingest rate.",
    )
    generation_tps: Tps | None = Field(None, description="Aggregate output tok/s, sustained mean.")
    peak_tps: Tps | None = Field(None, description="Highest one-second aggregate output rate, tok/s.")
    total_tps: Tps | None = Field(None, description="Aggregate input + output tok/s.")
    prefill_std: Tps | None = Field(None, description="Standard deviation of prefill tok/s over runs.")
    generation_std: Tps | None = Field(None, description="Standard deviation of generation tok/s over runs.")
    peak_std: Tps | None = Field(None, description="Standard deviation of peak tok/s over runs.")
    ttft_ms: Stats | None = Field(None, description="Time to first token.")
    itl_ms: Stats | None = Field(None, description="Inter-token latency.")
    tpot_ms: Stats | None = Field(None, description="Time per output token after the first.")
    e2e_ms: Stats | None = Field(None, description="Request latency end to end.")
    duration_s: Seconds | None = Field(None, description="Length of the benchmark window, seconds, when known.")
    completed: Count | None = Field(None, description="Requests that finished.")
    failed: Count | None = Field(None, description="Requests that failed.")
    stdev: Tps | None = Field(None, description="Standard deviation the source reports.")
    stdev_of: str | None = Field(None, description="What `stdev` is the deviation of, in the source's words.")
    raw: list[str] = Field(default_factory=list, description="Raw result files of this level, relative to the run.")
    spec_decode: SpecDecodeFigures | None = Field(
        None, description="Speculative decoding during the level, from vLLM's /metrics counters; null: none read."
    )
    engine: EngineTiming | None = Field(
        None,
        description="The server's own TTFT and time between tokens during the level, from vLLM's /metrics "
        "histograms; null: not read (an imported run, one measured before, or behind a router).",
    )
    machine: LevelMachine | None = Field(
        None,
        description="The GPUs during the level's benchmark window (sampled every second) and its energy; null: the "
        "runner did not sample (an imported run, or one measured before the sampler).",
    )
    calibration_ms: list[Calibration] | None = Field(
        None,
        min_length=2,
        max_length=2,
        description="The machine's CPU calibration on the client's host just before and just after the level, ms "
        "(the passport's probe: every CPU hashing at once); null: not taken (an imported run, or one measured before).",
    )


class LevelResult(Figures):
    """Figures at one concurrency level (or one long-context prompt length): a closed loop of N streams."""

    concurrency: Concurrency = Field(description="Concurrent requests in flight.")
    prompt_tokens: PromptTokens | None = Field(None, description="Prompt length, for long-context levels.")
    label: str | None = Field(None, description="Short name when the source names the level, e.g. 'medium'.")

    @property
    def request_rate(self) -> float | None:
        """Requests finished per second, when the source gives the window."""
        if self.completed and self.duration_s:
            return self.completed / self.duration_s
        return None


class RateLevel(Figures):
    """Figures at one offered request rate: an open loop (requests arrive on their schedule, not when one ends)."""

    offered_rps: PositiveRps | None = Field(
        None,
        description="Request rate asked for, req/s; null: as fast as possible (the tool's 'throughput').",
    )
    burstiness: Burstiness | None = Field(None, description="Arrival burstiness (1: Poisson); null: not stated.")
    arrivals: Literal["poisson", "gamma", "constant"] | None = Field(
        None,
        description="How requests arrive at the offered rate: 'poisson' (burstiness 1), 'gamma' (another burstiness), "
        "'constant' (evenly spaced, as GuideLLM's and AIPerf's constant profiles send); null: not stated.",
    )
    achieved_rps: Rps | None = Field(
        None, description="Requests completed per second of the tool's window (vLLM's: first send to last completion)."
    )
    sent_rps: PositiveRps | None = Field(
        None,
        description="Requests sent per second in the steady middle of the level (per-request times); null: not known.",
    )
    kept_up_rps: Rps | None = Field(
        None,
        description="Requests completed per second over the same middle ranks: below the send rate, the server fell "
        "behind (what saturation is judged on); null: not known.",
    )
    exceed: dict[Literal["ttft", "tpot", "e2el"], Count] | None = Field(
        None,
        description="Successful requests above each SLO limit (by vLLM --goodput key), from per-request samples: what "
        "the early-stopping rule decides a probe on; null: no samples.",
    )
    judged: Count | None = Field(
        None,
        description="Successful requests the early-stopping rule judged (those sent after the first tenth, the "
        "warm-up); null: no samples.",
    )
    independent: dict[Literal["ttft", "tpot", "e2el"], Annotated[float, Field(ge=0, le=1)]] | None = Field(
        None,
        description="Independent samples per request of each limit's latency (1 ÷ its autocorrelation time in send "
        "order): queued requests wait alike, so the rule counts requests × this; null: no samples.",
    )
    goodput_rps: Rps | None = Field(
        None, description="Completed requests per second that met every SLO limit (vLLM's request_goodput)."
    )
    attainment: float | None = Field(
        None, ge=0, le=1, description="Share of completed requests that met every SLO limit."
    )
    max_concurrency: Concurrency | None = Field(None, description="A cap on requests in flight, when the tool set one.")
    probe: Repeats | None = Field(None, description="The capacity search's probe number; null: a planned rate.")
    label: str | None = Field(None, description="The tool's name for the level, e.g. 'poisson@2.00', 'synchronous'.")
    verdict: str | None = Field(None, description="Against the run's SLO: 'meets', or why not (the limit, saturation).")

    @model_validator(mode="after")
    def _judged_bounds_exceed(self) -> RateLevel:
        if self.exceed and self.judged is not None and max(self.exceed.values()) > self.judged:
            raise ValueError("exceed counts more requests than were judged")
        return self


class Capacity(Strict):
    """The highest request rate that met the SLO with no failed request, as the search pinned it."""

    rps: PositiveRps | None = Field(
        None, description="Highest rate that met the SLO; null when even the lowest missed."
    )
    upper_rps: PositiveRps | None = Field(None, description="Lowest rate that missed it (the bracket's top).")
    tolerance: float = Field(gt=0, le=1, description="The precision the search aimed for (0.1: within 10 %).")
    converged: bool = Field(description="Whether the bracket closed to the tolerance.")
    stopped: str | None = Field(None, description="Why the search ended before the bracket closed, in words.")
    probes: Annotated[int, Field(ge=0, le=10_000)] = Field(
        description="Probes the search ran (planned rates it reused are not counted)."
    )
    search_s: Seconds | None = Field(None, description="Wall time of the search, seconds.")
    concurrent_requests: Requests | None = Field(
        None, description="Requests in flight at capacity by Little's law: rate × mean end-to-end latency."
    )
    confidence: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="Confidence at which each probe was decided to meet or miss (early stopping on per-request "
        "samples); null: probes judged on their percentiles alone.",
    )
    decided_rps: tuple[PositiveRps | None, PositiveRps | None] | None = Field(
        None,
        description="The interval the capacity lies in by decided verdicts only (at 99 % confidence on per-request "
        "samples): the highest rate decided to meet below the lowest decided to miss or saturate; a rate settled on "
        "its percentile is in neither. A null end: no decided rate on that side. Null: no per-request samples.",
    )


class ImportedProvenance(Strict):
    """Figures transcribed from a published source."""

    method: Literal["imported"] = Field(description="Provenance discriminator.")
    source_title: str = Field(min_length=1, description="Title of the source.")
    source: str = Field(min_length=1, description="Link or citation.")
    source_date: dt.date | None = Field(None, description="When the source measured; null if it does not say.")
    tool: str | None = Field(None, description="Benchmark tool as the source names it.")
    image: str | None = Field(None, description="Serving image as the source names it.")
    vllm_version: str | None = Field(None, description="vLLM version as the source names it.")
    conditions: str | None = Field(None, description="Workload as the source describes it.")
    imported_with: str | None = Field(
        None, description="The format `catalogue import` read, e.g. 'llama-benchy JSON report'; null: transcribed."
    )
    raw_files: list[str] = Field(default_factory=list, description="The source files, kept in runs/<stamp>/.")
    command: str | None = Field(None, description="The tool's command line, when known.")
    definitions: str | None = Field(None, description="How the tool defines the figures, in words.")


class NodeCommand(Strict):
    """One server of a measured run: its role, the host it ran on and its exact command."""

    role: str = Field(description="E.g. 'server', 'head (rank 0)', 'worker (rank 1, headless)', 'replica 2'.")
    host: str = Field(description="Host name as the runner was given it.")
    command: list[str] = Field(description="The exact argv (docker run ... or vllm serve ...).")


class HostFacts(Strict):
    """What one host and its image were when the runner measured: what a reproduction must match."""

    host: str = Field(description="Host name as the runner was given it.")
    docker_version: str | None = Field(None, description="Docker engine version; null for a local process.")
    kernel: str | None = Field(None, description="Kernel release of the host.")
    os: str | None = Field(None, description="Operating system of the host.")
    cpu: str | None = Field(None, description="CPU model and core count.")
    image_id: str | None = Field(None, description="The image's local content id on this host.")
    image_digest: str | None = Field(None, description="Registry digest (repo@sha256:...); null when built locally.")
    image_note: str | None = Field(None, description="How to get the same image when there is no digest.")
    vllm_version: str | None = Field(None, description="vLLM's version in the image (package metadata).")
    vllm_commit: str | None = Field(None, description="vLLM's commit, where its build records one.")
    model_revision: str | None = Field(
        None,
        pattern=REVISION_OR_EMPTY,
        max_length=MAX_REVISION,
        description="The model's pinned revision: a 40-hex commit, a folder's content hash (sha256:...) or a tag or "
        "branch name (letters and digits joined by . _ -; no /, so never refs/pr/*); empty when unknown. "
        "`catalogue reproduce` passes it as --revision.",
    )
    model_revision_from: str | None = Field(None, description="Where the revision comes from.")
    gpu: str | None = Field(None, description="GPU names from nvidia-smi, or 'no GPU'.")
    gpu_driver: str | None = Field(None, description="NVIDIA driver version.")
    cuda: str | None = Field(None, description="CUDA version nvidia-smi reports.")
    passport: HostPassport | None = Field(
        None, description="The host's state before the sweep and after it (memory, GPU clocks, links); null: not read."
    )


class MeasuredProvenance(Strict):
    """Figures measured by this project's runner."""

    method: Literal["measured"] = Field(description="Provenance discriminator.")
    runner_version: str = Field(description="Version of the runner that measured.")
    vllm_version: str = Field(description="vLLM version the server reported.")
    image: str | None = Field(None, description="Image (and digest) the server ran in; null for a local process.")
    gpu: str | None = Field(None, description="GPU name and driver; null when there is none.")
    host: str = Field(description="Host name.")
    serve_command: list[str] = Field(description="The exact server argv.")
    serve_env: dict[str, str] = Field(
        default_factory=dict,
        description="Environment a local server process got beyond the host's own (a container's is in its -e "
        "options): the recipe's and the platform profile's variables, the home folder written as ~.",
    )
    bench_commands: list[list[str]] = Field(description="The exact `vllm bench serve` argv per level.")
    prefill_derivation: str = Field(description="How prefill tok/s is derived from the raw results.")
    flag_snapshot: str | None = Field(None, description="Flag-schema snapshot taken from the server's environment.")
    topology: Literal["solo", "cluster", "replicas"] = Field("solo", description="How the servers were laid out.")
    nodes: list[NodeCommand] = Field(default_factory=list, description="Every server of the run, when more than one.")
    router: dict[str, Any] | None = Field(None, description="The router's config (LiteLLM), for replica topologies.")
    router_version: str | None = Field(None, description="The router's release, e.g. 'LiteLLM 1.106.2'.")
    image_id: str | None = Field(
        None, description="Content id of the image on the head host (what its tag meant then)."
    )
    client: str | None = Field(
        None, description="Where vLLM's benchmark client ran: in the image or in the host's venv."
    )
    client_vllm_version: str | None = Field(None, description="vLLM version of the benchmark client.")
    preflight: list[str] = Field(
        default_factory=list,
        description="What the checks before the start found per host: docker version, image id, GPUs, interfaces.",
    )
    hosts: list[HostFacts] = Field(
        default_factory=list, description="Per host: engine, kernel, OS, CPU, image digest, vLLM, model revision, GPU."
    )
    allowed_state: list[str] = Field(
        default_factory=list,
        description="Gates on the host's state that failed and were overridden with --allow-state: one line each.",
    )


Provenance = Annotated[ImportedProvenance | MeasuredProvenance, Field(discriminator="method")]


class BenchmarkRun(Strict):
    """One run: the levels it measured, its workload and its provenance."""

    recorded_at: dt.datetime = Field(description="UTC time the run was recorded (names the file).")
    part: str | None = Field(
        None,
        pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$",
        description="Another workload of the same refresh, in the file name after the stamp (a kind of text, the "
        "Arena's profile); null: the refresh's first run file.",
    )
    label: str | None = Field(None, description="What distinguishes this run, e.g. 'before tuning'.")
    provenance: Provenance = Field(description="Imported from a source or measured by the runner.")
    workload: Workload | None = Field(
        None, description="What the client sent; null when the source does not say (compared with nothing)."
    )
    levels: list[LevelResult] = Field(default_factory=list, description="Concurrency sweep results.")
    long_context: list[LevelResult] = Field(default_factory=list, description="Long-context results.")
    rates: list[RateLevel] = Field(
        default_factory=list, description="Open-loop results: planned rates, then the capacity search's probes."
    )
    slo: Slo | None = Field(None, description="The latency objective the rate levels were judged against.")
    capacity: Capacity | None = Field(None, description="The capacity search's result; null when none ran or ended.")
    quality: Quality | None = Field(
        None,
        description="Tool-calling and accuracy checks against the same server after the sweep; null: not measured.",
    )
    agents: AgentRun | None = Field(
        None, description="Agent sessions replayed from a trace (sweep.agents); null: not an agent run."
    )
    complete: bool = Field(True, description="False when the run stopped early.")
    incomplete_reason: str | None = Field(None, description="Why the run stopped early.")
    notes: list[str] = Field(default_factory=list, description="Facts about the run that fit no figure.")

    @model_validator(mode="after")
    def _consistent(self) -> BenchmarkRun:
        seen = [lv.concurrency for lv in self.levels]
        if len(seen) != len(set(seen)):
            raise ValueError("levels repeat a concurrency")
        probes = [lv.probe for lv in self.rates if lv.probe is not None]
        if len(probes) != len(set(probes)):
            raise ValueError("rates repeat a probe number")
        if self.capacity is not None and self.slo is None:
            raise ValueError("a capacity needs the slo it was measured against")
        if not self.complete and not self.incomplete_reason:
            raise ValueError("an incomplete run needs incomplete_reason")
        if self.recorded_at.tzinfo is None:
            raise ValueError("recorded_at needs a time zone (UTC)")
        return self

    @property
    def from_simulator(self) -> bool:
        """A simulator answered its requests (its workload names the profile): a model's figures, not measured."""
        return self.workload is not None and self.workload.simulator is not None

    @property
    def measured_on(self) -> dt.date | None:
        """The date the figures were measured, when known."""
        if isinstance(self.provenance, ImportedProvenance):
            return self.provenance.source_date
        return self.recorded_at.date()

    @property
    def stamp(self) -> str:
        """The UTC recording time: the refresh it belongs to."""
        return self.recorded_at.astimezone(dt.UTC).strftime(RUN_STAMP_FORMAT)

    @property
    def file_stem(self) -> str:
        """The run file's name without `.json`: the stamp, then `-<part>` for another workload of the refresh."""
        return f"{self.stamp}-{self.part}" if self.part else self.stamp

    def level(self, concurrency: int) -> LevelResult | None:
        """The result at a concurrency level, if measured."""
        return next((lv for lv in self.levels if lv.concurrency == concurrency), None)
