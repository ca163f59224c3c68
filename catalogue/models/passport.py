"""A run's passport: the state of each host it ran on, read before the sweep and after it, and the gates that
judge that state against the platform profile's thresholds.

Every value is what the host reported; a value the host does not report stays null with a note saying so
("no GPU", "speed not reported"), never a guess.
"""

from __future__ import annotations

import datetime as dt

from pydantic import Field

from catalogue.models.plausible import Calibration, Celsius, Load, Mhz, Mib, SmallInt, Watts
from catalogue.models.strict import Strict

NO_GPU = "no GPU"
SPEED_NOT_REPORTED = "speed not reported"
GATE_NAMES = ("memory", "containers", "gpu-processes", "link", "throttle")
"""The gates `--allow-state` names."""

THROTTLE_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
"""nvidia-smi's `clocks_throttle_reasons.active` bit mask, by NVML's nvmlClocksThrottleReason constants."""


class GpuState(Strict):
    """One GPU as `nvidia-smi --query-gpu` reported it; null where it printed [N/A]."""

    index: SmallInt | None = Field(None, description="nvidia-smi's GPU index.")
    name: str | None = Field(None, description="Product name, e.g. 'NVIDIA GB10'.")
    sm_clock_mhz: Mhz | None = Field(None, description="Current SM clock, MHz (clocks.sm).")
    memory_clock_mhz: Mhz | None = Field(None, description="Current memory clock, MHz (clocks.mem).")
    temperature_c: Celsius | None = Field(None, description="GPU core temperature, degrees C (temperature.gpu).")
    power_draw_w: Watts | None = Field(None, description="Power draw at the moment of reading, W (power.draw).")
    power_limit_w: Watts | None = Field(None, description="The enforced power limit, W (power.limit).")
    throttle_reasons: list[str] | None = Field(
        None, description="Active clock throttle reasons decoded from clocks_throttle_reasons.active; null: N/A."
    )
    persistence_mode: str | None = Field(None, description="'Enabled' or 'Disabled' (persistence_mode).")


class GpuProcess(Strict):
    """A process using a GPU (`nvidia-smi --query-compute-apps`)."""

    pid: SmallInt | None = Field(None, description="Process id as the host numbers it.")
    name: str | None = Field(None, description="Process name.")
    used_memory_mib: Mib | None = Field(None, description="GPU memory it holds, MiB; null where [N/A].")


class ContainerMemory(Strict):
    """Another container on the host and the memory it held (`docker stats --no-stream`)."""

    name: str = Field(description="Container name.")
    memory: str = Field(description="MemUsage as docker printed it, e.g. '1.2GiB / 23.4GiB'.")
    memory_mib: Mib | None = Field(None, description="The used part of MemUsage in MiB; null when unreadable.")


class RdmaPort(Strict):
    """One port of an RDMA device (/sys/class/infiniband/<dev>/ports/<n>)."""

    device: str = Field(description="RDMA device, e.g. 'rocep1s0f1'.")
    port: str = Field(description="Port number.")
    state: str | None = Field(None, description="Port state, e.g. '4: ACTIVE'.")
    rate: str | None = Field(None, description="Port rate, e.g. '200 Gb/sec (4X HDR)'.")


class InterfaceState(Strict):
    """A network interface the topology uses, from /sys/class/net."""

    name: str = Field(description="Interface name, e.g. 'enp1s0f1np1'.")
    present: bool = Field(description="False: the host has no interface of that name.")
    speed_mbps: SmallInt | None = Field(None, description="Negotiated link speed, Mb/s; null when not reported.")
    speed_note: str | None = Field(None, description="Why there is no speed, e.g. 'speed not reported' (virtual).")
    mtu: SmallInt | None = Field(None, description="MTU, bytes.")
    operstate: str | None = Field(None, description="Operational state, e.g. 'up'.")
    virtual: bool = Field(False, description="True for loopback and other virtual interfaces.")


class Passport(Strict):
    """What a host's state was at one moment: memory, other users of it, GPUs, links, kernel."""

    read_at: dt.datetime = Field(description="UTC time of the reading.")
    mem_available_mib: Mib | None = Field(
        None, description="MemAvailable from /proc/meminfo, MiB (on GB10 this is the GPU's memory too)."
    )
    mem_total_mib: Mib | None = Field(None, description="MemTotal from /proc/meminfo, MiB.")
    containers: list[ContainerMemory] | None = Field(
        None, description="Other running containers and their memory; null when docker was not asked."
    )
    gpu: str = Field(description="'no GPU' when there is no nvidia-smi, else what nvidia-smi answered.")
    gpus: list[GpuState] = Field(default_factory=list, description="Each GPU's clocks, temperature, power, throttle.")
    gpu_processes: list[GpuProcess] = Field(default_factory=list, description="Processes holding a GPU.")
    interfaces: list[InterfaceState] = Field(default_factory=list, description="Interfaces the topology uses.")
    rdma: list[RdmaPort] = Field(default_factory=list, description="RDMA ports, when /sys/class/infiniband exists.")
    kernel: str | None = Field(None, description="Kernel release.")
    driver: str | None = Field(None, description="NVIDIA driver version; null without one.")
    firmware: str | None = Field(None, description="Firmware (BIOS) version where /sys/class/dmi exposes it.")
    cpu_governor: str | None = Field(None, description="cpufreq scaling governor of cpu0; null when not exposed.")
    load_average: list[Load] | None = Field(
        None, description="1-, 5- and 15-minute load averages (/proc/loadavg): other work sharing the CPUs."
    )
    cpus: SmallInt | None = Field(None, description="CPUs the reader saw (os.cpu_count), to read the load against.")
    calibration_ms: Calibration | None = Field(
        None,
        description="Median wall time of rounds in which every CPU hashes 8 MiB with SHA-256 at once, ms: the CPU the "
        "machine gave at that moment (other work, other tenants, clocks); null: read before it was recorded.",
    )


class HostPassport(Strict):
    """One host's passport: before the sweep and after it."""

    before: Passport | None = Field(None, description="Read after preflight, before anything started.")
    after: Passport | None = Field(None, description="Read after every server stopped.")


class Gates(Strict):
    """Thresholds a host's state must meet before a sweep; a null threshold is not checked."""

    min_mem_available_gib: float | None = Field(None, gt=0, description="Least MemAvailable, GiB.")
    max_other_container_gib: float | None = Field(
        None, ge=0, description="Most memory any other running container may hold, GiB."
    )
    other_gpu_processes: bool = Field(True, description="False: a process already on the GPU refuses the run.")
    link_speed_mbps: int | None = Field(
        None, gt=0, description="Least link speed of each interface the topology uses, Mb/s."
    )
    invalid_throttle: list[str] = Field(
        default_factory=list, description="Throttle reasons (THROTTLE_BITS names) that invalidate a measurement."
    )


def throttle_names(mask: int) -> list[str]:
    """The named reasons set in a clocks_throttle_reasons.active mask; an unknown bit is kept as hex."""
    names = [name for bit, name in THROTTLE_BITS.items() if mask & bit]
    unknown = mask & ~sum(THROTTLE_BITS)
    return names + ([f"0x{unknown:x}"] if unknown else [])


def gate_failures(host: str, passport: Passport, gates: Gates, platform: str) -> list[tuple[str, str]]:
    """(gate, one line naming the host, the value and the fix) for each threshold the passport misses."""
    fix = f"(platforms/{platform}.yaml gates; --allow-state {{}} to measure anyway)"
    found: list[tuple[str, str]] = []
    mem = passport.mem_available_mib
    if gates.min_mem_available_gib is not None and mem is not None and mem < gates.min_mem_available_gib * 1024:
        found.append(
            (
                "memory",
                f"host {host}: MemAvailable is {mem / 1024:.1f} GiB, below the {gates.min_mem_available_gib:g} GiB "
                "the platform needs; free memory (stop what holds it) " + fix.format("memory"),
            )
        )
    limit = gates.max_other_container_gib
    found += [
        (
            "containers",
            f"host {host}: container {c.name} holds {c.memory_mib / 1024:.2f} GiB, over the {limit:g} GiB "
            "another container may hold; stop it " + fix.format("containers"),
        )
        for c in passport.containers or []
        if limit is not None and c.memory_mib is not None and c.memory_mib > limit * 1024
    ]
    found += [
        (
            "gpu-processes",
            f"host {host}: process {p.pid} ({p.name}) already uses the GPU; stop it " + fix.format("gpu-processes"),
        )
        for p in passport.gpu_processes
        if not gates.other_gpu_processes
    ]
    for nic in passport.interfaces:
        line = _link_problem(nic, gates.link_speed_mbps)
        if line:
            found.append(("link", f"host {host}: {line} " + fix.format("link")))
    for gpu in passport.gpus:
        bad = sorted(set(gpu.throttle_reasons or []) & set(gates.invalid_throttle))
        if bad:
            found.append(
                (
                    "throttle",
                    f"host {host}: GPU {gpu.index} is throttled ({', '.join(bad)}, SM clock {gpu.sm_clock_mhz} MHz); "
                    "let it cool down or power-cycle it " + fix.format("throttle"),
                )
            )
    return found


def _link_problem(nic: InterfaceState, expected: int | None) -> str | None:
    if not nic.present:
        return f"no interface {nic.name}; set hosts.<name>.interface in hosts.yaml to the link between the machines"
    if expected is None:
        return None
    if nic.speed_mbps is None:
        return (
            f"interface {nic.name} reports no link speed ({nic.speed_note}), the platform expects "
            f"{expected} Mb/s; use the physical link's interface"
        )
    if nic.speed_mbps < expected:
        return (
            f"interface {nic.name} negotiated {nic.speed_mbps} Mb/s, the platform expects {expected} Mb/s; "
            "reseat the cable or check the port's setting"
        )
    return None
