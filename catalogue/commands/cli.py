"""Command line: parses arguments only; each command's work lives in `catalogue.commands`."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from catalogue.models.errors import CatalogueError
from catalogue.models.terminal import safe_terminal

DEFAULT_ROOTS = [Path("recipes")]
COMMAND_GROUP = "catalogue.commands"
"""Entry points that add commands (the runner's `refresh`): modules with HELP, add_arguments(parser)
and run(args, roots)."""


def plugin_commands() -> dict[str, Any]:
    """Commands other packages register; the domain package imports none of them itself."""
    return {ep.name: ep.load() for ep in entry_points(group=COMMAND_GROUP)}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="catalogue", description="LLM inference recipe catalogue.")
    parser.add_argument("--root", action="append", type=Path, help="recipe folder (repeatable; default: recipes)")
    sub = parser.add_subparsers(dest="command", required=True)

    val = sub.add_parser("validate", help="check recipes, runs and flags; writes nothing")
    val.add_argument("ids", nargs="*", help="recipe ids (default: all)")
    val.add_argument("--snapshot", type=Path, help="validate flags against this flag snapshot, not installed vLLM")
    val.add_argument(
        "--vllm",
        metavar="VERSION",
        help="validate against the committed snapshot of this vLLM release (e.g. 0.31), "
        "or 'all': every committed release, one verdict per recipe and release",
    )
    val.add_argument("--no-flags", action="store_true", help="skip flag validation")

    exp = sub.add_parser(
        "export",
        help="write the generated Markdown pages to a folder; with --sparkrun ID, one recipe as a sparkrun recipe file",
    )
    exp.add_argument(
        "out", type=Path, nargs="?", help="folder (with --sparkrun: the file, or a folder; default ./ID.yaml)"
    )
    exp.add_argument("ids", nargs="*")
    exp.add_argument("--sparkrun", metavar="ID", help="write this recipe as a sparkrun recipe (format v2)")

    sch = sub.add_parser("schema", help="write the JSON Schemas of the recipe and run files")
    sch.add_argument("out", type=Path, nargs="?", default=Path("schemas"))

    flags = sub.add_parser("flags", help="flag schemas of vLLM")
    flags_sub = flags.add_subparsers(dest="flags_command", required=True)
    dump = flags_sub.add_parser("dump", help="write the installed vLLM's flag snapshot")
    dump.add_argument("--out", type=Path, help="file (default: snapshots/vllm-<version>.json)")
    dump.add_argument("--image", help="record the snapshot as taken inside this image")

    new = sub.add_parser(
        "new",
        help="write a draft recipe from a pasted launch command (docker run ... vllm serve ...) or a sparkrun recipe",
    )
    new.add_argument("recipe_id", help="the draft's id (with a folder of sparkrun recipes: the prefix of each id)")
    source = new.add_mutually_exclusive_group(required=True)
    source.add_argument("--from-command", metavar="FILE", help="file with the command, or - for stdin")
    source.add_argument(
        "--from-sparkrun",
        metavar="PATH",
        help="a sparkrun recipe file (v2 or v1); or a folder (the registry's layout too): one draft per recipe file",
    )
    new.add_argument("--snapshot", type=Path, help="read flags with this flag snapshot, not the installed vLLM")
    new.add_argument("--model", help="Hugging Face id, when `vllm serve` names a local path")
    new.add_argument("--platform", default="dgx-spark", help="copy the hardware of a recipe on this platform")
    new.add_argument("--image", help="the image a bare `vllm serve` command runs in (it provides flags vLLM lacks)")
    new.add_argument("--service", help="the service to read, when the paste is a docker-compose file with several")

    imp = sub.add_parser(
        "import",
        help="write run files from benchmark results: `vllm bench serve` JSONs, `vllm bench sweep serve` / "
        "`serve_workload` folders, llama-benchy JSON reports, GuideLLM benchmarks.json, AIPerf "
        "profile_export_aiperf.json (one run per workload; the files are kept beside it)",
    )
    imp.add_argument("recipe_id")
    imp.add_argument("files", nargs="+", type=Path)
    imp.add_argument("--dataset", help="prompt source, when the files do not record it (e.g. random)")
    imp.add_argument("--input-len", type=int, help="prompt tokens per request, when the files do not record it")
    imp.add_argument("--output-len", type=int, help="output tokens per request, when the files do not record it")
    imp.add_argument("--tool-version", help="the tool's version, when the files do not record it")
    imp.add_argument("--title", help="source title (default: the tool and the file names)")
    imp.add_argument("--source", help="link or citation of the source")
    imp.add_argument("--date", type=_date, help="when the source measured (default: the date the files record)")
    imp.add_argument("--label", help="what distinguishes this run, e.g. 'after the driver update'")
    imp.add_argument("--image", help="the serving image the figures were measured with")
    imp.add_argument("--vllm-version", help="the vLLM version the figures were measured with")
    imp.add_argument("--command", dest="tool_command", help="the tool's command line, as it was run")
    imp.add_argument(
        "--goodput",
        nargs="+",
        metavar="KEY:MS",
        help="the limits the goodput figures were counted against, as vLLM's --goodput takes them (ttft:2000 "
        "tpot:100 e2el:30000); `vllm bench serve` JSONs do not record them. The rate levels are judged against them",
    )
    imp.add_argument(
        "--slo-percentile",
        type=int,
        choices=(50, 90, 95, 99),
        help="the percentile of each latency the rate levels are judged at against the limits (default 95)",
    )

    chk = sub.add_parser(
        "check-changes",
        help="the pull-request check: recipes changed since a git ref, flags against the newest committed snapshot",
    )
    chk.add_argument("--base", default="origin/main", help="git ref the changes are counted from")

    stale = sub.add_parser(
        "stale",
        help="print the ids of the recipes the scheduled refresh re-measures: published, with an image, and "
        "measured more than N days ago (or never), or the ones named",
    )
    stale.add_argument("--days", type=int, default=30, help="a run older than this many days is stale (default 30)")
    stale.add_argument("--ids", type=_ids, default=[], help="comma-separated recipe ids, taken whatever their age")
    stale.add_argument("--nodes", type=int, help="only recipes whose topology uses this many machines")
    stale.add_argument("--today", type=_date, help="the date ages are counted from (default: today, UTC)")

    for name, command in plugin_commands().items():
        command.add_arguments(sub.add_parser(name, help=command.HELP))
    return parser


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def _ids(text: str) -> list[str]:
    """`a,b` -> ["a", "b"]: blanks dropped, each id once, in order (an empty text names none)."""
    return list(dict.fromkeys(word.strip() for word in text.split(",") if word.strip()))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `catalogue` command: everything it prints passes catalogue.models.terminal (a file's
    control characters reach the terminal escaped)."""
    with safe_terminal():
        return _run(argv)


def _run(argv: list[str] | None) -> int:
    """Parse the arguments and run the command; a bad input is one line."""
    args = _parser().parse_args(argv)
    roots = args.root or DEFAULT_ROOTS
    try:
        if args.command == "validate":
            from catalogue.commands.validate import run_validate

            if args.vllm == "all":
                from catalogue.commands.validate import run_drift

                return run_drift(roots, args.ids)
            return run_validate(roots, args.ids, args.snapshot, check_flags=not args.no_flags, release=args.vllm)
        if args.command == "export" and args.sparkrun:
            from catalogue.commands.export_sparkrun import run_export_sparkrun

            return run_export_sparkrun(roots, args.sparkrun, args.out)
        if args.command == "export":
            from catalogue.commands.export import run_export

            if args.out is None:
                raise CatalogueError("export", "name the folder to write the pages to (or --sparkrun ID)")

            return run_export(roots, args.ids, args.out)
        if args.command == "schema":
            from catalogue.commands.schema import run_schema

            return run_schema(args.out)
        if args.command == "flags":
            from catalogue.commands.flags import run_dump

            return run_dump(args.out, args.image)
        if args.command == "check-changes":
            from catalogue.commands.check_changes import run_check_changes

            return run_check_changes(roots, args.base)
        if args.command == "stale":
            from catalogue.commands.stale import run_stale

            return run_stale(roots, args.days, args.ids, args.nodes, args.today)
        if args.command == "new" and args.from_sparkrun:
            from catalogue.commands.new_sparkrun import run_new_sparkrun

            given = [f"--{name}" for name in ("model", "image", "service") if getattr(args, name)]
            if given:
                raise CatalogueError(args.from_sparkrun, f"{given[0]}: a sparkrun recipe names its model and image")

            return run_new_sparkrun(roots, args.recipe_id, args.from_sparkrun, args.snapshot, args.platform)
        if args.command == "new":
            from catalogue.commands.new import run_new

            return run_new(
                roots,
                args.recipe_id,
                args.from_command,
                args.snapshot,
                args.model,
                args.platform,
                args.image,
                args.service,
            )
        if args.command == "import":
            from catalogue.commands.import_runs import Source, run_import
            from catalogue.imports.workloads import Stated, parse_goodput

            stated = Stated(
                args.dataset,
                args.input_len,
                args.output_len,
                args.tool_version,
                goodput=parse_goodput(args.goodput) if args.goodput else None,
                slo_percentile=args.slo_percentile,
            )
            source = Source(
                args.title, args.source, args.date, args.label, args.image, args.vllm_version, args.tool_command
            )
            return run_import(roots, args.recipe_id, args.files, stated, source)
        return plugin_commands()[args.command].run(args, roots)
    except CatalogueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
