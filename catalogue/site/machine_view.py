"""The machine during each level on a run's page: clocks, temperature, throttling, energy and cost per level.

A level that throttled for a reason its platform profile lists as invalidating (`gates.invalid_throttle`) is marked
and never a headline figure (view.best_generation, the c=1 figure, the roofline, comparison winners). An energy,
J per token, tokens per joule or cost figure appears only for a level whose power was measured; every other level
says "not measured" and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from catalogue.models.benchmark import BenchmarkRun, Figures, LevelResult, RateLevel
from catalogue.models.platform import Platform
from catalogue.stats.price_model import PriceModel, cost_per_million, load_price_model
from catalogue.stats.sampling import LevelMachine


def invalid_throttle(platform: Platform | None) -> list[str]:
    """The throttle reasons the platform profile says invalidate a measurement."""
    return list(platform.gates.invalid_throttle) if platform and platform.gates else []


def throttled(level: Figures, platform: Platform | None) -> list[str]:
    """The invalidating throttle reasons seen during the level's window (none when it was not sampled)."""
    return level.machine.throttled(invalid_throttle(platform)) if level.machine is not None else []


def headline_levels(levels: Sequence[LevelResult], platform: Platform | None) -> list[LevelResult]:
    """The levels that may be quoted as a headline: those that did not throttle."""
    return [lv for lv in levels if not throttled(lv, platform)]


def quotable(level: LevelResult | None, platform: Platform | None) -> LevelResult | None:
    """The level, unless it throttled (then no headline quotes it)."""
    return level if level is not None and not throttled(level, platform) else None


@dataclass(frozen=True)
class MachineRow:
    """One level's row: what the GPUs did and the energy of its window."""

    level: str
    samples: str
    clocks: str
    temperature: str
    throttle: str
    throttled: list[str]
    cpu: str
    """The CPU calibration just before and after the level ('9.8 → 9.9'), or 'N/A'."""
    energy_j: float | None
    j_per_token: float | None
    tokens_per_j: float | None
    mean_power_w: float | None
    cost: float | None
    not_measured: str | None


@dataclass(frozen=True)
class MachineBox:
    """The run's per-level rows, the currency of its costs, and whether any level measured power."""

    rows: list[MachineRow]
    currency: str
    measured: bool
    costed: bool
    power_source: str | None
    calibrated: bool = False
    """Some level has the CPU calibrations around it (the column is shown)."""


def level_name(level: Figures) -> str:
    if isinstance(level, RateLevel):
        return f"probe {level.probe}" if level.probe is not None else f"{level.offered_rps or 'max'} req/s"
    assert isinstance(level, LevelResult)
    return f"{level.prompt_tokens} prompt tokens" if level.prompt_tokens else f"c={level.concurrency}"


def _range(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "N/A"
    return f"{low:g}" if low == high else f"{low:g}–{high:g}"


def machine_row(
    level: Figures, machine: LevelMachine, platform: Platform | None, price: PriceModel | None, boxes: int
) -> MachineRow:
    """One level's row; the cost only when its power was measured and the price model prices its box."""
    hosts = machine.hosts
    samples = ", ".join(f"{h.samples} ({h.power_samples} with power)" for h in hosts) or "none"
    gpu = "; ".join(sorted({h.gpu for h in hosts}))
    clocks = "; ".join(
        f"SM {_range(h.sm_clock_mhz_min, h.sm_clock_mhz_max)} MHz, memory "
        f"{_range(h.memory_clock_mhz_min, h.memory_clock_mhz_max)} MHz"
        for h in hosts
        if h.samples
    )
    temps = [h.temperature_c_max for h in hosts if h.temperature_c_max is not None]
    reasons = sorted({r for h in hosts for r in h.throttle_reasons})
    measured = machine.measured
    cost = (
        cost_per_million(price, platform.name if platform else None, boxes, machine.mean_power_w, level.generation_tps)
        if measured and price is not None
        else None
    )
    return MachineRow(
        level=level_name(level),
        samples=samples,
        clocks=clocks or gpu,
        temperature=f"{max(temps):g} °C" if temps else "N/A",
        throttle=", ".join(reasons) or ("none" if any(h.samples for h in hosts) else "N/A"),
        throttled=throttled(level, platform),
        cpu=" → ".join(f"{x:g}" for x in level.calibration_ms) if level.calibration_ms else "N/A",
        energy_j=machine.energy_j if measured else None,
        j_per_token=machine.j_per_output_token if measured else None,
        tokens_per_j=machine.output_tokens_per_j if measured else None,
        mean_power_w=machine.mean_power_w if measured else None,
        cost=cost,
        not_measured=None if measured else machine.not_measured or "not measured",
    )


def machine_box(run: BenchmarkRun, platform: Platform | None, boxes: int | None = None) -> MachineBox | None:
    """The per-level box of a run whose levels were sampled; None for a run without samples (imported, older)."""
    levels: list[Figures] = [*run.levels, *run.long_context, *run.rates]
    sampled = [(lv, lv.machine) for lv in levels if lv.machine is not None]
    if not sampled:
        return None
    measured = any(m.measured for _, m in sampled)
    price = load_price_model() if measured else None
    count = boxes or max(1, len(sampled[0][1].hosts))
    rows = [machine_row(lv, m, platform, price, count) for lv, m in sampled]
    source = next((m.power_source for _, m in sampled if m.power_source), None)
    costed = any(r.cost is not None for r in rows)
    calibrated = any(r.cpu != "N/A" for r in rows)
    return MachineBox(rows, price.currency if price else "", measured, costed, source, calibrated)
