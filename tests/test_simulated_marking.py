"""Simulated runs are never shown as measured: the site build marks them on the page and in api/v1, and their
workload never equals a measured one (so no comparison or regression check pairs them)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from catalogue.flags.drift import release_checkers
from catalogue.models.benchmark import BenchmarkRun
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import load_entry
from catalogue.site.api import INDEX_PATH, api_documents, recipe_document_path
from catalogue.site.build import generate
from catalogue.site.urls import recipe_path
from tests.site_support import REPO

WHEN = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.UTC)
MEASURED = REPO / "examples" / "tiny-cpu-capacity" / "runs" / "20261126T113135Z.json"
BANNER = '<span class="rc-badge rc-incomplete">simulated</span>'


def _simulated_copy(run: Path, target: Path, profile: str = "ci") -> None:
    data = json.loads(run.read_text())
    data["workload"]["simulator"] = profile
    data["recorded_at"] = "2026-11-27T08:00:00+00:00"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A published recipe with one measured run and one simulated run, the simulator example, and a measured-only
    recipe: built as the site builds them."""
    root = tmp_path_factory.mktemp("roots")
    published = root / "recipes" / "tiny-published"
    shutil.copytree(REPO / "examples" / "tiny-cpu-capacity", published)
    text = (published / "recipe.yaml").read_text().replace("publish: false", "publish: true")
    (published / "recipe.yaml").write_text(text.replace("model_path: ../tiny-cpu/model", "model_path: model"))
    _simulated_copy(MEASURED, published / "runs" / "20261127T080000Z.json")
    measured = root / "recipes" / "tiny-measured"
    shutil.copytree(published, measured)
    (measured / "runs" / "20261127T080000Z.json").unlink()
    shutil.copytree(
        REPO / "examples" / "sim-tiny", root / "examples" / "sim-tiny", ignore=shutil.ignore_patterns("runs")
    )
    _simulated_copy(MEASURED, root / "examples" / "sim-tiny" / "runs" / "20261127T080000Z.json")
    releases = release_checkers()
    build = generate([root / "recipes", root / "examples"], releases[-1], releases=releases)
    return build, api_documents(build.recipes, WHEN)


def _body(build, recipe_id: str) -> str:
    entry = next(e for e, _ in build.recipes if e.id == recipe_id)
    return build.pages[recipe_path(entry)].markdown()  # the banner leads the page, above its summary


def test_the_page_of_a_recipe_with_a_simulated_run_says_so(site):
    build, _ = site
    body = _body(build, "tiny-published")
    assert BANNER in body and "from a run marked simulated" in body
    assert "SIMULATED" in body  # its row in the run history, and its workload in words
    assert BANNER not in _body(build, "tiny-measured")


def test_the_simulator_example_page_says_so(site):
    build, _ = site
    body = _body(build, "sim-tiny")
    assert BANNER in body and "comes from the project's simulator" in body


def test_api_marks_the_recipe_and_the_run(site):
    _, documents = site
    index = {row["id"]: row for row in json.loads(documents[INDEX_PATH])["recipes"]}
    assert index["tiny-published"]["simulated"] is True
    assert index["tiny-measured"]["simulated"] is False
    assert "sim-tiny" not in index  # an example, never published
    document = json.loads(documents[recipe_document_path("tiny-published")])
    assert document["simulated"] is True
    by_id = {run["id"]: run for run in document["runs"]}
    assert by_id["20261127T080000Z"]["simulated"] is True
    assert by_id["20261127T080000Z"]["workload"]["simulator"] == "ci"
    assert by_id["20261126T113135Z"]["simulated"] is False


def test_a_simulated_workload_never_equals_a_measured_one():
    measured = BenchmarkRun.model_validate_json(MEASURED.read_text())
    assert measured.workload is not None and not measured.from_simulator
    simulated = measured.workload.model_copy(update={"simulator": "ci"})
    assert simulated.key != measured.workload.key
    assert "SIMULATED" in simulated.describe()


def test_a_simulated_recipe_is_never_published(tmp_path):
    folder = tmp_path / "sim-tiny"
    shutil.copytree(REPO / "examples" / "sim-tiny", folder, ignore=shutil.ignore_patterns("runs"))
    path = folder / "recipe.yaml"
    path.write_text(path.read_text().replace("publish: false", "publish: true"))
    with pytest.raises(CatalogueError, match="simulated recipe is a test instrument"):
        load_entry(folder)
