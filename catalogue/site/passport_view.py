"""The "Where it ran" box of a measured run: each host's passport before and after the sweep, as rows of text
(the template escapes them), and the gates the owner overrode."""

from __future__ import annotations

from dataclasses import dataclass, field

from catalogue.models.benchmark import BenchmarkRun, MeasuredProvenance
from catalogue.models.passport import GpuState, HostPassport, InterfaceState, Passport


@dataclass(frozen=True)
class HostBox:
    """One host: rows of (what, before, after), and warnings."""

    host: str
    rows: list[tuple[str, str, str]]
    warnings: list[str] = field(default_factory=list)


def where_it_ran(run: BenchmarkRun) -> tuple[list[HostBox], list[str]]:
    """The boxes of a run's hosts that carry a passport, and the run's --allow-state lines."""
    prov = run.provenance
    if not isinstance(prov, MeasuredProvenance):
        return [], []
    boxes = [host_box(h.host, h.passport) for h in prov.hosts if h.passport is not None]
    return boxes, list(prov.allowed_state)


def host_box(host: str, passport: HostPassport) -> HostBox:
    """Rows for one host; a reading that is missing says so."""
    before, after = passport.before, passport.after
    rows = [(label, fn(before), fn(after)) for label, fn in READINGS]
    warnings = []
    for when, p in (("before the sweep", before), ("after the sweep", after)):
        for g in p.gpus if p else []:
            reasons = [r for r in g.throttle_reasons or [] if r != "gpu_idle"]
            if reasons:
                warnings.append(f"GPU {g.index} was throttled ({', '.join(reasons)}) when read {when}")
    return HostBox(host, rows, warnings)


def _mem(p: Passport | None) -> str:
    if p is None:
        return "not read"
    if p.mem_available_mib is None:
        return "not reported"
    total = f" of {p.mem_total_mib / 1024:.1f}" if p.mem_total_mib else ""
    return f"{p.mem_available_mib / 1024:.1f}{total} GiB available"


def _containers(p: Passport | None) -> str:
    if p is None or p.containers is None:
        return "not read"
    return "; ".join(f"{c.name} ({c.memory})" for c in p.containers) or "none"


def _gpu(p: Passport | None) -> str:
    if p is None:
        return "not read"
    return "; ".join(_one_gpu(g) for g in p.gpus) or p.gpu


def _one_gpu(g: GpuState) -> str:
    parts = [
        f"{g.name or 'GPU'} {g.index if g.index is not None else ''}".strip(),
        f"SM {_n(g.sm_clock_mhz)} MHz, memory {_n(g.memory_clock_mhz)} MHz",
        f"{_n(g.temperature_c)} °C",
        f"{_n(g.power_draw_w)} W of {_n(g.power_limit_w)} W",
        "throttle: " + (", ".join(g.throttle_reasons) or "none" if g.throttle_reasons is not None else "N/A"),
        f"persistence {g.persistence_mode or 'N/A'}",
    ]
    return ", ".join(parts)


def _n(value: float | None) -> str:
    return "N/A" if value is None else f"{value:g}"


def _gpu_processes(p: Passport | None) -> str:
    if p is None:
        return "not read"
    if not p.gpus:
        return p.gpu
    return "; ".join(f"{q.pid} {q.name} ({_n(q.used_memory_mib)} MiB)" for q in p.gpu_processes) or "none"


def _links(p: Passport | None) -> str:
    if p is None:
        return "not read"
    return "; ".join(_one_link(i) for i in p.interfaces) or "no interface named in the hosts file"


def _one_link(i: InterfaceState) -> str:
    if not i.present:
        return f"{i.name}: missing"
    speed = f"{i.speed_mbps} Mb/s" if i.speed_mbps else (i.speed_note or "speed not reported")
    return f"{i.name}: {speed}, MTU {i.mtu}, {i.operstate or 'state unknown'}"


def _rdma(p: Passport | None) -> str:
    if p is None:
        return "not read"
    return "; ".join(f"{r.device} port {r.port}: {r.state}, {r.rate}" for r in p.rdma) or "none"


def _system(p: Passport | None) -> str:
    if p is None:
        return "not read"
    return (
        f"kernel {p.kernel or 'unknown'}, driver {p.driver or 'none'}, firmware {p.firmware or 'not exposed'}, "
        f"CPU governor {p.cpu_governor or 'not exposed'}"
    )


def _load(p: Passport | None) -> str:
    if p is None:
        return "not read"
    if p.load_average is None:
        return "not reported"
    on = f" on {p.cpus} CPUs" if p.cpus else ""
    return ", ".join(f"{x:g}" for x in p.load_average) + f" (1, 5, 15 min){on}"


def _calibration(p: Passport | None) -> str:
    if p is None:
        return "not read"
    if p.calibration_ms is None:
        return "not recorded"
    return f"{p.calibration_ms:g} ms for every CPU to hash 8 MiB at once (runs measured 1.25x apart are not compared)"


READINGS = [
    ("Memory", _mem),
    ("Load", _load),
    ("CPU calibration", _calibration),
    ("Other containers", _containers),
    ("GPU", _gpu),
    ("GPU processes", _gpu_processes),
    ("Links", _links),
    ("RDMA ports", _rdma),
    ("System", _system),
]
"""The box's rows: label and how to say it from one passport."""
