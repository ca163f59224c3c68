"""The "Where it ran" box: every passport value escaped, a throttled GPU and an overridden gate said, nothing
invented for a run that measured no power."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from catalogue.models.loading import load_entry
from catalogue.models.passport import ContainerMemory, GpuState, HostPassport, InterfaceState, Passport, RdmaPort
from catalogue.site.pages import render_recipe
from catalogue.site.passport_view import where_it_ran

REPO = Path(__file__).resolve().parents[1]
NOW = dt.datetime(2026, 11, 24, tzinfo=dt.UTC)


def with_passport(passport: HostPassport | None, allowed: list[str]):
    """The committed docker example, its newest run carrying `passport` and `allowed`."""
    entry = load_entry(REPO / "examples" / "tiny-cpu-docker")
    run = entry.latest
    host = run.provenance.hosts[0].model_copy(update={"passport": passport})
    prov = run.provenance.model_copy(update={"hosts": [host], "allowed_state": allowed})
    runs = [r for r in entry.runs if r is not run] + [run.model_copy(update={"provenance": prov})]
    return dataclasses.replace(entry, runs=runs)


def test_the_box_escapes_everything_and_says_what_throttled():
    spark = Passport(
        read_at=NOW,
        mem_available_mib=20 * 1024,
        mem_total_mib=121 * 1024,
        containers=[ContainerMemory(name="<script>alert(1)</script>", memory="103GiB / 121GiB", memory_mib=1)],
        gpu="NVIDIA GB10",
        gpus=[GpuState(index=0, name="NVIDIA GB10", sm_clock_mhz=850, throttle_reasons=["sw_thermal_slowdown"])],
        interfaces=[InterfaceState(name="enp1s0f1np1", present=True, speed_mbps=100, mtu=1500, operstate="up")],
        rdma=[RdmaPort(device="rocep1s0f1", port="1", state="4: ACTIVE", rate="200 Gb/sec (4X HDR)")],
        kernel="6.17.0-1008-nvidia",
        load_average=[0.5, 0.25, 0.1],
        cpus=20,
    )
    allowed = ["host spark1: container <b>x</b> holds 103.00 GiB ... --allow-state containers to measure anyway)"]
    entry = with_passport(HostPassport(before=spark, after=None), allowed)
    page = render_recipe(entry).markdown()
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; (103GiB / 121GiB)" in page
    assert "container &lt;b&gt;x&lt;/b&gt; holds" in page and "measured despite a failed gate" in page
    assert "GPU 0 was throttled (sw_thermal_slowdown) when read before the sweep" in page
    assert "enp1s0f1np1: 100 Mb/s, MTU 1500, up" in page and "rocep1s0f1 port 1: 4: ACTIVE" in page
    [box], _ = where_it_ran(entry.latest)
    rows = {label: (before, after) for label, before, after in box.rows}
    assert rows["Memory"] == ("20.0 of 121.0 GiB available", "not read")
    assert rows["Load"] == ("0.5, 0.25, 0.1 (1, 5, 15 min) on 20 CPUs", "not read")
    assert rows["GPU"][0].startswith("NVIDIA GB10 0, SM 850 MHz, memory N/A MHz, N/A °C, N/A W of N/A W")
    assert "J/token" not in page and "tokens per joule" not in page.lower()


def test_a_run_without_a_passport_has_no_box():
    entry = with_passport(None, [])  # runs measured before the passport existed
    assert where_it_ran(entry.latest) == ([], [])
    assert "rc-passport" not in render_recipe(entry).markdown()


def test_the_committed_cluster_run_says_its_loopback_link_reports_no_speed():
    entry = load_entry(REPO / "examples" / "tiny-cpu-cluster")
    [box], allowed = where_it_ran(entry.latest)
    rows = {label: (before, after) for label, before, after in box.rows}
    assert allowed == [] and rows["Links"][0].startswith("lo: speed not reported, MTU 65536")
    assert rows["GPU"] == ("no GPU", "no GPU")
