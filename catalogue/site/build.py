"""One call that the MkDocs hook and `catalogue export` share: load -> validate -> render."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from catalogue.flags.checkers import ArgvChecker
from catalogue.flags.select import upstream_checker, validate_entries
from catalogue.loading import load_catalogue
from catalogue.site.pages import build_pages
from catalogue.site.view import Validation


@dataclass(frozen=True)
class SiteBuild:
    """Generated pages plus what the build must say about them."""

    pages: dict[str, str]
    checked_against: str
    refused: list[str]


def generate(roots: list[Path], checker: ArgvChecker | None = None, today: dt.date | None = None) -> SiteBuild:
    """Every page; recipes whose flags have errors are left out and listed in `refused`."""
    entries = load_catalogue(roots)
    checker = checker or upstream_checker()
    findings = validate_entries(entries, checker)
    checked_on = today or dt.date.today()
    validations = {
        e.id: Validation(checker.snapshot.vllm_version, checked_on, checker.source, findings[e.id]) for e in entries
    }
    refused = [str(f) for e in entries for f in validations[e.id].errors]
    publishable = [e for e in entries if not validations[e.id].errors]
    return SiteBuild(build_pages(publishable, validations), checker.source, refused)
