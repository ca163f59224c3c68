"""A run dated in the future, or measured after it was recorded, is one error naming the file and the field, in
`validate` and in `check-changes` (catalogue.models.loading.refuse_future): the newest date picks a page's headline
run and hides a recipe from `stale`."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import CLOCK_SKEW, parse_run, refuse_future
from tests.test_check_changes import check, clone_with_change

REPO = Path(__file__).resolve().parents[1]
RECIPE = "gptoss-120b"
IMPORTED = REPO / "recipes" / "gemma4-26b-a4b-fp8-eugr-solo" / "runs" / "20260406T000000Z.json"
NOW = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.UTC)


def _dated(runs: Path, when: dt.datetime) -> Path:
    """The recipe's run file moved to the name of `when`, its recorded_at set to it."""
    (old,) = runs.glob("*.json")
    data = json.loads(old.read_text())
    data["recorded_at"] = when.isoformat()
    new = runs / f"{when:%Y%m%dT%H%M%SZ}.json"
    old.unlink()
    new.write_text(json.dumps(data, indent=2))
    return new


def test_a_run_recorded_beyond_the_clock_skew_is_refused_and_within_it_passes():
    run = parse_run(IMPORTED)
    late = run.model_copy(update={"recorded_at": NOW + CLOCK_SKEW + dt.timedelta(minutes=1)})
    with pytest.raises(CatalogueError) as caught:
        refuse_future(IMPORTED, late, NOW)
    assert caught.value.field == "recorded_at" and "in the future" in str(caught.value)
    refuse_future(IMPORTED, run.model_copy(update={"recorded_at": NOW + CLOCK_SKEW}), NOW)


def test_an_import_measured_after_it_was_recorded_is_refused_on_its_source_date():
    run = parse_run(IMPORTED)
    later = (run.recorded_at + CLOCK_SKEW + dt.timedelta(days=1)).date()
    moved = run.model_copy(update={"provenance": run.provenance.model_copy(update={"source_date": later})})
    with pytest.raises(CatalogueError) as caught:
        refuse_future(IMPORTED, moved, NOW)
    assert caught.value.field == "provenance.source_date" and str(later) in str(caught.value)
    local = (run.recorded_at + CLOCK_SKEW).date()  # a source a time zone ahead of UTC
    refuse_future(
        IMPORTED, run.model_copy(update={"provenance": run.provenance.model_copy(update={"source_date": local})}), NOW
    )


def test_validate_names_a_run_file_dated_2099(tmp_path, capsys):
    shutil.copytree(REPO / "recipes" / RECIPE, tmp_path / RECIPE)
    path = _dated(tmp_path / RECIPE / "runs", dt.datetime(2099, 12, 31, tzinfo=dt.UTC))
    assert main(["--root", str(tmp_path), "validate"]) != 0
    out = capsys.readouterr()
    errors = [line for line in (out.out + out.err).splitlines() if "in the future" in line]
    assert len(errors) == 1 and path.name in errors[0] and "recorded_at" in errors[0], out


def test_check_changes_names_a_run_file_dated_2099(tmp_path):
    work = clone_with_change(tmp_path, {})
    path = _dated(work / "recipes" / RECIPE / "runs", dt.datetime(2099, 12, 31, tzinfo=dt.UTC))
    done = check(work)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [t for t in done.stdout.splitlines() if t.startswith("error: ")]
    assert len(errors) == 1 and path.name in errors[0] and "recorded_at" in errors[0], done.stdout
