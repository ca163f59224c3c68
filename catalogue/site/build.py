"""One call that the MkDocs hook and `catalogue export` share: load -> validate -> render."""

from __future__ import annotations

import datetime as dt
import gc
import html
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from catalogue.flags.checkers import ArgvChecker, SnapshotChecker
from catalogue.flags.drift import drift_row, release_checkers, release_snapshots
from catalogue.flags.select import IMAGE_SNAPSHOT_DIR, upstream_checker, validate_entries
from catalogue.flags.snapshot import installed_vllm_version
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import Entry, load_entry, recipe_folders
from catalogue.models.platform import PLATFORMS_DIR
from catalogue.publish.sparkrun_export import sparkrun_files, sparkrun_recipe
from catalogue.site import api
from catalogue.site.forking import split_map
from catalogue.site.index_page import IndexRow, index_row_parts
from catalogue.site.page import Page
from catalogue.site.pages import RecipeParts, SharedPages, compared_ids, comparison_groups, page_jobs, recipe_parts
from catalogue.site.templating import compile_templates
from catalogue.site.urls import recipe_path
from catalogue.site.view import Validation
from catalogue.stats.price_model import PRICE_MODEL_FILE


@dataclass(frozen=True)
class SiteBuild:
    """Generated pages plus what the build must say about them."""

    pages: dict[str, Page]
    checked_against: str
    refused: list[str]
    recipes: list[tuple[Entry, Validation]] = field(default_factory=list)
    """Every recipe that got a page (examples too), with its flag check and drift row: what catalogue.site.api reads."""
    published: dict[str, Published] = field(default_factory=dict)
    """Recipe id -> its API and sparkrun texts, made beside its page when the build was given `generated_at`."""


@dataclass(frozen=True)
class Published:
    """A published recipe's part of the API index, its API document and its sparkrun file, as texts."""

    index: api.IndexRecipe
    document: str
    sparkrun: str


def published(entry: Entry, validation: Validation, generated_at: dt.datetime) -> Published:
    """What `published_files` writes for one recipe (made in the batch that prepares it, on either core)."""
    document = api.recipe_document(entry, validation, generated_at).model_dump_json(indent=2) + "\n"
    return Published(api.index_recipe(entry, validation), document, sparkrun_recipe(entry)[0])


@dataclass(frozen=True)
class Prepared:
    """One recipe loaded, its flags checked and, when publishable, its page's body and answer box rendered."""

    entry: Entry
    validation: Validation
    parts: RecipeParts | None
    published: Published | None = None
    """Its API and sparkrun texts: a published recipe without flag errors, when the build asked for them."""
    row: IndexRow | None = None
    """Its row of the index page: a published recipe without flag errors (made with its page, on either core)."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a batch allocates many long-lived, acyclic objects.

    Loading 1,000 recipes otherwise spends a quarter of its time in collections that free nothing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class Broken:
    """A recipe folder that does not load (bad YAML or JSON, an unknown field): its one-line error."""

    folder: Path
    error: str
    path: str | None = None
    """The recipe page's path when known (the recipe loaded, but its flags were refused)."""

    def page(self) -> Page:
        """What a preview shows at the recipe's address instead of the recipe."""
        path = (
            self.path or f"{'examples' if self.folder.parent.name == 'examples' else 'recipes'}/{self.folder.name}.md"
        )
        what = "is not published: its flags are refused" if self.path else "does not load"
        lines = "".join(f"<p><code>{html.escape(line)}</code></p>" for line in self.error.splitlines())
        body = (
            f'<div class="admonition failure"><p class="admonition-title">This recipe {what}</p>'
            f"{lines}<p>Fix the file and save: the page reloads.</p></div>"
        )
        return Page(path, f"{self.folder.name}: error", self.error.splitlines()[0], body=body)


def _load(folder: Path, tolerant: bool, scan_secrets: bool) -> Entry | Broken:
    try:
        return load_entry(folder, scan_secrets)
    except CatalogueError as exc:
        if not tolerant:
            raise
        return Broken(folder, str(exc))


def prepare(
    folders: Sequence[Path],
    checker: ArgvChecker,
    checked_on: dt.date,
    releases: Sequence[SnapshotChecker] = (),
    tolerant: bool = False,
    scan_secrets: bool = True,
    generated_at: dt.datetime | None = None,
) -> list[Prepared | Broken]:
    """Load, validate (against `checker`, and each release for the drift row) and render a batch of recipe folders.

    `tolerant` (a live preview): a folder that does not load becomes a `Broken` instead of stopping the build.
    `scan_secrets`: run files through the secret scanner (catalogue.models.loading.parse_run).
    `generated_at`: also make each published recipe's API and sparkrun texts (`Published`), stamped with it.
    """
    loaded = [_load(folder, tolerant, scan_secrets) for folder in folders]
    entries = [e for e in loaded if isinstance(e, Entry)]
    findings = validate_entries(entries, checker)
    out: list[Prepared | Broken] = []
    for entry in loaded:
        if isinstance(entry, Broken):
            out.append(entry)
            continue
        drift = drift_row(entry, list(releases), {checker.snapshot.vllm_version.split("+")[0]: findings[entry.id]})
        validation = Validation(checker.snapshot.vllm_version, checked_on, checker.source, findings[entry.id], drift)
        if validation.errors:
            out.append(Prepared(entry, validation, None))
            continue
        texts = published(entry, validation, generated_at) if generated_at and entry.recipe.publish else None
        row = index_row_parts(entry, validation) if entry.recipe.publish else None
        parts = recipe_parts(entry, validation, row.values if row else None)
        out.append(Prepared(entry, validation, parts, texts, row))
    return out


@dataclass
class Rebuilds:
    """What a long-lived process (`mkdocs serve`) keeps between builds: each recipe prepared, keyed
    by the signature of its files and of everything its check depends on."""

    prepared: dict[Path, tuple[tuple, Prepared | Broken]] = field(default_factory=dict)
    pages: dict[str, tuple[Prepared, bool, Page]] = field(default_factory=dict)
    """Recipe id -> its page as last rendered, from which Prepared, and whether it linked a comparison."""
    rows: dict[str, tuple[Prepared, IndexRow]] = field(default_factory=dict)
    """Recipe id -> its index row as last made, from which Prepared."""
    checkers: tuple[tuple, ArgvChecker, list[SnapshotChecker]] | None = None
    """The flag checkers and the signature of what they were made from."""
    signatures: dict[Path, tuple] = field(default_factory=dict)
    """Each folder's signature as `reuse` took it in this build."""
    shared: SharedPages = field(default_factory=SharedPages)
    """Model and comparison pages, kept while made from the same entries."""

    def current_checkers(self) -> tuple[ArgvChecker, list[SnapshotChecker], bool]:
        """(upstream checker, release checkers, whether they were just made): made again when a snapshot
        file, the installed vLLM or $CATALOGUE_FLAGS_SNAPSHOT changed since the last build."""
        signature = (installed_vllm_version(), os.environ.get("CATALOGUE_FLAGS_SNAPSHOT"), _stats(release_snapshots()))
        fresh = self.checkers is None or self.checkers[0] != signature
        if fresh:
            self.checkers = (signature, upstream_checker(), release_checkers())
        assert self.checkers is not None
        return self.checkers[1], self.checkers[2], fresh

    def reuse(self, folders: list[Path], context: tuple) -> tuple[dict[Path, Prepared | Broken], list[Path]]:
        """Prepared recipes whose signature is unchanged, and the folders that must be prepared again."""
        kept, stale = {}, []
        self.signatures = {folder: (context, _file_stats(folder)) for folder in folders}
        for folder in folders:
            known = self.prepared.get(folder)
            if known is not None and known[0] == self.signatures[folder]:
                kept[folder] = known[1]
            else:
                stale.append(folder)
        return kept, stale

    def remember(self, folders: list[Path], prepared: list[Prepared | Broken]) -> None:
        """Keep this build's prepared recipes under the signatures `reuse` took (before they were read)."""
        self.prepared = {folder: (self.signatures[folder], p) for folder, p in zip(folders, prepared)}

    def rendered_pages(self, publishable: list[Prepared]) -> dict[str, tuple[bool, Page]]:
        """Recipe pages rendered last time from the very Prepared objects of this build (see pages.page_jobs)."""
        return {
            p.entry.id: (known[1], known[2])
            for p in publishable
            if (known := self.pages.get(p.entry.id)) is not None and known[0] is p
        }

    def index_rows(self, publishable: list[Prepared]) -> dict[str, IndexRow]:
        """Each published recipe's index row, kept from the last build while its Prepared is the same object."""
        rows = {}
        for p in publishable:
            if p.entry.recipe.publish:
                known = self.rows.get(p.entry.id)
                made = known[1] if known and known[0] is p else p.row
                rows[p.entry.id] = (p, made or index_row_parts(p.entry, p.validation))
        self.rows = rows
        return {recipe_id: row for recipe_id, (_, row) in rows.items()}

    def remember_pages(self, publishable: list[Prepared], pages: dict[str, Page], compared: set[str]) -> None:
        self.pages = {
            p.entry.id: (p, p.entry.id in compared, pages[recipe_path(p.entry)])
            for p in publishable
            if recipe_path(p.entry) in pages
        }


def _file_stats(folder: Path) -> tuple:
    return _stats([folder / "recipe.yaml", *sorted((folder / "runs").glob("*.json"))])


def _check_context(checker: ArgvChecker, checked_on: dt.date) -> tuple:
    """What every recipe's check and page depend on besides its own files: the checker, the day, image
    snapshots, platform profiles, the price model."""
    return (
        id(checker),
        checker.source,
        checker.snapshot.vllm_version,
        checked_on,
        _stats(sorted(IMAGE_SNAPSHOT_DIR.glob("*.json"))),
        _stats(sorted(PLATFORMS_DIR.glob("*.yaml"))),  # a profile changes the launch commands on the page
        _stats([PRICE_MODEL_FILE]),  # the price model changes every cost on the pages
        _stats(release_snapshots()),
    )


def _stats(paths: list[Path]) -> tuple:
    """(name, mtime, size) of each file that exists: one stat per file."""
    out = []
    for path in paths:
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        out.append((path.name, st.st_mtime_ns, st.st_size))
    return tuple(out)


def generate(
    roots: list[Path],
    checker: ArgvChecker | None = None,
    today: dt.date | None = None,
    rebuilds: Rebuilds | None = None,
    releases: Sequence[SnapshotChecker] | None = None,
    tolerant: bool = False,
    scan_secrets: bool = True,
    generated_at: dt.datetime | None = None,
) -> SiteBuild:
    """Every page; recipes whose flags have errors are left out and listed in `refused`.

    Large catalogues are prepared in two processes (see catalogue.site.forking); with `rebuilds`, only
    recipes whose files changed since the last build are prepared again. `releases`: the committed
    release snapshots each recipe's drift row is checked against (all of them when not given).
    `tolerant` (live preview): a recipe that does not load gets a page showing its one-line error,
    and is listed in `refused`; otherwise its error stops the build. `scan_secrets=False`: the MkDocs build, whose
    run files `catalogue validate` / `check-changes` scanned (`catalogue export` keeps the scan). `generated_at`: each
    published recipe's API and sparkrun texts are made with its page, on both cores (`published_files` writes them).
    """
    checker = checker or upstream_checker()
    releases = release_checkers() if releases is None else releases
    checked_on = today or dt.date.today()
    compile_templates()  # once, before the batches fork
    with gc_paused():
        folders = [folder for _, folder in sorted(recipe_folders(roots).items())]
        context = _check_context(checker, checked_on) if rebuilds else ()
        kept, stale = rebuilds.reuse(folders, context) if rebuilds else ({}, folders)
        fresh = dict(
            zip(
                stale,
                split_map(
                    lambda batch: prepare(batch, checker, checked_on, releases, tolerant, scan_secrets, generated_at),
                    stale,
                ),
            )
        )
        prepared = [kept.get(folder) or fresh[folder] for folder in folders]
        if rebuilds:
            rebuilds.remember(folders, prepared)
        broken = [p for p in prepared if isinstance(p, Broken)]
        good = [p for p in prepared if isinstance(p, Prepared)]
        refused = [b.error for b in broken] + [str(f) for p in good for f in p.validation.errors]
        publishable = [p for p in good if not p.validation.errors]
        if tolerant:
            broken += [
                Broken(p.entry.folder, "\n".join(str(f) for f in p.validation.errors), recipe_path(p.entry))
                for p in good
                if p.validation.errors
            ]
        jobs = page_jobs(
            [p.entry for p in publishable],
            {p.entry.id: p.validation for p in publishable},
            {p.entry.id: p.parts for p in publishable if p.parts is not None},
            rebuilds.rendered_pages(publishable) if rebuilds else None,
            rebuilds.index_rows(publishable) if rebuilds else {p.entry.id: p.row for p in publishable if p.row},
            rebuilds.shared if rebuilds else None,
        )
        # in this process: a fork now, with the batch loaded, copies every memory page either side touches; halving the
        # jobs' 0.25 s of work that way took 0.4-0.6 s at 1,000 recipes
        pages = [job() for job in jobs] + [b.page() for b in broken]
        by_path = {page.path: page for page in pages}
        if rebuilds:
            compared = compared_ids(comparison_groups([p.entry for p in publishable]))
            rebuilds.remember_pages(publishable, by_path, compared)
            rebuilds.shared.remember(by_path)
    texts = {p.entry.id: p.published for p in publishable if p.published is not None}
    return SiteBuild(by_path, checker.source, refused, [(p.entry, p.validation) for p in publishable], texts)


def published_files(
    build: SiteBuild,
    generated_at: dt.datetime,
    api_kept: api.KeptDocuments | None = None,
    sparkrun_kept: dict[str, tuple[Entry, str]] | None = None,
) -> dict[str, str]:
    """Path -> text of the JSON API (catalogue.site.api) and the sparkrun files (catalogue.publish.sparkrun_export)
    of the build's recipes: the texts `generate` made with the pages are handed to both as already written for
    the same entry and check, so only the index is made here. `api_kept`, `sparkrun_kept`: a serve process's."""
    api_kept = api_kept if api_kept is not None else api.KeptDocuments()
    sparkrun_kept = sparkrun_kept if sparkrun_kept is not None else {}
    for entry, validation in build.recipes:
        texts = build.published.get(entry.id)
        if texts is not None:
            api_kept.recipes[entry.id] = (entry, validation, texts.index, texts.document)
            sparkrun_kept[entry.id] = (entry, texts.sparkrun)
    documents = api.api_documents(build.recipes, generated_at, kept=api_kept)
    return documents | sparkrun_files([entry for entry, _ in build.recipes], sparkrun_kept)
