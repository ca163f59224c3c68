"""`catalogue stale --days N [--ids a,b] [--nodes K]`: which recipes the scheduled refresh re-measures.

Only published recipes with a serving image can be refreshed on a Spark runner. Without `--ids`, a recipe is stale
when its newest run was measured more than N days before today, or when no run says when it was measured (an import
whose source gives no date), or when it has no run at all. Named ids are taken
whatever their age; a named recipe that cannot be refreshed is an error. `--nodes K` keeps the recipes whose
topology uses K machines (`.github/workflows/refresh.yml` runs one job per machine count). The ids go to stdout, one
a line; why each was chosen goes to stderr."""

from __future__ import annotations

import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path

from catalogue.models.errors import CatalogueError, yaml_line
from catalogue.models.loading import RECIPE_FILE, Entry, load_catalogue
from catalogue.models.topology import node_count


@dataclass(frozen=True)
class Choice:
    """One recipe picked for a refresh, and why."""

    id: str
    reason: str


def refreshable(entry: Entry) -> str | None:
    """Why the entry cannot be refreshed on a Spark runner (the field at fault), or None when it can."""
    if not entry.recipe.publish:
        return "publish"
    if entry.recipe.serving.image is None:
        return "serving.image"
    return None


def refusal(entry: Entry, field: str) -> CatalogueError:
    """A named recipe the scheduled refresh cannot take: one line naming its file, field and line."""
    path = entry.folder / RECIPE_FILE
    message = {
        "publish": "is false: the scheduled refresh only takes published recipes",
        "serving.image": "is missing: the scheduled refresh runs recipes in their image",
    }[field]
    try:
        line = yaml_line(path.read_text(encoding="utf-8"), tuple(field.split(".")))
    except OSError:
        line = None
    return CatalogueError(path, message, field, line)


def age_reason(entry: Entry, days: int, today: dt.date) -> str | None:
    """Why the entry is stale, or None when it is fresh. Stale: no run, no run with a measurement date (an import
    whose source does not say), or a newest measurement more than `days` before `today`."""
    if not entry.runs:
        return "no run yet"
    newest = entry.verified
    if newest is None:
        return "no run says when it was measured"
    age = (today - newest).days
    return f"newest run {newest.isoformat()}, {age} day(s) old" if age > days else None


def choose(
    entries: list[Entry], days: int, today: dt.date, named: bool = False, nodes: int | None = None
) -> list[Choice]:
    """The entries to refresh, in the given order. `named`: every entry was asked for by id (age ignored)."""
    chosen = []
    for entry in entries:
        field = refreshable(entry)
        if field is not None:
            if named:
                raise refusal(entry, field)
            continue
        count = node_count(entry.recipe)
        if nodes is not None and count != nodes:
            continue
        reason = "named" if named else age_reason(entry, days, today)
        if reason is not None:
            chosen.append(Choice(entry.id, f"{reason}; {count} node(s)"))
    return chosen


def run_stale(roots: list[Path], days: int, ids: list[str], nodes: int | None, today: dt.date | None) -> int:
    """Print the ids to refresh, one a line (stdout), each with its reason (stderr)."""
    if days < 0:
        raise CatalogueError("--days", f"must be 0 or more, not {days}")
    if nodes is not None and nodes < 1:
        raise CatalogueError("--nodes", f"must be 1 or more, not {nodes}")
    entries = load_catalogue(roots, ids or None)
    when = today or dt.datetime.now(dt.UTC).date()
    for choice in choose(entries, days, when, named=bool(ids), nodes=nodes):
        print(choice.id)
        print(f"{choice.id}: {choice.reason}", file=sys.stderr)
    return 0
