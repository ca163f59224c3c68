"""`catalogue validate`: load every recipe and run, then check flags; writes nothing."""

from __future__ import annotations

import sys
from pathlib import Path

from catalogue.flags.checkers import ArgvChecker
from catalogue.flags.drift import drift_row, release_checker, release_checkers
from catalogue.flags.select import upstream_checker, validate_entries
from catalogue.loading import load_catalogue


def run_validate(
    roots: list[Path], ids: list[str], snapshot: Path | None, check_flags: bool = True, release: str | None = None
) -> int:
    """Print one line per finding; exit 1 when any is an error. `release`: a committed release snapshot."""
    entries = load_catalogue(roots, ids or None)
    print(f"loaded {len(entries)} recipe(s), {sum(len(e.runs) for e in entries)} run(s)")
    if not check_flags:
        return 0
    checker: ArgvChecker = release_checker(release) if release else upstream_checker(snapshot)
    print(f"flags checked against {checker.source}")
    findings = validate_entries(entries, checker)
    errors = 0
    for items in findings.values():
        for finding in items:
            stream = sys.stderr if finding.level == "error" else sys.stdout
            print(finding, file=stream)
            errors += finding.level == "error"
    failing = sum(1 for f in findings.values() if any(x.level == "error" for x in f))
    print(f"validated {len(entries)} recipe(s): {errors} error(s)" + (f" in {failing} recipe(s)" if errors else ""))
    return 1 if errors else 0


def run_drift(roots: list[Path], ids: list[str]) -> int:
    """One line per recipe: its verdict under every committed release. Informational: exit 0 unless loading fails."""
    entries = load_catalogue(roots, ids or None)
    checkers = release_checkers()
    print(f"{len(entries)} recipe(s) against {len(checkers)} committed vLLM release(s)")
    for entry in entries:
        cells = drift_row(entry, checkers)
        verdicts = " ".join(f"{c.short_version} {'ok' if c.accepted else 'REFUSED'}" for c in cells)
        print(f"{entry.id}: {verdicts}")
        for cell in cells:
            for problem in cell.problems:
                print(f"  vLLM {cell.short_version}: {problem}")
    return 0
