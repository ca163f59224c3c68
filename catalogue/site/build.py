"""One call that the MkDocs hook and `catalogue export` share: load -> validate -> render."""

from __future__ import annotations

import datetime as dt
import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from catalogue.flags.checkers import ArgvChecker
from catalogue.flags.select import upstream_checker, validate_entries
from catalogue.forking import split_map
from catalogue.loading import Entry, load_entry, recipe_folders
from catalogue.site.page import Page
from catalogue.site.pages import page_jobs, recipe_body
from catalogue.site.view import Validation


@dataclass(frozen=True)
class SiteBuild:
    """Generated pages plus what the build must say about them."""

    pages: dict[str, Page]
    checked_against: str
    refused: list[str]


@dataclass(frozen=True)
class Prepared:
    """One recipe loaded, its flags checked and, when publishable, its page body rendered."""

    entry: Entry
    validation: Validation
    body: str | None


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


def prepare(folders: Sequence[Path], checker: ArgvChecker, checked_on: dt.date) -> list[Prepared]:
    """Load, validate and render the bodies of a batch of recipe folders."""
    entries = [load_entry(folder) for folder in folders]
    findings = validate_entries(entries, checker)
    out = []
    for entry in entries:
        validation = Validation(checker.snapshot.vllm_version, checked_on, checker.source, findings[entry.id])
        out.append(Prepared(entry, validation, None if validation.errors else recipe_body(entry, validation)))
    return out


def generate(roots: list[Path], checker: ArgvChecker | None = None, today: dt.date | None = None) -> SiteBuild:
    """Every page; recipes whose flags have errors are left out and listed in `refused`.

    Large catalogues are prepared in two processes (see catalogue.forking).
    """
    checker = checker or upstream_checker()
    checked_on = today or dt.date.today()
    with gc_paused():
        folders = [folder for _, folder in sorted(recipe_folders(roots).items())]
        prepared = split_map(lambda batch: prepare(batch, checker, checked_on), folders)
        refused = [str(f) for p in prepared for f in p.validation.errors]
        publishable = [p for p in prepared if not p.validation.errors]
        jobs = page_jobs(
            [p.entry for p in publishable],
            {p.entry.id: p.validation for p in publishable},
            {p.entry.id: p.body for p in publishable if p.body is not None},
        )
        pages = split_map(lambda batch: [job() for job in batch], jobs)
    return SiteBuild({page.path: page for page in pages}, checker.source, refused)
