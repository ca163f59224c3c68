"""The runner's static gate: with --local, flags that read paths and path variables are judged against this host."""

from __future__ import annotations

import yaml

from catalogue.commands.cli import main
from catalogue.models.loading import load_entry
from runner.planning.plan import make_plan
from runner.planning.policy_gate import LOCAL_REASON, findings


def _with_flags(folder, **flags) -> None:
    path = folder / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    data["serving"]["flags"].update(flags)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_local_judges_a_path_flag_against_this_host(recipe_copy, capsys):
    root, folder = recipe_copy()
    _with_flags(folder, **{"chat-template": "/etc/shadow"})
    entry = load_entry(folder)
    in_image = [f.line() for f in findings(entry, make_plan(entry)) if "chat-template" in f.option]
    assert in_image == []  # the image's /etc/shadow: the container reads its own files
    here = [f for f in findings(entry, make_plan(entry, local=True)) if "chat-template" in f.option]
    assert [(f.cls, f.option) for f in here] == [("never", "--chat-template /etc/shadow")]
    assert here[0].lineno is not None and here[0].why == "reads the host's /etc, a system folder"
    before = sorted(p.name for p in (folder / "runs").iterdir())
    assert main(["--root", str(root), "refresh", "gptoss-120b", "--local"]) == 1
    err = capsys.readouterr().err
    assert f"{folder / 'recipe.yaml'}:{here[0].lineno}: never: --chat-template /etc/shadow: reads the host" in err
    assert sorted(p.name for p in (folder / "runs").iterdir()) == before


def test_local_asks_the_owner_for_each_host_path_a_flag_reads(recipe_copy):
    _, folder = recipe_copy()
    _with_flags(folder, **{"hf-config-path": "/srv/weights"})
    entry = load_entry(folder)
    assert not [f for f in findings(entry, make_plan(entry)) if "hf-config-path" in f.option]
    here = [f for f in findings(entry, make_plan(entry, local=True)) if "hf-config-path" in f.option]
    assert [(f.cls, f.option, f.reason) for f in here] == [("consent", "--hf-config-path", LOCAL_REASON)]
    assert not here[0].is_error  # declared by --local; the owner still allows it by name


def test_local_never_lets_a_flag_write_on_the_owners_machine(recipe_copy):
    """A path vLLM writes (here the download folder) is the container's own file in a container; with --local it
    would be any file of the owner's: never (catalogue.policy.written_paths)."""
    _, folder = recipe_copy()
    _with_flags(folder, **{"download-dir": "/srv/weights"})
    entry = load_entry(folder)
    assert not [f for f in findings(entry, make_plan(entry)) if "download-dir" in f.option]
    here = [f for f in findings(entry, make_plan(entry, local=True)) if "download-dir" in f.option]
    assert [(f.cls, f.option) for f in here] == [("never", "--download-dir /srv/weights")]


def test_local_judges_a_path_variable_against_this_host(recipe_copy):
    """In the image HF_HOME and HOME are the container's own folders; with --local they are this host's."""
    _, folder = recipe_copy()
    path = folder / "recipe.yaml"
    data = yaml.safe_load(path.read_text())
    data["serving"]["env"].update({"HF_HOME": "/srv/hf", "HOME": "/root/.ssh"})
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    entry = load_entry(folder)
    paths = ("HF_HOME ", "HOME ")  # HOME itself is consent in both places (check_env); here: the folders reached
    assert not [f for f in findings(entry, make_plan(entry)) if f.option.startswith(paths)]
    here = [f for f in findings(entry, make_plan(entry, local=True)) if f.option.startswith(paths)]
    assert sorted((f.cls, f.option, f.reason) for f in here) == [
        ("consent", "HF_HOME /srv/hf", LOCAL_REASON),
        ("never", "HOME /root/.ssh", None),
    ]
    assert all(f.lineno is not None and f.source == str(path) for f in here)


def test_remote_code_is_a_note_in_a_container_and_consent_on_this_host(recipe_copy):
    """--trust-remote-code runs the model repository's code: inside the image a note on the page; with --local on the
    owner's machine, so the owner allows it by name (declared by --local itself)."""
    _, folder = recipe_copy()
    _with_flags(folder, **{"trust-remote-code": True})
    entry = load_entry(folder)
    in_image = [f for f in findings(entry, make_plan(entry)) if f.option == "--trust-remote-code"]
    assert [f.cls for f in in_image] == ["note"]
    here = [f for f in findings(entry, make_plan(entry, local=True)) if f.option == "--trust-remote-code"]
    assert [(f.cls, f.reason) for f in here if f.cls != "note"] == [("consent", LOCAL_REASON)]
    assert "on your machine" in here[-1].why and here[-1].lineno is not None
