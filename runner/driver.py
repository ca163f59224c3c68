"""Drive vLLM's benchmark client for several levels in one process (vLLM is imported once).

Usage: python -m runner.driver JOBS.json EVENTS.jsonl GO
The runner starts it while the server boots: it imports vLLM, then waits for the file GO (written
once /health answers) before it sends anything. JOBS.json is a list of {"level": c, "argv": ["vllm", "bench", "serve", ...]}; each argv is parsed
by `vllm bench serve`'s own parser and run by its own `main`. One JSON line per finished level is
appended to EVENTS.jsonl.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path


def _event(path: Path, **fields) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(fields) + "\n")
        handle.flush()


def wait_for(go: Path, parent: int) -> None:
    """Block until the runner says go; leave if the runner is gone."""
    while not go.exists():
        if os.getppid() != parent:
            raise SystemExit("runner exited")
        time.sleep(0.1)


def main(jobs_path: Path, events_path: Path, go: Path) -> int:
    started = time.monotonic()
    from vllm.benchmarks.serve import add_cli_args
    from vllm.benchmarks.serve import main as bench_main

    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    _event(events_path, kind="ready", import_s=time.monotonic() - started)
    wait_for(go, os.getppid())
    for job in json.loads(jobs_path.read_text()):
        argv = job["argv"]
        if argv[:3] != ["vllm", "bench", "serve"]:
            raise SystemExit(f"not a `vllm bench serve` command: {argv[:3]}")
        parser = FlexibleArgumentParser()
        add_cli_args(parser)
        args = parser.parse_args(argv[3:])
        level_start = time.monotonic()
        try:
            result = bench_main(args)
        except Exception as exc:  # the client's own failure: report it and stop
            _event(events_path, kind="level", level=job["level"], ok=False, error=f"{type(exc).__name__}: {exc}",
                   trace=traceback.format_exc(limit=3))
            return 1
        _event(events_path, kind="level", level=job["level"], ok=True, wall_s=time.monotonic() - level_start,
               duration_s=result.get("duration"), failed=result.get("failed", 0))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))
