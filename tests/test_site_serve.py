"""`mkdocs serve --dirty` (as `nox -s serve` runs it) shows a YAML edit without a restart, and a removed
recipe's page goes; rebuilds prepare only what changed."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from catalogue.flags.select import upstream_checker
from catalogue.site.build import Rebuilds, generate
from tests.site_support import REPO


def _served_text(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode()
    except OSError:
        return ""


def _wait_for(url: str, text: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in _served_text(url):
            return True
        time.sleep(0.05)
    return False


def test_serve_shows_a_yaml_edit_without_restart(recipe_copy, tmp_path):
    root, folder = recipe_copy()
    log = (tmp_path / "serve.log").open("w")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "CATALOGUE_RECIPE_ROOTS": os.pathsep.join([str(root), str(REPO / "examples")]),
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "--dirty", "-a", f"127.0.0.1:{port}"],  # as `nox -s serve`
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/recipes/gptoss-120b/"
    try:
        assert _wait_for(url, "concurrency-first", 120), (tmp_path / "serve.log").read_text()[-2000:]
        recipe = folder / "recipe.yaml"
        good = recipe.read_text()
        recipe.write_text(good.replace("(concurrency-first)", "(edited while serving)", 1))
        assert _wait_for(url, "edited while serving", 30), (tmp_path / "serve.log").read_text()[-2000:]
        # a YAML syntax error: the page being previewed shows the one-line error, the server keeps running
        recipe.write_text(good.replace("title: ", "title: [unclosed ", 1))
        assert _wait_for(url, "This recipe does not load", 30), (tmp_path / "serve.log").read_text()[-2000:]
        page = _served_text(url)
        assert "recipe.yaml" in page and "Traceback" not in page and server.poll() is None
        recipe.write_text(good)
        assert _wait_for(url, "concurrency-first", 30) and server.poll() is None
        # a recipe removed: its page is gone from the dirty site folder, not left behind
        shutil.rmtree(folder)
        deadline = time.monotonic() + 30
        while "concurrency-first" in _served_text(url) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "concurrency-first" not in _served_text(url) and server.poll() is None
        log_text = (tmp_path / "serve.log").read_text()
        assert "Traceback" not in log_text and "Aborted" not in log_text
        assert "A 'dirty' build is being performed" not in log_text and "dirty preview" in log_text
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def test_rebuilds_prepare_only_changed_recipes(tmp_path, recipe_copy):
    root, folder = recipe_copy()
    checker, today, rebuilds = upstream_checker(), dt.date(2026, 11, 22), Rebuilds()
    generate([root], checker, today, rebuilds)
    first, row = rebuilds.prepared[folder][1], rebuilds.rows["gptoss-120b"][1]
    generate([root], checker, today, rebuilds)
    assert rebuilds.prepared[folder][1] is first and rebuilds.rows["gptoss-120b"][1] is row  # index row kept
    recipe = folder / "recipe.yaml"
    recipe.write_text(recipe.read_text().replace("(concurrency-first)", "(edited)", 1))
    build = generate([root], checker, today, rebuilds)
    assert rebuilds.prepared[folder][1] is not first and "(edited)" in build.pages["recipes/gptoss-120b.md"].title
    assert rebuilds.rows["gptoss-120b"][1] is not row and "(edited)" in build.pages["index.md"].body
    generate([root], checker, dt.date(2026, 11, 23), rebuilds)
    assert rebuilds.prepared[folder][1].validation.checked_on == dt.date(2026, 11, 23)


def test_serve_sees_a_new_snapshot(tmp_path, repo, monkeypatch):
    """The checkers a long-lived process keeps are made again when a release snapshot is added or changed."""
    (tmp_path / "snapshots").mkdir()
    for version in ("0.31.0", "0.32.0"):
        shutil.copy(repo / "snapshots" / f"vllm-{version}.json", tmp_path / "snapshots")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CATALOGUE_FLAGS_SNAPSHOT", str(tmp_path / "snapshots" / "vllm-0.32.0.json"))
    rebuilds = Rebuilds()
    checker, releases, fresh = rebuilds.current_checkers()
    assert fresh and [r.snapshot.vllm_version for r in releases] == ["0.31.0", "0.32.0"]
    again, _, fresh = rebuilds.current_checkers()
    assert not fresh and again is checker
    shutil.copy(repo / "snapshots" / "vllm-0.33.0.json", tmp_path / "snapshots")
    _, releases, fresh = rebuilds.current_checkers()
    assert fresh and [r.snapshot.vllm_version for r in releases] == ["0.31.0", "0.32.0", "0.33.0"]
