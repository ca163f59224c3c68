"""Read recipe folders into checked, typed entries: load -> parse -> cross-check."""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from catalogue.models.benchmark import BenchmarkRun, LevelResult
from catalogue.models.bounded import MAX_RUN_BYTES, MAX_RUN_WHOLE_DIGITS, MAX_YAML_BYTES, load_json, read_bounded
from catalogue.models.errors import CatalogueError, from_validation, yaml_line
from catalogue.models.platform import Platform, UnknownPlatform, load_platform
from catalogue.models.recipe import Comparison, Recipe
from catalogue.models.yaml_files import parse_yaml
from catalogue.policy.file_secrets import check_json
from catalogue.stats.metrics import metric_value

RECIPE_FILE = "recipe.yaml"
RUNS_DIR = "runs"
RECIPE_ID = re.compile(r"[a-z0-9][a-z0-9-]*")
"""A recipe id (its folder's name), matched whole: lower-case ASCII letters, digits and '-'."""
ID_RULE = "recipe id (the folder name) must be lower-case letters, digits and '-'"


@dataclass(frozen=True)
class Entry:
    """A recipe with its benchmark runs, oldest run first."""

    id: str
    folder: Path
    recipe: Recipe
    runs: list[BenchmarkRun] = field(default_factory=list)
    platform: Platform | None = None
    """The profile of `hardware.platform` (platforms/<name>.yaml)."""

    @property
    def simulated(self) -> bool:
        """Served by the simulator, or one of its runs was: its figures are a model's, never a measurement."""
        return self.recipe.serving.simulator is not None or any(run.from_simulator for run in self.runs)

    @property
    def verified(self) -> dt.date | None:
        """Date of the newest measurement among the runs."""
        dates = [run.measured_on for run in self.runs if run.measured_on]
        return max(dates) if dates else None

    @property
    def latest(self) -> BenchmarkRun | None:
        """The newest run with a concurrency sweep: the one the page's tables show; a named profile's run (the
        Arena's, written beside the runner's own) only when no other run has one."""
        with_levels = [run for run in self.runs if run.levels]
        # of one refresh's run files, its first (`<stamp>.json`), not another kind of text's (`<stamp>-code.json`)
        return max(with_levels, key=lambda r: (_unprofiled(r), _run_order(r), r.part is None)) if with_levels else None

    def ours(self, comparison: Comparison) -> tuple[BenchmarkRun, LevelResult] | None:
        """Our run and level at a comparison's concurrency: the newest run that has the metric there."""
        for run in sorted(self.runs, key=_run_order, reverse=True):
            level = run.level(comparison.concurrency)
            if level is not None and metric_value(level, comparison.metric) is not None:
                return run, level
        return None


def _unprofiled(run: BenchmarkRun) -> bool:
    return run.workload is None or run.workload.profile is None


def _run_order(run: BenchmarkRun) -> tuple[dt.date, dt.datetime]:
    return (run.measured_on or dt.date.min, run.recorded_at)


CLOCK_SKEW = dt.timedelta(days=1)
"""How far a run's recorded_at may lie ahead of this machine's clock (another machine's clock), and an import's
source_date ahead of its recorded_at (a source's local date)."""


def refuse_link(path: Path) -> None:
    """A recipe file, a run file, its runs folder and its recipe folder are read only where none is a symlink."""
    for part in (path, path.parent, path.parent.parent if path.parent.name == RUNS_DIR else path.parent):
        if part.is_symlink():
            raise CatalogueError(part, f"a symlink (to {os.readlink(part)}): a recipe folder holds plain files")


def parse_recipe(path: Path) -> Recipe:
    """Parse and validate one recipe.yaml."""
    refuse_link(path)
    text = read_bounded(path, MAX_YAML_BYTES)
    data = parse_yaml(text, path)
    if not isinstance(data, dict):
        raise CatalogueError(path, "a recipe is a YAML mapping", line=1)
    try:
        return Recipe.model_validate(data)
    except ValidationError as exc:
        raise from_validation(path, exc, text) from None


def parse_run(path: Path, scan_secrets: bool = True) -> BenchmarkRun:
    """Parse and validate one benchmark run JSON; a credential in any of its strings is an error (masked).

    `scan_secrets=False` only for the page build (catalogue.site.build under MkDocs): the commands that take a
    stranger's files (validate, check-changes, import, new) and the runner scan them; the build reads them again."""
    refuse_link(path)
    text = read_bounded(path, MAX_RUN_BYTES)
    data = load_json(text, path, whole_digits=MAX_RUN_WHOLE_DIGITS)
    if scan_secrets:
        check_json(path, text, data)  # before the schema, whose errors quote values
    try:
        run = BenchmarkRun.model_validate(data)
    except ValidationError as exc:
        raise from_validation(path, exc) from None
    if path.stem != run.file_stem:
        raise CatalogueError(
            path, f"file name must be its recorded_at stamp and part: {run.file_stem}.json", "recorded_at"
        )
    refuse_future(path, run)
    return run


def refuse_future(path: Path, run: BenchmarkRun, now: dt.datetime | None = None) -> None:
    """A run recorded later than now, or (imported) measured later than it was recorded, beyond CLOCK_SKEW (the
    source's date is in its own time zone), is an error: the newest date picks a page's headline run and hides
    a recipe from `stale`."""
    latest = (now or dt.datetime.now(dt.UTC)) + CLOCK_SKEW
    if run.recorded_at > latest:
        raise CatalogueError(path, f"recorded_at {run.recorded_at:%Y-%m-%d %H:%M} UTC is in the future", "recorded_at")
    measured = run.measured_on
    if measured is not None and measured > (run.recorded_at + CLOCK_SKEW).astimezone(dt.UTC).date():
        raise CatalogueError(
            path, f"source_date {measured} is after recorded_at {run.recorded_at:%Y-%m-%d}", "provenance.source_date"
        )


def recipe_platform(path: Path, recipe: Recipe) -> Platform:
    """The recipe's platform profile; an unknown platform is an error on its `hardware.platform` line."""
    try:
        return load_platform(recipe.hardware.platform)
    except UnknownPlatform as exc:
        try:
            line = yaml_line(path.read_text(encoding="utf-8"), ("hardware", "platform"))
        except OSError:
            line = None
        raise CatalogueError(path, str(exc), "hardware.platform", line) from None


def check_entry(entry: Entry) -> None:
    """Cross-file checks: every comparison has our figure at its concurrency."""
    for i, comparison in enumerate(entry.recipe.comparisons):
        if entry.ours(comparison) is None:
            raise CatalogueError(
                entry.folder / RECIPE_FILE,
                f"no run measured {comparison.metric} at concurrency {comparison.concurrency}",
                f"comparisons[{i}]",
            )


def refuse_symlinks(folder: Path) -> None:
    """A recipe folder holds plain files: a symlink (a mount source, a run file) would be judged by its name, not
    by what it points to on the machine that runs the recipe. Nor is the folder itself one."""
    if folder.is_symlink():
        raise CatalogueError(folder, f"a symlink (to {os.readlink(folder)}): a recipe folder holds plain files")
    pending = [str(folder)]
    while pending:  # as os.walk visits them, but each entry's type read with its folder (no stat per file)
        with os.scandir(pending.pop()) as found:
            items = list(found)
        dirs = [item for item in items if item.is_dir()]
        for item in [*dirs, *(item for item in items if not item.is_dir())]:
            if item.is_symlink():
                path = Path(item.path)
                raise CatalogueError(path, f"a symlink (to {os.readlink(path)}): a recipe folder holds plain files")
        pending += reversed([item.path for item in dirs])


def load_entry(folder: Path, scan_secrets: bool = True) -> Entry:
    """Load one recipe folder: recipe.yaml plus runs/*.json (each scanned for credentials unless `scan_secrets` is
    False: see parse_run)."""
    recipe_id = folder.name
    if not RECIPE_ID.fullmatch(recipe_id):
        raise CatalogueError(folder, ID_RULE)
    refuse_symlinks(folder)
    recipe = parse_recipe(folder / RECIPE_FILE)
    platform = recipe_platform(folder / RECIPE_FILE, recipe)
    runs = [parse_run(p, scan_secrets) for p in sorted((folder / RUNS_DIR).glob("*.json"))]
    entry = Entry(recipe_id, folder, recipe, sorted(runs, key=_run_order), platform)
    check_entry(entry)
    return entry


def recipe_folders(roots: list[Path]) -> dict[str, Path]:
    """Every recipe folder under the roots by id; one id in two places is an error."""
    found: dict[str, Path] = {}
    for root in roots:
        if not root.is_dir():
            raise CatalogueError(root, "recipe folder does not exist")
        for recipe_file in sorted(root.glob(f"*/{RECIPE_FILE}")):
            folder = recipe_file.parent
            if not RECIPE_ID.fullmatch(folder.name):
                raise CatalogueError(folder, ID_RULE)
            if folder.name in found:
                raise CatalogueError(folder, f"recipe id {folder.name!r} is also used by {found[folder.name]}")
            found[folder.name] = folder
    return found


def load_catalogue(roots: list[Path], ids: list[str] | None = None) -> list[Entry]:
    """Load every recipe under the roots (or only `ids`), sorted by id."""
    folders = recipe_folders(roots)
    for wanted in ids or []:
        if wanted not in folders:
            raise CatalogueError(wanted, f"no recipe with this id under {', '.join(map(str, roots))}")
    chosen = ids or sorted(folders)
    return [load_entry(folders[i]) for i in chosen]
