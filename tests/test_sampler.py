"""The sampler during the sweep (runner/machine/sampler.py, catalogue/stats/sampling.py): its lines parsed, each level's
summary and energy over its window (the 3 s gap rule included) on a series built from real nvidia-smi outputs, 'no GPU'
said once, and a sampler that really runs stops with nothing left."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from catalogue.models.loading import load_entry
from catalogue.models.passport import NO_GPU, GpuState
from catalogue.stats.sampling import HostSeries, Reading, level_machine
from runner.hosts.hosts import LOCAL, Host
from runner.hosts.server import session_members
from runner.machine.passport import csv_rows, gpu_states
from runner.machine.sampler import (
    INTERVAL_S,
    PROBE,
    Sampler,
    aligned,
    raw_name,
    sampler_argv,
    start,
    start_all,
    stop,
    take_line,
)
from runner.planning.plan import make_plan
from runner.scripts.passport_probe import GPU_FIELDS

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "nvidia-smi"
DGX_INVALID = ["hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown", "hw_power_brake_slowdown"]
RTX2080_QUERY = (
    "power.limit,power.min_limit,power.max_limit,memory.total,vbios_version,driver_version,name,gpu_uuid,"
    "power.draw,temperature.gpu,temperature.memory,clocks.current.graphics,clocks.sm,clocks.mem,"
    "utilization.gpu,utilization.memory,fan.speed,pcie.link.width.current,pstate"
)


def gb10_times() -> list[float]:
    """The five reading times of the GB10 `-l 1` output (tests/data/nvidia-smi): a real 1 s cadence, with its jitter."""
    rows = csv_rows((DATA / "gb10-timestamp-util-memused-temp.csv").read_text())
    return [
        dt.datetime.strptime(str(r["timestamp"]), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=dt.UTC).timestamp()
        for r in rows
    ]


def rtx2080() -> GpuState:
    [gpu] = gpu_states(csv_rows((DATA / "rtx2080-noheader-nounits.csv").read_text(), RTX2080_QUERY.split(",")))
    return gpu


def gtx1080ti() -> GpuState:
    return gpu_states(csv_rows((DATA / "gtx1080ti-gtx1060-header-units.csv").read_text()))[0]


def line(t: float, gpu: GpuState, mask: str = "[N/A]") -> str:
    """What the sampler prints for one reading of `gpu`, its nvidia-smi text in the passport's field order."""
    cells = [
        "0",
        gpu.name,
        gpu.sm_clock_mhz,
        gpu.memory_clock_mhz,
        gpu.temperature_c,
        gpu.power_draw_w,
        gpu.power_limit_w,
        mask,
        "[N/A]",
        "440.64",
    ]
    text = ", ".join("[N/A]" if c is None else f"{c:g}" if isinstance(c, float) else str(c) for c in cells)
    return json.dumps({"t": t, "code": 0, "stdout": text + "\n", "stderr": ""})


def recorded(tmp_path: Path, gpus: list[GpuState], masks: list[str] | None = None, host: Host = LOCAL) -> Sampler:
    """A sampler fed one reading per GB10 time, the GPUs' real values in turn."""
    sampler = Sampler(host, tmp_path / raw_name(host), HostSeries(host.name, "not read yet"))
    for i, t in enumerate(gb10_times()):
        take_line(sampler, line(t, gpus[i % len(gpus)], (masks or ["[N/A]"])[i % len(masks or [1])]), t + 0.01)
    return sampler


def test_a_host_without_a_gpu_says_so_once_and_has_no_figure(tmp_path):
    sampler = Sampler(LOCAL, tmp_path / "x.jsonl", HostSeries("local", "not read yet"))
    take_line(sampler, '{"gpu": "no GPU"}\n', 100.0)
    assert sampler.series.gpu == NO_GPU and sampler.series.readings == []
    machine = level_machine([aligned(sampler)], 100.0, 110.0, 500)
    assert machine.not_measured == "host local: no GPU" and not machine.measured
    assert (machine.energy_j, machine.j_per_output_token, machine.output_tokens_per_j, machine.power_source) == (
        None,
        None,
        None,
        None,
    )
    [host] = machine.hosts
    assert host.samples == host.power_samples == 0 and host.sm_clock_mhz_max is None and host.temperature_c_max is None


def test_the_probe_without_nvidia_smi_prints_no_gpu_once_and_exits(tmp_path):
    out = subprocess.run(
        [sys.executable, str(PROBE), GPU_FIELDS], env={"PATH": str(tmp_path)}, capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout == '{"gpu": "no GPU"}\n'


def test_a_level_over_a_series_built_from_real_outputs(tmp_path):
    """GB10's real reading times with the RTX 2080's and the GTX 1080 Ti's real readings in turn (176.98, 106.56 W)."""
    sampler = recorded(tmp_path, [rtx2080(), gtx1080ti()])
    assert sampler.series.gpu == "GeForce GTX 1080 Ti; GeForce RTX 2080" and len(sampler.series.readings) == 5
    t = gb10_times()
    machine = level_machine([aligned(sampler)], t[0], t[4], 1000)
    # By hand: every step is a trapezoid of (176.98 + 106.56) / 2 = 141.77 W over the steps 1.005, 1.001, 1.000,
    # 1.001 s (14:08:55.751 -> :59.758), so 141.77 W x 4.007 s = 568.07 J.
    assert machine.energy_j == pytest.approx(568.07239, rel=1e-6)
    assert machine.mean_power_w == pytest.approx(141.77, rel=1e-6)
    assert machine.j_per_output_token == pytest.approx(0.56807239, rel=1e-6)
    assert machine.output_tokens_per_j == pytest.approx(1000 / 568.07239, rel=1e-6)
    [host] = machine.hosts
    assert (host.samples, host.power_samples) == (5, 5)
    assert (host.sm_clock_mhz_min, host.sm_clock_mhz_max) == (1965.0, 1965.0)  # the GTX output has graphics clocks
    assert (host.memory_clock_mhz_min, host.memory_clock_mhz_max) == (5508.0, 7199.0)
    assert host.temperature_c_max == 60.0 and host.throttle_reasons == [] and machine.throttled(DGX_INVALID) == []
    assert machine.window_start == dt.datetime(2025, 11, 24, 14, 8, 55, 751000, tzinfo=dt.UTC)


def test_a_gap_over_3_s_makes_the_level_not_measured(tmp_path):
    sampler = recorded(tmp_path, [rtx2080()])
    t = gb10_times()
    del sampler.series.readings[1:3]  # 14:08:55.751 -> :58.757: 3.006 s without a reading
    machine = level_machine([aligned(sampler)], t[0], t[4], 1000)
    assert not machine.measured and machine.energy_j is None and machine.output_tokens_per_j is None
    assert machine.not_measured == "host local: a gap of 3.0 s without a power sample (more than 3 s)"
    assert machine.hosts[0].samples == 3  # the readings are still summed up; only the energy is withheld
    whole = level_machine([aligned(recorded(tmp_path, [rtx2080()]))], t[0], t[4], 1000)
    assert whole.energy_j == pytest.approx(176.98 * (t[4] - t[0]))


def test_a_level_that_throttled_names_the_reasons_its_platform_invalidates(tmp_path):
    # NVML's bits: 0x1 GPU idle (harmless), 0x40 HW thermal slowdown (dgx-spark's gates list it).
    sampler = recorded(tmp_path, [rtx2080()], ["0x0000000000000001", "0x0000000000000040"])
    t = gb10_times()
    machine = level_machine([aligned(sampler)], t[0], t[4], 1000)
    assert machine.hosts[0].throttle_reasons == ["gpu_idle", "hw_thermal_slowdown"]
    assert machine.throttled(DGX_INVALID) == ["hw_thermal_slowdown"] and machine.throttled([]) == []
    calm = level_machine([aligned(sampler)], t[0], t[0] + 0.5, 1000)  # only the first (idle) reading inside
    assert calm.throttled(DGX_INVALID) == []


def test_a_failed_query_and_a_foreign_line_are_not_readings(tmp_path):
    sampler = Sampler(LOCAL, tmp_path / "x.jsonl", HostSeries("local", "not read yet"))
    assert not take_line(sampler, "==NVIDIA== banner of an entrypoint\n", 1.0)
    take_line(sampler, json.dumps({"t": 1.0, "code": 9, "stdout": "", "stderr": "NVML: Driver Not Loaded"}), 1.0)
    assert sampler.series.readings == [] and sampler.series.gpu == "nvidia-smi failed: NVML: Driver Not Loaded"
    assert sampler.other == ["==NVIDIA== banner of an entrypoint"]
    machine = level_machine([aligned(sampler)], 0.0, 10.0, 10)
    assert machine.not_measured == "host local: no GPU reading (nvidia-smi failed: NVML: Driver Not Loaded)"


def test_a_line_too_deep_or_with_a_time_that_is_no_number_is_kept_apart(tmp_path):
    # The sampler runs in the recipe's image: 3,000 brackets were a RecursionError, "t": "x" a ValueError, each
    # ending the reading thread with a traceback.
    sampler = Sampler(LOCAL, tmp_path / "x.jsonl", HostSeries("local", "not read yet"))
    for line in ["[" * 3000 + "]" * 3000, json.dumps({"t": "x", "code": 0, "stdout": ""})]:
        assert not take_line(sampler, line, 1.0)
    assert sampler.series.readings == [] and len(sampler.other) == 2


def test_another_hosts_clock_is_aligned_by_the_smallest_arrival_delay(tmp_path):
    remote = Host("spark2", "ssh://spark2", "10.0.0.2")
    sampler = Sampler(remote, tmp_path / "x.jsonl", HostSeries("spark2", "not read yet"))
    for t, arrived in ((10.0, 15.2), (11.0, 16.05), (12.0, 17.3)):  # its clock 5 s behind, 50 ms at best on the way
        take_line(sampler, line(t, rtx2080()), arrived)
    assert [r.t for r in aligned(sampler).readings] == pytest.approx([15.05, 16.05, 17.05])
    local = Sampler(LOCAL, tmp_path / "y.jsonl", HostSeries("local", "x"), offsets=[5.0])
    local.series.readings.append(Reading(1.0, []))
    assert aligned(local).readings[0].t == 1.0  # this machine's own clock is the windows' clock


def test_the_sampler_container_is_narrow_labelled_and_gets_the_gpu(tmp_path):
    entry = load_entry(REPO / "recipes" / "gptoss-120b")
    plan = make_plan(entry, hosts=[Host("spark1", "ssh://spark1", "10.0.0.1")])
    argv = sampler_argv(plan, plan.hosts[0])
    assert argv[:5] == ["docker", "-H", "ssh://spark1", "run", "--rm"]
    assert f"catalogue.run={plan.stamp}" in argv and "catalogue.recipe=gptoss-120b" in argv
    for option in (["--network", "none"], ["--gpus", "all"], ["--entrypoint", "python3"], ["--tmpfs", "/tmp"]):
        assert any(argv[i : i + 2] == option for i in range(len(argv))), option
    assert "--read-only" in argv and "no-new-privileges" in argv and "--privileged" not in argv
    assert argv[argv.index(plan.image) + 1 :][-2:] == [GPU_FIELDS, "1"]


def test_a_real_sampler_reads_every_second_and_stops_with_nothing_left(tmp_path, monkeypatch):
    """The probe runs for real against a stand-in nvidia-smi that prints the RTX 2080's real row."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    row = "0, GeForce RTX 2080, 1965, 7199, 45, 176.98, 200.00, 0x0000000000000000, Enabled, 440.64"
    fake = bin_dir / "nvidia-smi"
    fake.write_text(f"#!/bin/sh\necho '{row}'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    folder = tmp_path / "tiny-cpu"
    shutil.copytree(REPO / "examples" / "tiny-cpu", folder, ignore=shutil.ignore_patterns("runs"))
    plan = make_plan(load_entry(folder), local=True)
    plan.raw_dir.mkdir(parents=True)
    sampler = start(plan, LOCAL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(sampler.series.readings) < 3:
        time.sleep(0.1)
    stop(sampler)
    readings = sampler.series.readings
    assert len(readings) >= 3 and sampler.series.gpu == "GeForce RTX 2080"
    assert [g.power_draw_w for r in readings for g in r.gpus][:3] == [176.98] * 3
    # Never ahead of the beat, however loaded the machine: reading k starts no earlier than k s after the first
    # began (its time is the middle of its nvidia-smi call; 0.5 s allows for the first call's own length). How late
    # a reading comes depends on the machine's load; test_the_probe_keeps_its_beat_when_nvidia_smi_is_slow pins the
    # schedule on a clock of its own.
    assert all(r.t - readings[0].t >= k * INTERVAL_S - 0.5 for k, r in enumerate(readings))
    assert sampler.process is not None and sampler.process.poll() is not None
    assert session_members(sampler.process.pid) == []
    raw = (plan.raw_dir / "gpu-samples-local.jsonl").read_text().splitlines()
    assert len(raw) >= len(readings) and json.loads(raw[0])["stdout"].startswith("0, GeForce RTX 2080")
    assert all(json.loads(x) for x in raw)  # JSON Lines, as check-changes reads a run's raw files
    sessions = (plan.raw_dir / "sessions.txt").read_text()
    assert f"{sampler.process.pid} gpu-samples-local.jsonl" in sessions


def test_a_sampler_that_cannot_start_its_container_says_why(tmp_path, monkeypatch):
    """docker's own error (an image without python3, say) is not a reading and not in the raw file: it is the why."""
    folder = tmp_path / "tiny-cpu"
    shutil.copytree(REPO / "examples" / "tiny-cpu", folder, ignore=shutil.ignore_patterns("runs"))
    plan = make_plan(load_entry(folder), local=True)
    plan.raw_dir.mkdir(parents=True)
    why = 'docker: Error response from daemon: exec: "python3": executable file not found in $PATH'
    monkeypatch.setattr(
        "runner.machine.sampler.sampler_argv", lambda *_: [sys.executable, "-c", f"print({why!r}); exit(127)"]
    )
    samplers: list[Sampler] = []
    start_all(plan, samplers)  # returns once the sampler answered or exited
    [sampler] = samplers
    stop(sampler)
    assert sampler.process is not None and sampler.process.returncode == 127
    assert sampler.series.gpu == f"the sampler printed nothing ({why})" and sampler.series.readings == []
    assert (plan.raw_dir / "gpu-samples-local.jsonl").read_text() == ""
    machine = level_machine([aligned(sampler)], 0.0, 10.0, 10)
    assert machine.not_measured == f"host local: no GPU reading (the sampler printed nothing ({why}))"


def test_the_probe_keeps_its_beat_when_nvidia_smi_is_slow(monkeypatch, capsys):
    """runner/scripts/sampler_probe.py on a clock of the test's own: each nvidia-smi call takes 0.3 s, and the readings
    still start on whole seconds from the first (the sleep takes up the rest), so a long sweep does not drift; a call of
    1.4 s delays only its own reading, and the next one is back on the beat. Each reading's time is its call's
    middle."""
    from runner.scripts import sampler_probe

    clock = {"now": 1000.0}
    lengths = iter([0.3, 0.3, 1.4, 0.3, 0.3, 0.3])
    starts: list[float] = []

    def fake_run(argv, **_kw):
        starts.append(clock["now"])
        try:
            clock["now"] += next(lengths)
        except StopIteration:
            raise KeyboardInterrupt from None  # stops the probe, as Ctrl-C would
        return subprocess.CompletedProcess(argv, 0, stdout="0, GB10\n", stderr="")

    monkeypatch.setattr(sampler_probe.shutil, "which", lambda _name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(sampler_probe.subprocess, "run", fake_run)
    monkeypatch.setattr(sampler_probe.time, "time", lambda: clock["now"])
    monkeypatch.setattr(sampler_probe.time, "sleep", lambda s: clock.__setitem__("now", clock["now"] + s))
    assert sampler_probe.main("index,name", 1.0) == 0
    # Calls at 0, 1, 2 (1.4 s long: ends at 3.4, past the beat at 3, so the next starts at once), 3.4, 4, 5
    assert [round(s - 1000, 6) for s in starts] == [0.0, 1.0, 2.0, 3.4, 4.0, 5.0, 6.0]
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [round(x["t"] - 1000, 6) for x in lines] == [0.15, 1.15, 2.7, 3.55, 4.15, 5.15]
    assert all(x["code"] == 0 and x["stdout"] == "0, GB10\n" for x in lines)
