"""`catalogue validate`: load every recipe and run, then check flags; writes nothing."""

from __future__ import annotations

import sys
from pathlib import Path

from catalogue.flags.select import upstream_checker, validate_entries
from catalogue.loading import load_catalogue


def run_validate(roots: list[Path], ids: list[str], snapshot: Path | None, check_flags: bool = True) -> int:
    """Print one line per finding; exit 1 when any is an error."""
    entries = load_catalogue(roots, ids or None)
    print(f"loaded {len(entries)} recipe(s), {sum(len(e.runs) for e in entries)} run(s)")
    if not check_flags:
        return 0
    checker = upstream_checker(snapshot)
    print(f"flags checked against {checker.source}")
    findings = validate_entries(entries, checker)
    errors = 0
    for recipe_id, items in findings.items():
        for finding in items:
            stream = sys.stderr if finding.level == "error" else sys.stdout
            print(finding, file=stream)
            errors += finding.level == "error"
    failing = sum(1 for f in findings.values() if any(x.level == "error" for x in f))
    print(f"validated {len(entries)} recipe(s): {errors} error(s)" + (f" in {failing} recipe(s)" if errors else ""))
    return 1 if errors else 0
