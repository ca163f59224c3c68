"""Read the host's GPUs every INTERVAL seconds until stopped: one JSON line per reading (parsed by
runner/machine/sampler.py).

Usage: python3 sampler_probe.py FIELDS [INTERVAL_S]
Standard library only, like passport_probe.py: it runs in a throwaway container of the recipe's image (the GPU
passed in when the platform has one), or in the host's Python for a local process. Without nvidia-smi it prints
{"gpu": "no GPU"} once and exits: nothing is sampled, nothing made up. Each reading is one
`nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits`, its text passed on unparsed with the time (seconds
since the epoch, this host's clock) halfway through the call. A closed output (the runner is gone) ends it.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time


def reading(fields: str) -> dict[str, object]:
    """One nvidia-smi query: its time, exit code and output."""
    before = time.time()
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        found: dict[str, object] = {"code": out.returncode, "stdout": out.stdout, "stderr": out.stderr.strip()[-300:]}
    except (OSError, subprocess.TimeoutExpired) as exc:
        found = {"code": -1, "stdout": "", "stderr": str(exc)[-300:]}
    return {"t": (before + time.time()) / 2, **found}


def main(fields: str, interval: float) -> int:
    if shutil.which("nvidia-smi") is None:
        print(json.dumps({"gpu": "no GPU"}), flush=True)
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # as a container's PID 1 it would ignore SIGTERM
    started, n = time.time(), 0
    try:
        while True:
            print(json.dumps(reading(fields)), flush=True)
            n += 1
            time.sleep(max(0.0, started + n * interval - time.time()))  # on the beat: no drift over a long sweep
    except (BrokenPipeError, KeyboardInterrupt, SystemExit):
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 1.0))
