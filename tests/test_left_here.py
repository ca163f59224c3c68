"""runner.recording.left_here: the mark the runner keeps, outside the repository, for each run file it left
incomplete; `--resume` finishes only a run file whose bytes still match its mark."""

from __future__ import annotations

import json

import pytest

from catalogue.models.loading import parse_run
from runner.recording import left_here
from runner.recording.record import write_run
from tests.site_support import REPO

RUN = REPO / "examples" / "tiny-cpu" / "runs" / "20261125T071129Z.json"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CATALOGUE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_run_file_the_runner_left_incomplete_is_marked_and_a_complete_one_is_not(tmp_path, cache):
    path = tmp_path / "runs" / RUN.name
    run = parse_run(RUN, scan_secrets=False)
    write_run(run.model_copy(update={"complete": False, "incomplete_reason": "interrupted (Ctrl-C)"}), path)
    assert left_here.why_not_here(path) is None
    assert left_here.marks_dir().is_relative_to(cache) and len(list(left_here.marks_dir().iterdir())) == 1
    write_run(run, path)  # resumed and finished: the mark goes
    assert "did not leave it" in (left_here.why_not_here(path) or "")
    assert list(left_here.marks_dir().iterdir()) == []


def test_a_run_file_copied_in_or_edited_after_the_runner_wrote_it_is_not_here(tmp_path):
    path = tmp_path / "runs" / RUN.name
    path.parent.mkdir()
    data = json.loads(RUN.read_text())
    path.write_text(json.dumps({**data, "complete": False, "incomplete_reason": "interrupted"}))
    assert "no local record" in (left_here.why_not_here(path) or "")  # committed, pulled or copied: no mark
    text = path.read_text()
    left_here.remember(path, text, complete=False)
    assert left_here.why_not_here(path) is None
    path.write_text(text.replace('"complete": false', '"complete": false '))
    assert left_here.why_not_here(path) == "changed since this machine's runner wrote it"
