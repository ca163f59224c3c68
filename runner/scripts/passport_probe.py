"""What a host's state is right now, printed as one JSON object of raw readings (parsed by runner/machine/passport.py).

Usage: python3 passport_probe.py [INTERFACE ...]
Standard library only: it runs in a throwaway container of the recipe's image with host networking (so
/sys/class/net is the host's; /proc/meminfo, /sys/class/infiniband and cpufreq are not namespaced), or in the
host's Python for a local process. nvidia-smi is asked only when there is one; its text is passed on unparsed.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

GPU_FIELDS = (
    "index,name,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit,"
    "clocks_throttle_reasons.active,persistence_mode,driver_version"
)
APP_FIELDS = "pid,process_name,used_memory"
CALIBRATION_MIB = 8
"""Bytes each CPU hashes per calibration round (OpenSSL's SHA-256, the GIL released: every CPU works at once)."""
CALIBRATION_ROUNDS = 15


def read(path: Path) -> str | None:
    """A sysfs/procfs file's text, stripped; None when absent or unreadable (e.g. speed of a virtual NIC)."""
    try:
        return path.read_text().strip()
    except OSError:
        return None


def smi(query: str) -> dict[str, object]:
    """One nvidia-smi CSV query: its exit code and output."""
    try:
        out = subprocess.run(
            ["nvidia-smi", query, "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"code": -1, "stdout": "", "stderr": str(exc)}
    return {"code": out.returncode, "stdout": out.stdout, "stderr": out.stderr.strip()[-300:]}


def interface(name: str) -> dict[str, object]:
    """Speed, MTU, state of one interface, and whether it is virtual (its device lives under devices/virtual)."""
    base = Path("/sys/class/net") / name
    if not base.exists():
        return {"name": name, "present": False}
    return {
        "name": name,
        "present": True,
        "speed": read(base / "speed"),
        "mtu": read(base / "mtu"),
        "operstate": read(base / "operstate"),
        "virtual": "/devices/virtual/" in os.path.realpath(base),
    }


def rdma_ports() -> list[dict[str, str | None]]:
    """Every port of every RDMA device, when the host has /sys/class/infiniband."""
    root = Path("/sys/class/infiniband")
    devices = sorted(root.iterdir()) if root.is_dir() else []
    return [
        {"device": dev.name, "port": port.name, "state": read(port / "state"), "rate": read(port / "rate")}
        for dev in devices
        if (dev / "ports").is_dir()
        for port in sorted((dev / "ports").iterdir())
    ]


def calibration_ms() -> float:
    """Median wall time, ms, of rounds in which every CPU hashes CALIBRATION_MIB at once: how much CPU this machine
    gives right now (other work, another tenant of the host, clock speed) in one number, comparable run to run."""
    data = b"\x5a" * (CALIBRATION_MIB << 20)
    cpus = os.cpu_count() or 1

    def one_round() -> float:
        workers = [threading.Thread(target=hashlib.sha256, args=(data,)) for _ in range(cpus)]
        start = time.perf_counter()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        return (time.perf_counter() - start) * 1000

    return round(statistics.median(one_round() for _ in range(CALIBRATION_ROUNDS)), 2)


def probe(names: list[str]) -> dict[str, object]:
    has_smi = shutil.which("nvidia-smi") is not None
    return {
        "meminfo": read(Path("/proc/meminfo")) or "",
        "kernel": platform.release(),
        "loadavg": read(Path("/proc/loadavg")),
        "cpus": os.cpu_count(),
        "calibration_ms": calibration_ms(),
        "governor": read(Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")),
        "firmware": read(Path("/sys/class/dmi/id/bios_version")),
        "gpu_fields": GPU_FIELDS,
        "app_fields": APP_FIELDS,
        "nvidia_gpu": smi(f"--query-gpu={GPU_FIELDS}") if has_smi else None,
        "nvidia_apps": smi(f"--query-compute-apps={APP_FIELDS}") if has_smi else None,
        "interfaces": [interface(n) for n in names],
        "rdma": rdma_ports(),
    }


if __name__ == "__main__":
    print(json.dumps(probe(sys.argv[1:])))
