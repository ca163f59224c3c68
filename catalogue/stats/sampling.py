"""What the GPUs did during each level: the sampler's readings (nvidia-smi every second, runner/machine/sampler.py) cut
to a level's benchmark window, summed up per host, and the window's energy (catalogue/stats/energy.py).

Energy is given only when every GPU of every host has power samples that meet the gap rule over the whole window;
otherwise the level says "not measured" and why. A host without a GPU says "no GPU": no clock, temperature or power
is ever made up.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from pydantic import Field

from catalogue.models.passport import NO_GPU, GpuState
from catalogue.models.plausible import Celsius, Count, Joules, Mhz, PerJoule, Tokens, Watts
from catalogue.models.strict import Strict
from catalogue.stats.energy import Energy, integrate, per_token

POWER_SOURCE = "GPU power (nvidia-smi power.draw, sampled every second)"
"""What the energy figures measure: the GPU's own reading, not the whole box at the wall."""


class HostLevelSamples(Strict):
    """One host's GPUs over one level's benchmark window."""

    host: str = Field(description="Host name as the runner was given it.")
    gpu: str = Field(description="'no GPU', the GPU names nvidia-smi reported, or why the sampler read nothing.")
    samples: Count = Field(0, description="Readings of this host inside the window.")
    power_samples: Count = Field(0, description="Readings inside the window with a power figure for every GPU.")
    sm_clock_mhz_min: Mhz | None = Field(None, description="Lowest SM clock any GPU reported, MHz.")
    sm_clock_mhz_max: Mhz | None = Field(None, description="Highest SM clock any GPU reported, MHz.")
    memory_clock_mhz_min: Mhz | None = Field(None, description="Lowest memory clock any GPU reported, MHz.")
    memory_clock_mhz_max: Mhz | None = Field(None, description="Highest memory clock any GPU reported, MHz.")
    temperature_c_max: Celsius | None = Field(None, description="Highest GPU temperature, degrees C.")
    throttle_reasons: list[str] = Field(
        default_factory=list, description="Every clock throttle reason active in any reading (THROTTLE_BITS names)."
    )
    energy_j: Joules | None = Field(None, description="Energy of this host's GPUs over the window, J.")
    not_measured: str | None = Field(None, description="Why this host has no energy figure.")


class LevelMachine(Strict):
    """The machine during one level: per-host GPU readings over its benchmark window, and its energy."""

    window_start: dt.datetime = Field(description="UTC start of the benchmark window (the client's end − duration).")
    window_end: dt.datetime = Field(description="UTC end of the benchmark window (when the client returned).")
    output_tokens: Tokens | None = Field(None, description="Output tokens of the window (the raw result's).")
    hosts: list[HostLevelSamples] = Field(default_factory=list, description="Each host's readings.")
    power_source: str | None = Field(None, description="What the energy measures; null when power was not measured.")
    energy_j: Joules | None = Field(None, description="Energy over the window, J; null: not measured.")
    mean_power_w: Watts | None = Field(None, description="Energy ÷ window length, W; null: not measured.")
    j_per_output_token: PerJoule | None = Field(None, description="J per output token; null: not measured.")
    output_tokens_per_j: PerJoule | None = Field(None, description="Output tokens per J; null: not measured.")
    not_measured: str | None = Field(None, description="Why there is no energy figure, in words.")

    @property
    def measured(self) -> bool:
        return self.energy_j is not None

    def throttled(self, invalid: list[str]) -> list[str]:
        """The reasons seen in the window that `invalid` (a platform's gates.invalid_throttle) lists."""
        return sorted({r for h in self.hosts for r in h.throttle_reasons} & set(invalid))


@dataclass(frozen=True)
class Reading:
    """One reading of a host's GPUs: when (seconds since the epoch, on the runner's clock) and each GPU's state."""

    t: float
    gpus: list[GpuState]


@dataclass
class HostSeries:
    """Everything the sampler read on one host during a boot."""

    host: str
    gpu: str
    """'no GPU', the GPU names, or why there are no readings ('nvidia-smi failed: ...')."""
    readings: list[Reading] = field(default_factory=list)


def _span(values: list[float]) -> tuple[float | None, float | None]:
    return (min(values), max(values)) if values else (None, None)


def host_level(series: HostSeries, start: float, end: float) -> HostLevelSamples:
    """One host's summary over [start, end] and the energy of its GPUs (each GPU's power integrated on its own)."""
    inside = [r for r in series.readings if start <= r.t <= end]
    gpus = [g for r in inside for g in r.gpus]
    sm_min, sm_max = _span([g.sm_clock_mhz for g in gpus if g.sm_clock_mhz is not None])
    mem_min, mem_max = _span([g.memory_clock_mhz for g in gpus if g.memory_clock_mhz is not None])
    temps = [g.temperature_c for g in gpus if g.temperature_c is not None]
    powered = [r for r in inside if r.gpus and all(g.power_draw_w is not None for g in r.gpus)]
    energy, why = _energy(series, start, end)
    return HostLevelSamples(
        host=series.host,
        gpu=series.gpu,
        samples=len(inside),
        power_samples=len(powered),
        sm_clock_mhz_min=sm_min,
        sm_clock_mhz_max=sm_max,
        memory_clock_mhz_min=mem_min,
        memory_clock_mhz_max=mem_max,
        temperature_c_max=max(temps) if temps else None,
        throttle_reasons=sorted({t for g in gpus for t in g.throttle_reasons or []}),
        energy_j=energy,
        not_measured=why,
    )


def _energy(series: HostSeries, start: float, end: float) -> tuple[float | None, str | None]:
    if series.gpu == NO_GPU or not series.readings:
        return None, series.gpu if series.gpu == NO_GPU else f"no GPU reading ({series.gpu})"
    indexes = sorted({g.index if g.index is not None else -1 for r in series.readings for g in r.gpus})
    total = 0.0
    for index in indexes:
        points = [
            (r.t, g.power_draw_w)
            for r in series.readings
            for g in r.gpus
            if (g.index if g.index is not None else -1) == index and g.power_draw_w is not None
        ]
        found = integrate(points, start, end)
        if found.joules is None:
            return None, f"GPU {index}: {found.why_not}" if len(indexes) > 1 else found.why_not
        total += found.joules
    return total, None


def level_machine(series: list[HostSeries], start: float, end: float, output_tokens: int | None) -> LevelMachine:
    """The level's summary: every host over [start, end]; energy only when every host measured it."""
    hosts = [host_level(s, start, end) for s in series]
    missing = [h for h in hosts if h.energy_j is None]
    when = {
        "window_start": dt.datetime.fromtimestamp(start, dt.UTC),
        "window_end": dt.datetime.fromtimestamp(end, dt.UTC),
        "output_tokens": output_tokens,
        "hosts": hosts,
    }
    if not hosts or missing:
        why = "; ".join(f"host {h.host}: {h.not_measured}" for h in missing) or "no host was sampled"
        return LevelMachine(**when, not_measured=why)
    joules = sum(h.energy_j or 0.0 for h in hosts)
    per, tokens_per = per_token(Energy(joules), output_tokens)
    if per is None:
        return LevelMachine(**when, not_measured="no output tokens in the window")
    return LevelMachine(
        **when,
        power_source=POWER_SOURCE,
        energy_j=joules,
        mean_power_w=joules / (end - start),
        j_per_output_token=per,
        output_tokens_per_j=tokens_per,
    )
