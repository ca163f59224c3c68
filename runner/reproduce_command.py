"""`catalogue reproduce <recipe> [<run>]`: the commands that made a measured run, rebuilt from the recipe and the
run's typed figures (never the run file's command text), pinned to its image digest and model revision; `--refresh`
runs them again through the runner (run_refresh, not a second path)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "print the pinned commands that made a measured run; --refresh measures it again"


def add_arguments(ref: argparse.ArgumentParser) -> None:
    """The command's arguments."""
    from runner.command import add_run_arguments

    ref.add_argument("id")
    ref.add_argument("run", nargs="?", help="the run's stamp, e.g. 20261123T150000Z (default: the newest measured)")
    ref.add_argument("--refresh", action="store_true", help="run it again on your hosts and record a new run")
    add_run_arguments(ref)


def run(args: argparse.Namespace, roots: list[Path]) -> int:
    """Print the reproduction; with --refresh, measure it again."""
    from catalogue.models.loading import load_catalogue
    from catalogue.models.reproduce import measured_run, reproduction_text
    from runner.command import run_options
    from runner.hosts.hosts import parse_hosts
    from runner.recording.reproduction import difference_line, reproduction, run_pin
    from runner.refresh import run_refresh

    entry = load_catalogue(roots, [args.id])[0]
    chosen = measured_run(entry, args.run)
    hosts = parse_hosts(args.hosts, args.hosts_file)
    allowed = list(args.allow or [])
    steps, differs = reproduction(
        entry, chosen, hosts, client=args.client, port=args.port, router_port=args.router_port, allowed=allowed
    )
    the_pin = run_pin(entry, chosen, allowed)
    print(reproduction_text(entry.id, chosen, entry.recipe.serving.image, steps, difference_line(differs), the_pin))
    if not args.refresh:
        return 0
    sys.stdout.flush()
    # A run that searched capacity searches again: its probes were chosen from its own results, not planned.
    return run_refresh(roots, args.id, reproduce=chosen, capacity=chosen.capacity is not None, **run_options(args))
