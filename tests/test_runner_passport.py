"""The passport's parsing, on real nvidia-smi outputs (tests/data/nvidia-smi, each with its source) and on this
machine's own /proc and /sys through the probe script."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from catalogue.models.passport import NO_GPU, SPEED_NOT_REPORTED
from runner.machine.passport import (
    PROBE,
    container_memory,
    csv_rows,
    gpu_processes,
    gpu_states,
    load_average,
    meminfo_mib,
    passport_from_probe,
    size_mib,
)
from tests.gpu_support import gpu_names

DATA = Path(__file__).parent / "data" / "nvidia-smi"
NOW = dt.datetime(2026, 11, 24, tzinfo=dt.UTC)


def test_gb10_memory_reads_na_so_it_is_none_not_zero():
    rows = csv_rows((DATA / "gb10-index-name-memory.csv").read_text())
    assert rows == [{"index": "0", "name": "NVIDIA GB10", "memory.total": None, "memory.free": None}]
    [gpu] = gpu_states(rows)
    assert gpu.index == 0 and gpu.name == "NVIDIA GB10"
    assert gpu.sm_clock_mhz is None and gpu.power_draw_w is None and gpu.throttle_reasons is None


def test_gb10_sampled_with_header_and_units():
    rows = csv_rows((DATA / "gb10-timestamp-util-memused-temp.csv").read_text())
    assert len(rows) == 5
    assert [r["memory.used"] for r in rows] == [None] * 5
    assert [r["utilization.gpu"] for r in rows] == ["0 %", "2 %", "0 %", "0 %", "0 %"]
    assert [g.temperature_c for g in gpu_states(rows)] == [38.0] * 5


def test_rtx2080_noheader_nounits_by_the_query_fields():
    query = (
        "power.limit,power.min_limit,power.max_limit,memory.total,vbios_version,driver_version,name,gpu_uuid,"
        "power.draw,temperature.gpu,temperature.memory,clocks.current.graphics,clocks.sm,clocks.mem,"
        "utilization.gpu,utilization.memory,fan.speed,pcie.link.width.current,pstate"
    )
    fields = query.split(",")
    rows = csv_rows((DATA / "rtx2080-noheader-nounits.csv").read_text(), fields)
    assert rows[0]["temperature.memory"] is None and rows[0]["pstate"] == "P2"
    [gpu] = gpu_states(rows)
    assert gpu.name == "GeForce RTX 2080"
    assert (gpu.power_limit_w, gpu.power_draw_w, gpu.temperature_c) == (200.0, 176.98, 45.0)
    assert (gpu.sm_clock_mhz, gpu.memory_clock_mhz) == (1965.0, 7199.0)


def test_two_gpus_with_units_in_every_cell():
    rows = csv_rows((DATA / "gtx1080ti-gtx1060-header-units.csv").read_text())
    gpus = gpu_states(rows)
    assert [g.name for g in gpus] == ["GeForce GTX 1080 Ti", "GeForce GTX 1060 6GB"]
    assert [g.power_draw_w for g in gpus] == [106.56, 5.68]
    assert [g.memory_clock_mhz for g in gpus] == [5508.0, 405.0]  # header name clocks.current.memory
    assert [g.temperature_c for g in gpus] == [60.0, 49.0]


def test_throttle_mask_and_persistence_of_the_probe_query():
    fields = (
        "index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit,clocks_throttle_reasons.active,"
        "persistence_mode"
    )
    # A thermally throttled GPU: SW thermal (0x20) and HW slowdown (0x8); one idle (0x1); one with an unknown bit.
    text = (
        "0, NVIDIA GB10, 850, [N/A], 91, 30.5, [N/A], 0x0000000000000028, Enabled\n"
        "1, X, 2405, 1, 40, 3, 100, 0x1, Disabled\n"
        "2, Y, 1, 1, 1, 1, 1, 0x0000000000001004, Enabled\n"
    )
    gpus = gpu_states(csv_rows(text, fields.split(",")))
    assert gpus[0].throttle_reasons == ["hw_slowdown", "sw_thermal_slowdown"] and gpus[0].memory_clock_mhz is None
    assert gpus[0].persistence_mode == "Enabled" and gpus[0].power_limit_w is None
    assert gpus[1].throttle_reasons == ["gpu_idle"]
    assert gpus[2].throttle_reasons == ["sw_power_cap", "0x1000"]


def test_compute_apps_and_a_process_name_with_a_comma():
    rows = csv_rows("3150, python3, 218\n6330, a, b, [N/A]\n", ["pid", "process_name", "used_memory"])
    procs = gpu_processes(rows)
    assert [(p.pid, p.used_memory_mib) for p in procs] == [(3150, 218.0), (6330, None)]


def test_docker_sizes_and_stats_lines():
    assert size_mib("1.5GiB") == 1536.0 and size_mib("512KiB") == 0.5 and size_mib("0B") == 0.0
    assert round(size_mib("103GB") or 0) == 98228 and size_mib("--") is None
    found = container_memory("hog\t1.5GiB / 23.5GiB\nidle\t0B / 0B\n")
    assert [(c.name, c.memory_mib) for c in found] == [("hog", 1536.0), ("idle", 0.0)]


def test_this_machines_probe_is_real_and_names_its_gpus_or_says_no_gpu():
    out = subprocess.run([sys.executable, str(PROBE), "lo", "eth0", "nosuch0"], capture_output=True, text=True)
    raw = json.loads(out.stdout)
    passport = passport_from_probe(raw, None, NOW)
    available = meminfo_mib(Path("/proc/meminfo").read_text(), "MemAvailable")
    assert passport.mem_available_mib and available and abs(passport.mem_available_mib - available) < 1024
    assert passport.gpu == gpu_names()  # what nvidia-smi itself lists, or "no GPU" where there is none
    if passport.gpu == NO_GPU:
        assert passport.gpus == [] and passport.driver is None
    else:
        assert passport.gpus and passport.driver
    # Without nvidia-smi on the PATH (any machine), the probe says "no GPU" and reads none.
    bare = {"PATH": str(Path(sys.executable).parent)}
    out = subprocess.run([sys.executable, str(PROBE), "lo"], capture_output=True, text=True, env=bare)
    none = passport_from_probe(json.loads(out.stdout), None, NOW)
    assert none.gpu == NO_GPU and none.gpus == [] and none.driver is None
    by_name = {i.name: i for i in passport.interfaces}
    assert by_name["lo"].virtual and by_name["lo"].speed_mbps is None and by_name["lo"].speed_note == SPEED_NOT_REPORTED
    assert by_name["lo"].mtu == int(Path("/sys/class/net/lo/mtu").read_text())
    assert not by_name["nosuch0"].present
    assert passport.cpus == os.cpu_count() and passport.load_average is not None and len(passport.load_average) == 3
    assert load_average("2.57 3.08 2.60 3/249 19533") == [2.57, 3.08, 2.6] and load_average(None) is None
    assert passport.kernel == subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()


def test_a_host_that_cannot_be_read_is_one_line_not_a_crash():
    """After the sweep a host may be gone: its passport is a line for the run's notes, the others still read."""
    from catalogue.models.loading import load_entry
    from runner.hosts.hosts import Host
    from runner.machine.passport import read_each
    from runner.planning.plan import make_plan
    from tests.docker_support import free_port

    if shutil.which("docker") is None:
        pytest.skip("needs the docker CLI (not an engine)")
    entry = load_entry(Path(__file__).resolve().parents[1] / "examples" / "tiny-cpu-docker")
    gone = Host("gone", f"ssh://root@127.0.0.1:{free_port()}", "127.0.0.1")
    found, failed = read_each(make_plan(entry, hosts=[gone]))
    assert found == {} and len(failed) == 1
    assert failed[0].startswith("host gone: the passport probe failed: ") and "\n" not in failed[0]


def test_a_probe_output_that_does_not_read_is_a_line_not_a_crash(monkeypatch):
    """The probe runs in the recipe's image: output that is not JSON, or a value the passport refuses (a calibration
    of 'x' or NaN), is one line for the run's notes, as an unreachable host is."""
    import runner.machine.passport as passport
    from catalogue.models.loading import load_entry
    from runner.planning.plan import make_plan

    entry = load_entry(Path(__file__).resolve().parents[1] / "examples" / "tiny-cpu-docker")

    def refuses(plan, host):
        raise ValueError("1 validation error for Passport\ncalibration_ms\n  Input should be a finite number")

    monkeypatch.setattr(passport, "read_passport", refuses)
    found, failed = passport.read_each(make_plan(entry))
    assert found == {} and len(failed) == 1 and "\n" not in failed[0]
    assert failed[0].endswith("the passport probe's output does not read: 1 validation error for Passport")
