"""Drive vLLM's benchmark client for several levels in one process (vLLM is imported once).

Usage: python driver.py JOBS.json EVENTS.jsonl [--more]
Self-contained (standard library + vLLM), so it runs the same in the host's venv and inside the
recipe's image (`python3 /catalogue/driver.py ...`, the raw folder mounted). The runner starts it
before the servers: it imports vLLM, parses every job with the client's own parser and reports `ready`
with its vLLM version and any job it refuses (the runner then starts no server), then waits for a
line on standard input (sent once the endpoint is healthy) before it sends anything. End of input
means the runner is gone: the driver exits at once, whatever it is doing.

JOBS.json is a list of {"name": "c4", "argv": ["vllm", "bench", "serve", ...], "min_s": 10}; each argv
is parsed by `vllm bench serve`'s own parser and run by its own `main`. A job whose benchmark window
came out shorter than `min_s` runs again with proportionally more prompts (at most MAX_ATTEMPTS
times), so a level is long enough for its figures, its one-second peak above all, to mean something;
the saved raw result is that of the last attempt. One JSON line per finished job is appended to
EVENTS.jsonl, with `ended_at` (seconds since the epoch when the client returned: the end of the benchmark window,
which the runner's GPU sampler is cut to); a job with "metrics_url" carries vLLM's speculative-decoding counter lines
and latency histogram sums and counts from the server's /metrics before and after its last attempt. A job with
"parse_only" is only checked (the capacity search's probe, whose rate comes later). Each level's event also carries
`calibration_ms`, the machine's CPU calibration (passport_probe.py, mounted beside this file) just before and just
after its last attempt: the machine's state during that level (catalogue.stats.machine_speed).
With --more, the driver then reports `idle` and runs each `job {...}` line it reads until a line `end`:
the capacity search decides each probe from the last one's result, in the same process. The `ready` event also
says which CPUs the client may run on (`refresh --client-cpus` places it apart from the server).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import queue
import sys
import threading
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from passport_probe import calibration_ms  # type: ignore[import-not-found]  # beside this file, here and in images

MAX_ATTEMPTS = 4
MAX_GROWTH = 16


def _event(path: Path, **fields: object) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(fields) + "\n")
        handle.flush()


def watch_stdin(go: threading.Event, more: queue.Queue) -> None:
    """`go` on the first line; later `job {...}` lines queue a job and `end` ends the wait for more; at end of
    input (the runner is gone) leave the process at once."""
    for line in sys.stdin:
        if line.startswith("job "):
            more.put(json.loads(line[4:]))
        elif line.strip() == "end":
            more.put(None)
        go.set()
    os._exit(3)


def main(jobs_path: Path, events_path: Path, wait_for_more: bool = False) -> int:
    go = threading.Event()
    more: queue.Queue = queue.Queue()
    threading.Thread(target=watch_stdin, args=(go, more), daemon=True).start()
    started = time.monotonic()
    import vllm
    from vllm.benchmarks.serve import add_cli_args
    from vllm.benchmarks.serve import main as bench_main

    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    jobs = json.loads(jobs_path.read_text())
    refused = {job["name"]: why for job in jobs if (why := refusal(job["argv"], add_cli_args, FlexibleArgumentParser))}
    _event(
        events_path,
        kind="ready",
        import_s=time.monotonic() - started,
        vllm_version=str(vllm.__version__),
        refused=refused,
        cpus=sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
    )
    if refused:
        return 2
    go.wait()
    for job in jobs:
        if job.get("parse_only"):
            continue
        if not run_job(job, events_path, bench_main, add_cli_args, FlexibleArgumentParser):
            return 1
    if not wait_for_more:
        return 0
    _event(events_path, kind="idle")
    while (job := more.get()) is not None:
        run_job(job, events_path, bench_main, add_cli_args, FlexibleArgumentParser)
    return 0


SPEC_PREFIX = "vllm:spec_decode_"
"""The counter lines kept from /metrics around a level: speculative decoding (catalogue.stats.spec_decode reads them)
and the latency histograms' sums and counts (catalogue.stats.engine_timing)."""
METRICS_MAX_BYTES = 16 << 20
"""Most of a /metrics page read (the server is the recipe's: untrusted); vLLM's is tens of kilobytes."""
HISTOGRAMS = ("vllm:time_to_first_token_seconds", "vllm:request_time_per_output_token_seconds")
"""catalogue.stats.engine_timing.NAMES (this file runs inside images without the catalogue; a test keeps them equal)."""
KEPT = (SPEC_PREFIX, *(f"{name}_{part}{end}" for name in HISTOGRAMS for part in ("sum", "count") for end in " {"))


METRICS_DEADLINE_S = 10.0
"""The whole read of a /metrics page, connection to last byte: a timeout per socket read let a server that trickles a
byte every few seconds hold a level (and the run) for as long as it liked."""


def metrics_lines(url: str | None, deadline_s: float = METRICS_DEADLINE_S) -> str | None:
    """The /metrics lines on `url` a level's figures are read from; None without a URL, when it does not answer, or
    when the page is not read whole within `deadline_s`."""
    if not url:
        return None
    text = read_page(url, deadline_s)
    if text is None:
        return None
    kept = (line for line in text.splitlines() if line.startswith(KEPT))
    return "".join(line + "\n" for line in kept)


def read_page(url: str, deadline_s: float) -> str | None:
    """GET an http:// page within one deadline: each socket read may wait only for the time that is left."""
    import http.client
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return None
    end = time.monotonic() + deadline_s
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=deadline_s)
    try:
        connection.request("GET", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        sock = connection.sock  # the response reads from it even once the connection hands it over
        response = connection.getresponse()
        if response.status != 200:
            return None
        body = bytearray()
        while len(body) < METRICS_MAX_BYTES:
            left = end - time.monotonic()
            if left <= 0 or sock is None:
                return None
            sock.settimeout(left)
            chunk = response.read1(min(1 << 16, METRICS_MAX_BYTES - len(body)))
            if not chunk:
                break
            body += chunk
        return body.decode("utf-8", "replace")
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def run_job(job: dict, events_path: Path, bench_main, add_cli_args, parser_class) -> bool:
    """Run one job (again with more prompts while its window is shorter than `min_s`); one event line either way."""
    argv = job["argv"]
    min_s = float(job.get("min_s") or 0)
    attempts, num_prompts = 0, None
    while True:
        attempts += 1
        parser = parser_class()  # parsed afresh each time: the client's main changes its args
        add_cli_args(parser)
        args = parser.parse_args(argv[3:] + ([] if num_prompts is None else ["--num-prompts", str(num_prompts)]))
        job_start = time.monotonic()
        calibration = [calibration_ms()]
        before = metrics_lines(job.get("metrics_url"))
        try:
            result = bench_main(args)
            ended_at = time.time()  # the benchmark window ends here (after the client's own bookkeeping)
        except Exception as exc:  # the client's own failure: report it
            _event(
                events_path,
                kind="level",
                name=job["name"],
                ok=False,
                error=f"{type(exc).__name__}: {exc}",
                trace=traceback.format_exc(limit=3),
            )
            return False
        after = metrics_lines(job.get("metrics_url"))
        calibration.append(calibration_ms())
        duration = float(result.get("duration") or 0)
        if duration >= min_s or attempts >= MAX_ATTEMPTS or result.get("failed"):
            break
        growth = min(MAX_GROWTH, 1.2 * min_s / max(duration, 0.05))
        num_prompts = math.ceil(args.num_prompts * growth)
    _event(
        events_path,
        kind="level",
        name=job["name"],
        ok=True,
        wall_s=time.monotonic() - job_start,
        duration_s=result.get("duration"),
        ended_at=ended_at,
        failed=result.get("failed", 0),
        attempts=attempts,
        num_prompts=args.num_prompts,
        calibration_ms=calibration,
        **({"metrics_before": before, "metrics_after": after} if before is not None and after is not None else {}),
    )
    return True


def refusal(argv: list[str], add_cli_args, parser_class) -> str | None:
    """Why this client would refuse the job's arguments (its parser's last error line), or None."""
    if argv[:3] != ["vllm", "bench", "serve"]:
        return f"not a `vllm bench serve` command: {argv[:3]}"
    parser = parser_class()
    add_cli_args(parser)
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            args = parser.parse_args(argv[3:])
    except SystemExit:
        lines = [line for line in errors.getvalue().splitlines() if line.strip()]
        return lines[-1] if lines else "refused its arguments"
    if getattr(args, "goodput", None):
        from vllm.benchmarks.serve import check_goodput_args  # the client's own check of --goodput keys

        try:
            check_goodput_args(args)
        except Exception as exc:
            return f"--goodput: {exc}"
    return None


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), wait_for_more="--more" in sys.argv[3:]))
