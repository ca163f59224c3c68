"""The recipe file (`recipes/<id>/recipe.yaml`): what to run, on what, and why."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt, model_validator

from catalogue.models.arena import ArenaSetting
from catalogue.models.plausible import MAX_REQUESTS, MAX_S, Concurrency, Count, PromptTokens, Seconds
from catalogue.models.quality import QualitySetting
from catalogue.models.revision import REVISION_FLAGS, REVISION_RULE, is_revision
from catalogue.models.slo import OpenLoop, Slo
from catalogue.models.strict import Strict
from catalogue.models.texts import TextKind
from catalogue.models.workload import Workload
from catalogue.stats.agents import AgentsSetting

FLAG_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9_-]+)*$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

FlagValue = bool | int | float | str | list[Any] | dict[str, Any]
"""A flag's value: `true` for a switch, a scalar, a list of scalars for an option that takes several values
(`--served-model-name a b`: a word each), or a mapping rendered as JSON."""


class Hardware(Strict):
    """The machine the recipe runs on."""

    name: str = Field(min_length=1, description="Product name, e.g. 'ASUS GX10 / NVIDIA DGX Spark'.")
    platform: str = Field(
        pattern=r"^[a-z0-9-]+$", description="Slug that groups comparable machines, e.g. 'dgx-spark'."
    )
    accelerator: str = Field(min_length=1, description="Chip, e.g. 'GB10 Superchip'.")
    memory_gb: PositiveFloat = Field(description="Memory per node usable by the model, in GB.")
    memory_type: str | None = Field(None, description="Memory technology, e.g. 'LPDDR5x unified'.")
    memory_bandwidth_gbs: PositiveFloat | None = Field(None, description="Memory bandwidth per node, in GB/s.")
    nodes: PositiveInt = Field(1, description="How many machines the recipe uses.")
    interconnect: str | None = Field(None, description="Link between nodes, when more than one.")


class SoloTopology(Strict):
    """One server on one node."""

    kind: Literal["solo"] = Field(description="Topology discriminator.")


class ClusterTopology(Strict):
    """One server spread over several nodes with tensor parallelism."""

    kind: Literal["cluster"] = Field(description="Topology discriminator.")
    tensor_parallel_size: Annotated[int, Field(ge=2)] = Field(description="Tensor-parallel degree across the cluster.")
    nodes: Annotated[int, Field(ge=2)] = Field(description="Nodes the server spans.")
    communication: str | None = Field(None, description="Collective library / transport, e.g. 'NCCL all-reduce'.")


class ReplicasTopology(Strict):
    """Several independent servers behind a request router."""

    kind: Literal["replicas"] = Field(description="Topology discriminator.")
    replicas: Annotated[int, Field(ge=2)] = Field(description="Independent servers.")
    router: str = Field(min_length=1, description="Router in front of the replicas, e.g. 'LiteLLM'.")
    routing_strategy: str = Field(min_length=1, description="How the router picks a replica, e.g. 'simple-shuffle'.")


Topology = Annotated[SoloTopology | ClusterTopology | ReplicasTopology, Field(discriminator="kind")]


class Container(Strict):
    """How the image is started with `docker run`."""

    name: str | None = Field(None, description="Container name (`--name`).")
    options: list[str] = Field(default_factory=list, description="Other `docker run` arguments, one shell word each.")


class Consent(Strict):
    """One thing the launch asks of the owner's machine (the run policy's consent class), and why."""

    option: str = Field(min_length=1, description="The option as the policy names it, e.g. '--cap-add IPC_LOCK'.")
    reason: str = Field(min_length=1, description="Why the recipe needs it (plain text; `code` in backticks).")


class SimulatorServer(Strict):
    """The simulator (simulator/) in place of `vllm serve`: a test instrument whose runs are marked simulated."""

    profile: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", description="Its profile: simulator/profiles/<name>.yaml.")
    seed: int | None = Field(None, description="Noise seed; null: drawn at each start (and logged).")
    slowdown: PositiveFloat | None = Field(None, description="Factor on decode steps (a regression to find).")
    slowdown_above: NonNegativeInt | None = Field(
        None, description="Slow only steps decoding more sequences than this; null: the profile's (0: all)."
    )

    def argv(self) -> list[str]:
        """The simulator's own options after the `vllm serve` flags."""
        out = ["--profile", self.profile]
        for name, value in (("seed", self.seed), ("slowdown", self.slowdown), ("slowdown-above", self.slowdown_above)):
            if value is not None:
                out += [f"--{name}", f"{value:g}" if isinstance(value, float) else str(value)]
        return out


class Serving(Strict):
    """The launch: image, environment and every `vllm serve` flag."""

    engine: Literal["vllm"] = Field("vllm", description="Serving engine; only vLLM today.")
    engine_note: str | None = Field(None, description="Where this vLLM comes from, e.g. 'spark-vllm-docker build'.")
    image: str | None = Field(None, description="Container image; none means a local `vllm serve` process.")
    image_source: str | None = Field(None, description="How the image is obtained or built.")
    container: Container | None = Field(None, description="`docker run` options for the image.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables for the server.")
    env_from_host: list[str] = Field(
        default_factory=list,
        description="Variables the server takes from the owner's environment, by name only (e.g. HF_TOKEN).",
    )
    consent: list[Consent] = Field(
        default_factory=list, description="Options the run policy runs only with the owner's consent, each with why."
    )
    model_path: str | None = Field(None, description="Positional model argument when it differs from `model`.")
    flags: dict[str, FlagValue] = Field(default_factory=dict, description="`vllm serve` flags, names without dashes.")
    image_flags: dict[str, str] = Field(
        default_factory=dict, description="Flags upstream vLLM lacks, each mapped to the image that provides it."
    )
    simulator: SimulatorServer | None = Field(
        None, description="Serve with the simulator instead of vLLM (a local process; runs marked simulated)."
    )

    @model_validator(mode="after")
    def _check_names(self) -> Serving:
        for name, value in self.flags.items():
            if not FLAG_NAME.match(name) or name.startswith("-"):
                raise ValueError(f"flag name {name!r} must be lower-case, without leading dashes")
            if value is False or value is None:
                raise ValueError(f"flag {name!r}: write a switch as `true`; for off use its negative flag")
            if name.replace("_", "-") in REVISION_FLAGS and not is_revision(value):
                raise ValueError(f"flag {name!r}: {ascii(value)[:60]} is not {REVISION_RULE}")
            if isinstance(value, list) and (
                not value or any(isinstance(v, bool) or not isinstance(v, (str, int, float)) for v in value)
            ):
                raise ValueError(f"flag {name!r}: a list holds the option's values, one word each (text or numbers)")
        for name in self.env:
            if not ENV_NAME.match(name):
                raise ValueError(f"environment variable name {name!r} is not valid")
        for name in self.env_from_host:
            if not ENV_NAME.match(name):
                raise ValueError(f"env_from_host: variable name {name!r} is not valid")
            if name in self.env:
                raise ValueError(f"env_from_host: {name!r} is also written in env")
        options = [" ".join(c.option.split()) for c in self.consent]
        if len(set(options)) != len(options):
            raise ValueError("consent names an option twice")
        for name in self.image_flags:
            if name not in self.flags:
                raise ValueError(f"image_flags names {name!r}, which is not in flags")
        if self.container is not None and self.image is None:
            raise ValueError("container options are given but no image")
        if self.simulator is not None and self.image is not None:
            raise ValueError("the simulator runs as a local process: give no image with serving.simulator")
        return self


class KeyFlag(Strict):
    """One line of 'Key flags': the flags (and env) it explains and why they are set."""

    flags: list[str] = Field(default_factory=list, description="Flag names from serving.flags.")
    env: list[str] = Field(default_factory=list, description="Variable names from serving.env.")
    reason: str = Field(min_length=1, description="Why these are set (plain text; `code` in backticks).")

    @model_validator(mode="after")
    def _not_empty(self) -> KeyFlag:
        if not self.flags and not self.env:
            raise ValueError("a key flag names at least one flag or env variable")
        return self


Metric = Literal["generation_tps", "prefill_tps", "peak_tps", "total_tps", "ttft_mean_ms"]


class Comparison(Strict):
    """A number published elsewhere, compared with ours at the same concurrency."""

    source: str = Field(min_length=1, description="Who published it and under what set-up.")
    citation: str = Field(min_length=1, description="Link or bibliographic citation.")
    date: dt.date | None = Field(None, description="When it was published or measured.")
    concurrency: PositiveInt = Field(description="Concurrency level of their figure.")
    metric: Metric = Field("generation_tps", description="Which of our figures it compares with.")
    value: PositiveFloat = Field(description="Their figure.")
    workload: Workload | None = Field(
        None, description="How they measured; null when not stated (then it is no like-for-like)."
    )
    nodes: PositiveInt | None = Field(
        None, description="Machines their figure ran on (e.g. a Spark Arena entry's); null: as many as the recipe's."
    )


class RegressionBand(Strict):
    """When a figure counts as changed against the run before (where the runs measured no repeats). Bounded: a
    recipe is untrusted, and a band of 1e-9 / 1e9 called a 10x regression noise; the committed recipes use 0.7-0.93
    and 1.07-1.43, the default is PyTorch's 0.8 / 1.2."""

    throughput_ratio: float = Field(
        0.8, ge=0.5, lt=1, description="A throughput below this share of the baseline's has regressed (0.5 to 1)."
    )
    latency_ratio: float = Field(
        1.2, gt=1, le=2, description="A latency above this multiple of the baseline's has regressed (1 to 2)."
    )


class Sweep(Strict):
    """How the runner measures the recipe."""

    concurrency: list[Concurrency] = Field(min_length=1, description="Concurrency levels, ascending.")
    input_len: PromptTokens = Field(description="Prompt tokens per request.")
    output_len: PromptTokens = Field(description="Generated tokens per request.")
    prompts_per_level: int = Field(gt=0, le=MAX_REQUESTS, description="Minimum requests per level.")
    prompts_per_stream: int = Field(
        4, gt=0, le=MAX_REQUESTS, description="Requests per concurrent stream, for a steady state."
    )
    warmups: Count = Field(0, description="Warm-up requests before each level.")
    min_level_s: Seconds = Field(
        10.0,
        description="Shortest benchmark window of a level; a shorter one runs again with "
        "more prompts (0: off). A one-second peak needs several whole seconds.",
    )
    long_context: list[PromptTokens] = Field(default_factory=list, description="Prompt lengths of long-context levels.")
    health_timeout_s: int = Field(
        1800, gt=0, le=int(MAX_S), description="How long a cold boot may take before /health answers."
    )
    regression: RegressionBand = Field(
        default_factory=RegressionBand,
        description="Noise band of the regression check (PyTorch's vLLM benchmark thresholds by default).",
    )
    open_loop: OpenLoop | None = Field(
        None, description="Open-loop levels at request rates, and the settings of the capacity search (--capacity)."
    )
    slo: Slo | None = Field(
        None, description="Latency objective: rate levels report goodput and attainment against it; capacity needs it."
    )
    quality: QualitySetting = Field(
        default_factory=QualitySetting,
        description="The tool-calling and accuracy checks after the sweep (on unless turned off with a reason).",
    )
    texts: list[TextKind] = Field(
        default_factory=lambda: list[TextKind](["random"]),
        min_length=1,
        description="Kinds of text the concurrency levels send, each a workload of its own (catalogue.models.texts): "
        "random tokens, prose, code. The first carries the long-context and open-loop levels.",
    )
    arena: ArenaSetting | None = Field(
        None, description="A Spark Arena llama-benchy profile after the quality checks, in the same boot; null: none."
    )
    agents: AgentsSetting | None = Field(
        None, description="Agent sessions replayed from a trace with AIPerf, last, in the same boot; null: none."
    )

    @model_validator(mode="after")
    def _ascending(self) -> Sweep:
        for name in ("concurrency", "long_context"):
            values = getattr(self, name)
            if values != sorted(set(values)):
                raise ValueError(f"{name} must be ascending without repeats")
        if len(set(self.texts)) != len(self.texts):
            raise ValueError("texts: a kind of text repeats")
        if self.agents and self.agents.max_sessions and self.slo is None:
            raise ValueError("agents.max_sessions: the capacity search in sessions needs an slo")
        if self.texts[0] != "random" and (self.long_context or self.open_loop):
            raise ValueError(
                "texts: long-context and open-loop levels send random prompts of set lengths: put `random` first"
            )
        return self


class Roofline(Strict):
    """Inputs of the single-stream bandwidth ceiling: bandwidth / bytes read per token."""

    bytes_per_token_gb: PositiveFloat = Field(description="GB read from memory per generated token.")
    how_obtained: str = Field(min_length=1, description="Where the bytes-per-token figure comes from.")


class Prose(Strict):
    """The recipe's explanations: plain text, `code` in backticks, a blank line between paragraphs."""

    why: str | None = Field(None, description="Why the recipe exists.")
    reading_the_numbers: str | None = Field(None, description="How to read this recipe's numbers.")
    when_to_use: list[str] = Field(default_factory=list, description="Workloads it suits.")
    when_not_to_use: list[str] = Field(default_factory=list, description="Workloads it does not suit.")
    trade_offs: list[str] = Field(default_factory=list, description="What it costs.")
    notes: list[str] = Field(default_factory=list, description="Other facts worth knowing.")


class Recipe(Strict):
    """One recipe: model + hardware + launch + explanations + comparisons + sweep plan."""

    title: str = Field(min_length=1, description="Page title.")
    summary: str = Field(min_length=1, description="One-paragraph summary.")
    status: Literal["production", "experimental", "community", "deprecated"] = Field(description="Maturity.")
    model: str = Field(pattern=r"^[\w.-]+/[\w.-]+$", description="Hugging Face model id.")
    quantization: str = Field(min_length=1, description="Weight format, e.g. 'MXFP4 (moe + qkv + o + lm_head)'.")
    hardware: Hardware = Field(description="Machine.")
    topology: Topology = Field(description="How servers are laid out.")
    serving: Serving = Field(description="Launch.")
    prose: Prose = Field(default_factory=Prose, description="Explanations.")
    key_flags: list[KeyFlag] = Field(default_factory=list, description="Flags worth explaining, with reasons.")
    comparisons: list[Comparison] = Field(default_factory=list, description="Other published numbers.")
    sweep: Sweep = Field(description="How the runner measures it.")
    roofline: Roofline | None = Field(None, description="Single-stream bandwidth ceiling inputs.")
    headline_workload: Workload | None = Field(
        None, description="The workload whose figures lead the page and the index (matched by its key); default newest."
    )
    sources: list[str] = Field(default_factory=list, description="Where the recipe's facts come from.")
    publish: bool = Field(True, description="False keeps it out of the published catalogue (examples, fixtures).")

    @model_validator(mode="after")
    def _cross_refs(self) -> Recipe:
        for i, key in enumerate(self.key_flags):
            for name in key.flags:
                if name not in self.serving.flags:
                    raise ValueError(f"key_flags[{i}] names flag {name!r}, which is not in serving.flags")
            for name in key.env:
                if name not in self.serving.env:
                    raise ValueError(f"key_flags[{i}] names env {name!r}, which is not in serving.env")
        todo = self.first_todo()
        if self.publish and todo:
            raise ValueError(f"{todo} still says TODO: fill it in, or keep `publish: false`")
        if self.publish and self.serving.simulator is not None:
            raise ValueError("serving.simulator: a simulated recipe is a test instrument: keep `publish: false`")
        machines = {"cluster": "nodes", "replicas": "replicas"}.get(self.topology.kind)
        uses = getattr(self.topology, machines) if machines else 1
        if self.hardware.nodes != uses:
            raise ValueError(f"hardware.nodes is {self.hardware.nodes} but the topology uses {uses} machine(s)")
        if "speculative-config" in self.serving.flags and len(set(self.sweep.texts) - {"random"}) < 2:
            raise ValueError(
                "sweep.texts: a recipe with speculative decoding measures at least two kinds of text "
                "(`texts: [prose, code]`): its speed depends on the text"
            )
        tp = self.serving.flags.get("tensor-parallel-size", 1)
        if isinstance(self.topology, ClusterTopology) and tp != self.topology.tensor_parallel_size:
            raise ValueError("topology.tensor_parallel_size differs from serving.flags.tensor-parallel-size")
        return self

    def first_todo(self) -> str | None:
        """Path of the first text that still holds a TODO marker (left by `catalogue new`), if any."""
        if '"TODO' not in self.model_dump_json(exclude={"serving": {"flags"}}):
            return None  # no string starts with it (the JSON quotes every one): the walk below would find none

        def walk(value: Any, path: str) -> str | None:
            if isinstance(value, str):
                return path if value.startswith("TODO") else None
            items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
            for key, item in items:
                found = walk(item, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key)
                if found:
                    return found
            return None

        return walk(self.model_dump(exclude={"serving": {"flags"}}), "")

    @property
    def served_name(self) -> str:
        """The model name clients send: the first `--served-model-name` (vLLM answers to each of several and
        reports the first, vllm.config.model.get_served_model_name), else the model argument."""
        name = self.serving.flags.get("served-model-name", self.model_arg)
        return str(name[0] if isinstance(name, list) else name)

    @property
    def model_arg(self) -> str:
        """The positional model argument of `vllm serve`."""
        return self.serving.model_path or self.model
