"""The gates on a host's state: each threshold, one line naming the host, the value and the fix."""

from __future__ import annotations

import datetime as dt

from catalogue.models.passport import (
    SPEED_NOT_REPORTED,
    ContainerMemory,
    Gates,
    GpuProcess,
    GpuState,
    InterfaceState,
    Passport,
    gate_failures,
    throttle_names,
)
from catalogue.models.platform import load_platform

NOW = dt.datetime(2026, 11, 24, tzinfo=dt.UTC)
SPARK = load_platform("dgx-spark").gates


def spark(**fields) -> Passport:
    """A healthy Spark's passport, with `fields` changed."""
    base = {
        "read_at": NOW,
        "mem_available_mib": 118 * 1024,
        "containers": [],
        "gpu": "NVIDIA GB10",
        "gpus": [GpuState(index=0, name="NVIDIA GB10", sm_clock_mhz=2405, throttle_reasons=["gpu_idle"])],
        "interfaces": [InterfaceState(name="enp1s0f1np1", present=True, speed_mbps=200000, mtu=9000)],
    }
    return Passport(**{**base, **fields})


def test_a_healthy_spark_passes_every_gate():
    assert SPARK is not None and gate_failures("spark1", spark(), SPARK, "dgx-spark") == []


def test_each_gate_fails_in_one_line_naming_host_value_and_fix():
    bad = spark(
        mem_available_mib=20 * 1024,
        containers=[ContainerMemory(name="sglang", memory="103GiB / 121GiB", memory_mib=103 * 1024)],
        gpu_processes=[GpuProcess(pid=6330, name="sglang::scheduler", used_memory_mib=96073)],
        gpus=[GpuState(index=0, sm_clock_mhz=850, throttle_reasons=["sw_thermal_slowdown"])],
        interfaces=[InterfaceState(name="enp1s0f1np1", present=True, speed_mbps=100, mtu=1500)],
    )
    found = dict(gate_failures("spark1", bad, SPARK, "dgx-spark"))
    assert sorted(found) == ["containers", "gpu-processes", "link", "memory", "throttle"]
    assert all(line.startswith("host spark1: ") and "\n" not in line for line in found.values())
    assert "MemAvailable is 20.0 GiB, below the 96 GiB" in found["memory"]
    assert "container sglang holds 103.00 GiB, over the 4 GiB" in found["containers"]
    assert "negotiated 100 Mb/s, the platform expects 200000 Mb/s" in found["link"]
    assert "sw_thermal_slowdown, SM clock 850.0 MHz" in found["throttle"]
    assert found["memory"].endswith("(platforms/dgx-spark.yaml gates; --allow-state memory to measure anyway)")


def test_missing_and_speedless_interfaces_and_unchecked_thresholds():
    gone = spark(interfaces=[InterfaceState(name="enp1s0f1np1", present=False)])
    assert [g for g, _ in gate_failures("s", gone, SPARK, "dgx-spark")] == ["link"]
    virtual = spark(interfaces=[InterfaceState(name="lo", present=True, speed_note=SPEED_NOT_REPORTED, virtual=True)])
    [(_gate, line)] = gate_failures("s", virtual, SPARK, "dgx-spark")
    assert "interface lo reports no link speed (speed not reported)" in line
    # No threshold given: nothing is checked but a missing interface (which no run can use).
    assert gate_failures("s", virtual, Gates(), "cpu") == []
    assert [g for g, _ in gate_failures("s", gone, Gates(), "cpu")] == ["link"]


def test_throttle_names_decode_the_documented_bits():
    assert throttle_names(0) == [] and throttle_names(0x1) == ["gpu_idle"]
    assert throttle_names(0x4 | 0x40 | 0x80) == ["sw_power_cap", "hw_thermal_slowdown", "hw_power_brake_slowdown"]
    assert throttle_names(0x200) == ["0x200"]
