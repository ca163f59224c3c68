"""Command line: parses arguments only; each command's work lives in `catalogue.commands`."""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from catalogue.errors import CatalogueError

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

    exp = sub.add_parser("export", help="write the generated Markdown pages to a folder")
    exp.add_argument("out", type=Path)
    exp.add_argument("ids", nargs="*")

    sch = sub.add_parser("schema", help="write the JSON Schemas of the recipe and run files")
    sch.add_argument("out", type=Path, nargs="?", default=Path("schemas"))

    flags = sub.add_parser("flags", help="flag schemas of vLLM")
    flags_sub = flags.add_subparsers(dest="flags_command", required=True)
    dump = flags_sub.add_parser("dump", help="write the installed vLLM's flag snapshot")
    dump.add_argument("--out", type=Path, help="file (default: snapshots/vllm-<version>.json)")
    dump.add_argument("--image", help="record the snapshot as taken inside this image")

    for name, command in plugin_commands().items():
        command.add_arguments(sub.add_parser(name, help=command.HELP))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `catalogue` command."""
    args = _parser().parse_args(argv)
    roots = args.root or DEFAULT_ROOTS
    try:
        if args.command == "validate":
            from catalogue.commands.validate import run_validate

            if args.vllm == "all":
                from catalogue.commands.validate import run_drift

                return run_drift(roots, args.ids)
            return run_validate(roots, args.ids, args.snapshot, check_flags=not args.no_flags, release=args.vllm)
        if args.command == "export":
            from catalogue.commands.export import run_export

            return run_export(roots, args.ids, args.out)
        if args.command == "schema":
            from catalogue.commands.schema import run_schema

            return run_schema(args.out)
        if args.command == "flags":
            from catalogue.commands.flags import run_dump

            return run_dump(args.out, args.image)
        return plugin_commands()[args.command].run(args, roots)
    except CatalogueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
