"""Read each host's passport (catalogue.models.passport): one throwaway container per host runs passport_probe.py, as
preflight runs facts.py, and `docker stats --no-stream` on that host lists the other containers' memory.
Parsing lives here too, as plain functions over the raw text (tested on real nvidia-smi outputs).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from catalogue.models.passport import (
    NO_GPU,
    SPEED_NOT_REPORTED,
    ContainerMemory,
    GpuProcess,
    GpuState,
    InterfaceState,
    Passport,
    RdmaPort,
    throttle_names,
)
from runner.hosts.child_env import child_env
from runner.hosts.containers import RUNNER_OPTIONS
from runner.hosts.hosts import Host
from runner.machine.preflight import docker
from runner.planning.plan import Plan

PROBE = Path(__file__).resolve().parents[1] / "scripts" / "passport_probe.py"
TIMEOUT_S = 60
"""How long one host's reading may take (a container start and a few file reads take about a second)."""
MISSING = {"", "N/A", "[N/A]", "[Not Supported]", "Not Supported", "[Unknown Error]", "[Insufficient Permissions]"}
UNIT = re.compile(r"^(-?[\d.]+)\s*(?:%|MiB|W|MHz|C)?$")
NAME_FIELDS = ("name", "gpu_name", "process_name")
"""Free-text columns: a comma in a cell can only belong to one of them."""
SIZE = re.compile(r"^([\d.]+)\s*([KMGT]?i?B|[kMGT]B|B)$")
SIZE_MIB = {
    "B": 1 / 2**20,
    "KiB": 1 / 1024,
    "kB": 1e3 / 2**20,
    "MiB": 1.0,
    "MB": 1e6 / 2**20,
    "GiB": 1024.0,
    "GB": 1e9 / 2**20,
    "TiB": 2**20,
    "TB": 1e12 / 2**20,
}


def csv_rows(text: str, fields: list[str] | None = None) -> list[dict[str, str | None]]:
    """nvidia-smi `--query-*` CSV -> one dict per GPU by field name; [N/A] and friends become None. Without
    `fields` the first line is the header of `--format=csv` (`name, memory.used [MiB]`) and names them."""
    lines = [line for line in text.splitlines() if line.strip()]
    if fields is None:
        if not lines:
            return []
        fields = [cell.strip().split(" [")[0] for cell in lines.pop(0).split(",")]
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.split(",")]
        if len(cells) > len(fields):  # a name with a comma in it: the surplus belongs to the name column
            at = next((fields.index(n) for n in NAME_FIELDS if n in fields), 0)
            extra = len(cells) - len(fields)
            cells[at : at + extra + 1] = [", ".join(cells[at : at + extra + 1])]
        rows.append({f: (None if c in MISSING else c) for f, c in zip(fields, cells, strict=False)})
    return rows


def number(value: str | None) -> float | None:
    """'52', '3.74 W', '2405 MHz' -> the number; None for a missing value or text."""
    found = UNIT.match(value.strip()) if value else None
    return float(found.group(1)) if found else None


def gpu_states(rows: list[dict[str, str | None]]) -> list[GpuState]:
    """GpuState per row, by nvidia-smi's documented field names (either spelling of the SM and memory clocks)."""
    out = []
    for row in rows:
        mask = row.get("clocks_throttle_reasons.active") or row.get("clocks_event_reasons.active")
        index = number(row.get("index"))
        out.append(
            GpuState(
                index=int(index) if index is not None else None,
                name=row.get("name") or row.get("gpu_name"),
                sm_clock_mhz=number(row.get("clocks.sm") or row.get("clocks.current.sm")),
                memory_clock_mhz=number(row.get("clocks.mem") or row.get("clocks.current.memory")),
                temperature_c=number(row.get("temperature.gpu")),
                power_draw_w=number(row.get("power.draw")),
                power_limit_w=number(row.get("power.limit")),
                throttle_reasons=throttle_names(int(mask, 16)) if mask else None,
                persistence_mode=row.get("persistence_mode"),
            )
        )
    return out


def gpu_processes(rows: list[dict[str, str | None]]) -> list[GpuProcess]:
    """GpuProcess per `--query-compute-apps=pid,process_name,used_memory` row."""
    return [
        GpuProcess(
            pid=int(str(row["pid"])) if str(row.get("pid") or "").isdigit() else None,
            name=row.get("process_name"),
            used_memory_mib=number(row.get("used_memory")),
        )
        for row in rows
    ]


def meminfo_mib(text: str, key: str) -> float | None:
    """A /proc/meminfo value (kB) in MiB."""
    found = re.search(rf"^{key}:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(found.group(1)) / 1024 if found else None


def size_mib(text: str) -> float | None:
    """docker's '1.2GiB' / '512KiB' / '3MB' in MiB."""
    found = SIZE.match(text.strip())
    return float(found.group(1)) * SIZE_MIB[found.group(2)] if found and found.group(2) in SIZE_MIB else None


def container_memory(stats: str) -> list[ContainerMemory]:
    """`docker stats --no-stream --format '{{.Name}}\\t{{.MemUsage}}'` lines."""
    out = []
    for line in stats.splitlines():
        name, _, usage = line.partition("\t")
        if name.strip():
            out.append(
                ContainerMemory(name=name.strip(), memory=usage.strip(), memory_mib=size_mib(usage.split("/")[0]))
            )
    return out


def interface_state(raw: dict) -> InterfaceState:
    """An interface from the probe; a speed of -1, or none (virtual, loopback), is 'speed not reported'."""
    if not raw.get("present"):
        return InterfaceState(name=raw["name"], present=False)
    speed = raw.get("speed")
    reported = speed is not None and speed.lstrip("-").isdigit() and int(speed) > 0
    return InterfaceState(
        name=raw["name"],
        present=True,
        speed_mbps=int(speed) if reported and speed is not None else None,
        speed_note=None if reported else SPEED_NOT_REPORTED,
        mtu=int(raw["mtu"]) if str(raw.get("mtu") or "").isdigit() else None,
        operstate=raw.get("operstate"),
        virtual=bool(raw.get("virtual")),
    )


def passport_from_probe(raw: dict, containers: list[ContainerMemory] | None, now: dt.datetime) -> Passport:
    """The probe's raw readings -> a Passport."""
    gpu_out, apps_out = raw.get("nvidia_gpu"), raw.get("nvidia_apps")
    gpus: list[GpuState] = []
    driver = None
    if gpu_out is None:
        gpu = NO_GPU
    elif gpu_out["code"] != 0:
        gpu = f"nvidia-smi failed: {gpu_out['stderr'] or gpu_out['stdout']}".strip()[:200]
    else:
        rows = csv_rows(gpu_out["stdout"], raw["gpu_fields"].split(","))
        gpus = gpu_states(rows)
        driver = next((r["driver_version"] for r in rows if r.get("driver_version")), None)
        gpu = "; ".join(sorted({g.name or "?" for g in gpus})) or NO_GPU
    apps = (
        gpu_processes(csv_rows(apps_out["stdout"], raw["app_fields"].split(",")))
        if apps_out and apps_out["code"] == 0
        else []
    )
    meminfo = raw.get("meminfo") or ""
    return Passport(
        read_at=now,
        mem_available_mib=meminfo_mib(meminfo, "MemAvailable"),
        mem_total_mib=meminfo_mib(meminfo, "MemTotal"),
        containers=containers,
        gpu=gpu,
        gpus=gpus,
        gpu_processes=apps,
        interfaces=[interface_state(i) for i in raw.get("interfaces", [])],
        rdma=[RdmaPort(**p) for p in raw.get("rdma", [])],
        kernel=raw.get("kernel"),
        driver=driver,
        firmware=raw.get("firmware"),
        cpu_governor=raw.get("governor"),
        load_average=load_average(raw.get("loadavg")),
        cpus=raw.get("cpus"),
        calibration_ms=raw.get("calibration_ms") or None,
    )


def load_average(text: str | None) -> list[float] | None:
    """The three load averages at the start of /proc/loadavg ('2.57 3.08 2.60 3/249 19533')."""
    parts = (text or "").split()[:3]
    try:
        return [float(p) for p in parts] if len(parts) == 3 else None
    except ValueError:
        return None


class PassportUnread(Exception):
    """The probe could not run on a host."""


def topology_interfaces(plan: Plan, host: Host) -> list[str]:
    """The interfaces the plan's nodes on `host` use (the hosts file's `interface`)."""
    return sorted({n.host.interface for n in plan.nodes if n.host == host and n.host.interface})


def other_containers(host: Host) -> list[ContainerMemory] | None:
    """Running containers on `host` and their memory; None when docker cannot be asked."""
    if host.is_local and shutil.which("docker") is None:
        return None
    out = docker(host, "stats", "--no-stream", "--format", "{{.Name}}\t{{.MemUsage}}")
    return container_memory(out.stdout) if out.returncode == 0 else None


def read_passport(plan: Plan, host: Host) -> Passport:
    """One host's passport now: the probe in a throwaway container of the recipe's image (host network, the GPU
    when the platform has one), or in this Python for a local process."""
    argv = ["-c", PROBE.read_text(), *topology_interfaces(plan, host)]
    if plan.image is None:
        out = subprocess.run(
            [sys.executable, *argv], capture_output=True, text=True, timeout=TIMEOUT_S, env=child_env()
        )
    else:
        gpu = ["--gpus", "all"] if plan.gpu else []
        narrow = [*RUNNER_OPTIONS, "--read-only", "--tmpfs", "/tmp"]
        options = ["--rm", "--label", plan.label, *narrow, *gpu, "--network", "host", "--entrypoint", "python3"]
        out = docker(host, "run", *options, plan.image, *argv, timeout=TIMEOUT_S)
    text = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    if out.returncode != 0 or not text.startswith("{"):
        why = (out.stderr or out.stdout).strip().splitlines()
        raise PassportUnread(f"host {host.name}: the passport probe failed: {why[-1] if why else out.returncode}")
    return passport_from_probe(json.loads(text), other_containers(host), dt.datetime.now(dt.UTC))


def passport_hosts(plan: Plan) -> list[Host]:
    """The hosts whose state a run depends on: every server host."""
    return plan.hosts


def read_all(plan: Plan) -> dict[str, Passport]:
    """Every server host's passport by host name; PassportUnread names the first host that could not be read."""
    return {host.name: read_passport(plan, host) for host in passport_hosts(plan)}


def read_each(plan: Plan) -> tuple[dict[str, Passport], list[str]]:
    """Every server host's passport that could be read, and one line for each that could not."""
    found: dict[str, Passport] = {}
    failed: list[str] = []
    for host in passport_hosts(plan):
        try:
            found[host.name] = read_passport(plan, host)
        except (PassportUnread, OSError, subprocess.SubprocessError) as exc:
            failed.append(str(exc))
        except ValueError as exc:  # the probe ran in the recipe's image: its output is untrusted (bad JSON, values)
            failed.append(f"{host.name}: the passport probe's output does not read: {str(exc).splitlines()[0]}")
    return found, failed
