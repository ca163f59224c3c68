"""`catalogue refresh`: the runner's command, registered with the catalogue CLI as an entry point
(group `catalogue.commands`), so the domain package never imports the runner."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

HELP = "run a recipe's sweep and record a measured run"


def add_arguments(ref: argparse.ArgumentParser) -> None:
    """The command's arguments."""
    ref.add_argument("id")
    ref.add_argument("--dry-run", action="store_true", help="print the plan and commands; start nothing")
    ref.add_argument("--resume", action="store_true", help="finish the newest incomplete run")
    ref.add_argument("--local", action="store_true", help="run `vllm serve` as a local process, not in docker")
    ref.add_argument(
        "--capacity",
        action="store_true",
        help="after the planned levels, search the highest request rate that meets the recipe's sweep.slo "
        "with no failed request (to within sweep.open_loop.tolerance)",
    )
    add_run_arguments(ref)


def add_run_arguments(ref: argparse.ArgumentParser) -> None:
    """Where and how a run goes: hosts, ports, the client, consent (shared with `catalogue reproduce`)."""
    ref.add_argument("--port", type=int, help="serve on this port instead of the recipe's")
    ref.add_argument(
        "--hosts",
        help="comma-separated hosts (local, a hosts-file name, ssh://user@host, a docker context, or a bare "
        "ssh host name); the first is the head; default: this machine",
    )
    ref.add_argument(
        "--hosts-file",
        type=Path,
        help="hosts file (default: ~/.config/catalogue/hosts.yaml, or under $XDG_CONFIG_HOME, when present)",
    )
    ref.add_argument(
        "--client",
        choices=["image", "host"],
        help="where vLLM's benchmark client runs: in the recipe's image (default with an image) or this venv",
    )
    ref.add_argument("--router-port", type=int, help="port of the LiteLLM router of replica recipes (default 4000)")
    ref.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="OPTION",
        help="give consent to one option the run policy lets run only with the owner's consent, as the refusal "
        "names it, e.g. --allow '--cap-add IPC_LOCK' (repeat for each)",
    )
    ref.add_argument(
        "--allow-state",
        action="append",
        default=[],
        metavar="GATE",
        help="measure although the host's state fails this gate of the platform profile (memory, containers, "
        "gpu-processes, link, throttle); the run records it and its page shows it as a warning",
    )
    ref.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit with code 3 when a figure regressed against the newest earlier run of the same workload",
    )
    ref.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="also write the regression check as a Markdown table to FILE (the refresh workflow's pull request)",
    )
    ref.add_argument(
        "--cpus",
        type=_cpu_list,
        metavar="LIST",
        help="keep a local run (runner, vllm serve, client) on these CPUs, e.g. 1 or 0-3: on a 2-core VM, three "
        "capacity searches of the tiny CPU server spread ±11-21 %% on one core, ±20-63 %% on both (the run notes it)",
    )
    ref.add_argument(
        "--client-cpus",
        type=_cpu_list,
        metavar="LIST",
        help="start the benchmark client of a local run on these CPUs, apart from the server's (--cpus): a load "
        "generator that shares the server's core takes CPU time from it that grows with the rate (the run notes it)",
    )
    ref.add_argument(
        "--seed-base",
        type=int,
        default=0,
        metavar="N",
        help="add N to every benchmark-client seed of this refresh (levels and probes): a bench that repeats refreshes "
        "as independent trials gives each its own arrivals and prompts (the run's commands record the seeds)",
    )
    ref.add_argument(
        "--allow-shared-host",
        action="store_true",
        help="let two servers of a GPU recipe (cluster ranks, replicas) share one host on purpose",
    )


def _cpu_list(text: str) -> frozenset[int]:
    from runner.hosts.cpu_placement import parse_cpus, usable

    try:
        return usable(parse_cpus(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of run_refresh that add_run_arguments gives."""
    return {
        "port": args.port,
        "hosts": args.hosts,
        "hosts_file": args.hosts_file,
        "client": args.client,
        "router_port": args.router_port,
        "allow_shared_host": args.allow_shared_host,
        "allow": args.allow,
        "fail_on_regression": args.fail_on_regression,
        "report_table": args.report,
        "allow_state": args.allow_state,
        "cpus": args.cpus,
        "client_cpus": args.client_cpus,
        "seed_base": args.seed_base,
    }


def run(args: argparse.Namespace, roots: list[Path]) -> int:
    """Refresh one recipe."""
    from runner.refresh import run_refresh

    return run_refresh(
        roots,
        args.id,
        dry_run=args.dry_run,
        resume=args.resume,
        local=args.local,
        capacity=args.capacity,
        **run_options(args),
    )
