"""`catalogue validate`: scan recipe files for secrets, load every recipe and run, apply the run policy, then check
flags; writes nothing."""

from __future__ import annotations

import sys
from pathlib import Path

from catalogue.flags.checkers import ArgvChecker
from catalogue.flags.drift import drift_row, release_checker, release_checkers
from catalogue.flags.select import upstream_checker, validate_entries
from catalogue.models.bounded import MAX_YAML_BYTES, read_bounded
from catalogue.models.loading import RECIPE_FILE, Entry, load_catalogue, recipe_folders
from catalogue.policy.check import PolicyFinding, check_recipe_file, secret_findings


def secrets_first(roots: list[Path], ids: list[str]) -> list[PolicyFinding]:
    """Every secret written in the chosen recipe files, found before they are parsed (no error quotes a value)."""
    folders = recipe_folders(roots)
    found = []
    for recipe_id in ids or sorted(folders):
        if recipe_id in folders:
            path = folders[recipe_id] / RECIPE_FILE
            # never through a link, never a FIFO, never past the size limit: read before anything else refuses them
            found += secret_findings(path, read_bounded(path, MAX_YAML_BYTES, regular=True))
    return found


def policy_findings(entries: list[Entry]) -> list[PolicyFinding]:
    """The run policy over every entry, with file lines."""
    return [
        f
        for e in entries
        for f in check_recipe_file(
            e.folder / RECIPE_FILE, e.recipe.serving, platform=e.platform, model=e.recipe.model_arg
        )
    ]


def print_policy(findings: list[PolicyFinding]) -> int:
    """One line each (errors on stderr); the number of errors."""
    for finding in findings:
        print(finding, file=sys.stderr if finding.is_error else sys.stdout)
    return sum(f.is_error for f in findings)


def run_validate(
    roots: list[Path], ids: list[str], snapshot: Path | None, check_flags: bool = True, release: str | None = None
) -> int:
    """Print one line per finding; exit 1 when any is an error. `release`: a committed release snapshot."""
    secrets = secrets_first(roots, ids)
    if secrets:
        print_policy(secrets)
        return 1
    entries = load_catalogue(roots, ids or None)
    print(f"loaded {len(entries)} recipe(s), {sum(len(e.runs) for e in entries)} run(s)")
    policy = policy_findings(entries)
    policy_errors = print_policy(policy)
    if not check_flags:
        if policy_errors:
            print(f"run policy: {policy_errors} error(s)")
        return 1 if policy_errors else 0
    checker: ArgvChecker = release_checker(release) if release else upstream_checker(snapshot)
    print(f"flags checked against {checker.source}")
    findings = validate_entries(entries, checker)
    errors = policy_errors
    for items in findings.values():
        for finding in items:
            stream = sys.stderr if finding.level == "error" else sys.stdout
            print(finding, file=stream)
            errors += finding.level == "error"
    failing = len(
        {k for k, f in findings.items() if any(x.level == "error" for x in f)}
        | {Path(f.source).parent.name for f in policy if f.is_error}
    )
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
