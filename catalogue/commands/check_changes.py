"""`catalogue check-changes --base REF`: the pull-request check. Recipes changed since REF (git) are loaded and
their flags checked against the newest committed vLLM snapshot (errors), and against every older committed
release (a refusal there is a warning: the drift row will show it). The run policy applies as in `validate`: what
it never allows (and a secret written down) is an error, each option that needs the owner's consent is a warning
for the reviewer, notes are notices. Run files and raw-result files the change adds are untrusted input (secret
scan, schema or format), and a hosts file in the change is an error (changed_runs.py). No vLLM install is
needed. One line per finding; on GitHub Actions also as annotations on the changed file and in the job summary.
Exit 1 on any error."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from catalogue.commands.changed_runs import change_errors
from catalogue.flags.drift import drift_row, release_checkers
from catalogue.flags.select import validate_entries
from catalogue.flags.snapshot import SNAPSHOT_DIR
from catalogue.models.bounded import MAX_YAML_BYTES, read_bounded
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import RECIPE_FILE, load_entry, recipe_folders
from catalogue.policy.check import PolicyFinding, check_recipe_file, secret_findings

EVERYTHING = ("snapshots/", "catalogue/", "schemas/", "platforms/", "runner/")
"""Changes under these paths can change any recipe's verdict: check them all."""


def changed_files(base: str, cwd: Path | None = None) -> list[str]:
    """Paths changed between the merge base of REF and the work tree (committed or not), exactly as named: git's
    `-z` output (NUL-separated, never quoted), so a name with a non-ASCII, quote or control character is not
    skipped (git's default output quotes it: "recipes/tiny-cp\\303\\274/recipe.yaml" matched no recipe)."""

    def git(*args: str) -> list[str]:
        done = subprocess.run(["git", *args], capture_output=True, cwd=cwd, check=False)
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
            raise CatalogueError(base, f"git {' '.join(args)}: {why}")
        return [name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name]

    merge_base = git("merge-base", base, "HEAD")[0].strip()
    changed = git("diff", "--name-only", "-z", merge_base)
    return sorted(set(changed) | set(git("ls-files", "-z", "--others", "--exclude-standard")))


def changed_recipes(files: list[str], folders: dict[str, Path]) -> list[str]:
    """Ids of recipes with a changed file; every id when a snapshot or the checking code changed."""
    if any(f.startswith(EVERYTHING) for f in files):
        return sorted(folders)
    out = set()
    for recipe_id, folder in folders.items():
        prefix = folder.as_posix().rstrip("/") + "/"
        if any(f.startswith(prefix) for f in files):
            out.add(recipe_id)
    return sorted(out)


def escaped(text: str, prop: bool = False) -> str:
    """Text as a workflow command carries it (GitHub's rules): `%`, CR and LF encoded, and in a property (`file=`)
    `:` and `,` too, so a file name cannot end the command or start another (`a\n::stop-commands::x`)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def annotation(level: str, file: Path | str, message: str, line: int | None = None) -> str:
    """A GitHub Actions workflow command that marks the line of the file on the pull request."""
    where = f"file={escaped(str(file), prop=True)}" + (f",line={line}" if line else "")
    return f"::{level} {where}::{escaped(message)}"


def error_annotation(exc: CatalogueError) -> str:
    """A bad input as an error annotation at its file and line."""
    return annotation("error", exc.path, f"{exc.field + ': ' if exc.field else ''}{exc.message}", exc.line)


def policy_level(finding: PolicyFinding, published: bool = False) -> str:
    """error (never, undeclared consent), warning (consent, for review; a published recipe's image by a mutable
    tag: its figures cannot be reproduced), notice (other notes)."""
    if finding.is_error:
        return "error"
    if finding.cls == "consent" or (published and finding.option.startswith("image ") and "mutable tag" in finding.why):
        return "warning"
    return "notice"


def policy_annotation(finding: PolicyFinding, published: bool = False) -> str:
    """The finding as an annotation at its line."""
    return annotation(policy_level(finding, published), finding.source, finding.line(), finding.lineno)


def _recipe_text(path: Path) -> str:
    """A changed recipe's text for the secret scan: a regular file read without following a link (its folder no
    link either) and within the size limit; a link to /proc/self/environ was read and its credentials' prefixes
    printed."""
    if path.parent.is_symlink():
        raise CatalogueError(path.parent, "a symbolic link: a recipe folder is never a link")
    return read_bounded(path, MAX_YAML_BYTES, regular=True)


def run_check_changes(roots: list[Path], base: str) -> int:
    """Check the changed recipes; report each finding once, as a line and (on Actions) an annotation."""
    on_actions = os.environ.get("GITHUB_ACTIONS") == "true"
    folders = recipe_folders(roots)
    files = changed_files(base)
    ids = changed_recipes(files, folders)
    checkers = release_checkers()
    if not checkers:
        raise CatalogueError(SNAPSHOT_DIR, "no committed vLLM flag snapshot to check against")
    checker = checkers[-1]  # the newest release
    print(f"{len(ids)} changed recipe(s) since {base}; flags checked against {checker.source}")
    lines: list[str] = []
    errors = 0
    entries = []
    for problem in change_errors(files):
        errors += 1
        lines.append(f"error: {problem}")
        if on_actions:
            print(error_annotation(problem))
    for recipe_id in ids:
        path = folders[recipe_id] / RECIPE_FILE
        try:
            secrets = secret_findings(path, _recipe_text(path)) if path.exists() or path.is_symlink() else []
        except CatalogueError as exc:  # a link, FIFO or huge file: refused unread, before any secret scan
            errors += 1
            lines.append(f"error: {exc}")
            if on_actions:
                print(error_annotation(exc))
            continue
        for secret in secrets:
            errors += 1
            lines.append(str(secret))
            if on_actions:
                print(policy_annotation(secret))
        if secrets:
            continue
        try:
            entries.append(load_entry(folders[recipe_id]))
        except CatalogueError as exc:
            if f"error: {exc}" in lines:
                continue  # a changed run file, reported above
            errors += 1
            lines.append(f"error: {exc}")
            if on_actions:
                print(error_annotation(exc))
    for entry in entries:
        for rule in check_recipe_file(
            entry.folder / RECIPE_FILE, entry.recipe.serving, platform=entry.platform, model=entry.recipe.model_arg
        ):
            errors += rule.is_error
            level = policy_level(rule, entry.recipe.publish)
            lines.append(str(rule) if level != "warning" or rule.cls == "consent" else f"warning: {rule}")
            if on_actions:
                print(policy_annotation(rule, entry.recipe.publish))
    for findings in validate_entries(entries, checker).values():
        for finding in findings:
            if finding.level == "info":
                continue
            errors += finding.level == "error"
            lines.append(str(finding))
            if on_actions:
                level = "error" if finding.level == "error" else "warning"
                text = f"{'--' + finding.flag + ': ' if finding.flag else ''}{finding.message} [{finding.vllm}]"
                print(annotation(level, finding.file, text))
    for entry in entries:
        for cell in drift_row(entry, checkers):
            if cell.accepted or cell.version == checker.snapshot.vllm_version:
                continue
            text = f"refused by vLLM {cell.short_version}: {'; '.join(cell.problems)}"
            lines.append(f"{entry.folder / RECIPE_FILE}: warning: {text}")
            if on_actions:
                print(annotation("warning", entry.folder / RECIPE_FILE, text))
    for line in lines:
        print(line)
    verdict = f"{len(ids)} recipe(s) checked: {errors} error(s)"
    print(verdict)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if on_actions and summary:
        with open(summary, "a", encoding="utf-8") as out:
            out.write(f"### Recipe check\n\n{verdict}\n\n" + "".join(f"- `{line}`\n" for line in lines))
    return 1 if errors else 0
