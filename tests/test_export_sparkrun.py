"""`catalogue export --sparkrun ID`: every published recipe as a sparkrun v2 recipe that sparkrun's own
`recipe validate --strict` accepts ($CATALOGUE_SPARKRUN), whose command renders back to the catalogue's exact
`vllm serve` argv; the site and `catalogue export OUT` carry the files beside the pages."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main
from catalogue.models.launch import flags_argv
from catalogue.models.loading import load_catalogue
from catalogue.paste.sparkrun import parse_sparkrun
from catalogue.publish.sparkrun_export import SPARKRUN_CACHE_ENV, sparkrun_path
from tests.needs import tool_or_skip

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = [e for e in load_catalogue([REPO / "recipes"]) if e.recipe.publish]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("sparkrun")
    for entry in PUBLISHED:
        assert main(["--root", str(REPO / "recipes"), "export", "--sparkrun", entry.id, str(out)]) == 0
    return {entry.id: out / f"{entry.id}.yaml" for entry in PUBLISHED}


def test_every_published_recipe_exports(exported):
    assert len(exported) == len(PUBLISHED) >= 16 and all(path.is_file() for path in exported.values())


@pytest.mark.parametrize("entry", PUBLISHED, ids=lambda e: e.id)
def test_the_export_renders_back_to_the_catalogues_launch(entry, exported):
    text = exported[entry.id].read_text()
    theirs = parse_sparkrun(text, str(exported[entry.id]))
    recipe = entry.recipe
    argv = shlex.split((theirs.rendered_command() or "").replace("\\\n", " "))
    assert argv == ["vllm", "serve", recipe.model_arg, *flags_argv(recipe.serving.flags)]
    assert theirs.model == recipe.model and theirs.runtime == "vllm" and theirs.container == recipe.serving.image
    caches = set(recipe.serving.env) & SPARKRUN_CACHE_ENV  # sparkrun points these at its own mounts
    assert theirs.env == {k: v for k, v in recipe.serving.env.items() if k not in caches}
    if caches:
        assert f"# Not carried over: serving.env: {', '.join(sorted(caches))}: sparkrun sets the caches" in text
    nodes = recipe.topology.nodes if recipe.topology.kind == "cluster" else 1
    assert theirs.nodes == (nodes, nodes)
    comments = [line for line in text.splitlines() if line.startswith("# Not carried over: ")]
    if recipe.serving.container and recipe.serving.container.options:
        assert any(line.startswith("# Not carried over: serving.container.options:") for line in comments)
    if recipe.topology.kind == "replicas":
        assert any(line.startswith("# Not carried over: topology:") for line in comments)


def validate(command: str, path: Path, home: Path) -> dict:
    done = subprocess.run(
        [command, "recipe", "validate", str(path), "--strict", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(home)},  # sparkrun keeps its config and caches under ~
        check=False,
    )
    return {"returncode": done.returncode, **json.loads(done.stdout)}


@pytest.fixture(scope="module")
def sparkrun(tmp_path_factory) -> tuple[str, Path]:
    command = tool_or_skip("CATALOGUE_SPARKRUN", "sparkrun")
    return command, tmp_path_factory.mktemp("home")


@pytest.mark.parametrize("entry", PUBLISHED, ids=lambda e: e.id)
def test_sparkruns_own_validator_accepts_the_export(entry, exported, sparkrun):
    verdict = validate(*sparkrun[:1], exported[entry.id], sparkrun[1])
    assert verdict["returncode"] == 0 and verdict["valid"] and not verdict["failed"], verdict
    assert verdict["errors"] == verdict["warnings"] == 0, verdict["issues"]


def test_sparkruns_validator_refuses_an_export_without_its_model(exported, sparkrun, tmp_path):
    data = yaml.safe_load(next(iter(exported.values())).read_text())
    del data["model"]
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(data))
    verdict = validate(sparkrun[0], broken, sparkrun[1])
    assert verdict["returncode"] == 1 and not verdict["valid"]


def test_an_unknown_recipe_is_one_line_and_writes_nothing(tmp_path, capsys):
    assert main(["--root", str(REPO / "recipes"), "export", "--sparkrun", "no-such", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == "error: no-such: no such recipe in " + str(REPO / "recipes")
    assert list(tmp_path.iterdir()) == []


def test_a_file_path_is_written_as_named(tmp_path, capsys):
    target = tmp_path / "mine.yaml"
    assert main(["--root", str(REPO / "recipes"), "export", "--sparkrun", "gptoss-120b", str(target)]) == 0
    out = capsys.readouterr().out
    assert target.read_text().startswith("# sparkrun recipe (format v2) of the catalogue recipe gptoss-120b")
    assert f"{target}: not carried over: serving.container.options: not carried (-d --restart" in out


def test_the_site_export_carries_each_published_recipes_file(tmp_path):
    out = tmp_path / "site"
    assert main(["--root", str(REPO / "recipes"), "--root", str(REPO / "examples"), "export", str(out)]) == 0
    files = sorted(p.relative_to(out).as_posix() for p in (out / "sparkrun").iterdir())
    assert files == sorted(sparkrun_path(e.id) for e in PUBLISHED)
    page = (out / "recipes" / "gptoss-120b.md").read_text()
    assert 'href="../../sparkrun/gptoss-120b.yaml" download="gptoss-120b.yaml"' in page
    assert all("rc-sparkrun" not in p.read_text() for p in (out / "examples").glob("*.md"))  # no file: no link


def test_a_serve_rebuild_writes_only_the_sparkrun_files_of_changed_recipes(monkeypatch):
    """`mkdocs serve` keeps each recipe's sparkrun text while its entry is the same object (the site's rebuild cache
    keeps an entry while its files are unchanged); a new entry object is written again."""
    from catalogue.publish import sparkrun_export

    written: list[str] = []
    real = sparkrun_export.sparkrun_recipe
    monkeypatch.setattr(sparkrun_export, "sparkrun_recipe", lambda e: (written.append(e.id), real(e))[1])
    kept: dict = {}
    first = sparkrun_export.sparkrun_files(PUBLISHED, kept)
    assert sorted(written) == sorted(e.id for e in PUBLISHED)
    written.clear()
    changed = dataclasses.replace(PUBLISHED[0])
    again = sparkrun_export.sparkrun_files([changed, *PUBLISHED[1:]], kept)
    assert written == [changed.id] and again == first
    assert sparkrun_export.sparkrun_files(PUBLISHED[1:], kept) == {
        k: v for k, v in first.items() if k != sparkrun_path(changed.id)
    }


HOSTILE = {
    "revision": "v1.0",
    "served-model-name": "a b; touch /tmp/pwned",
    "chat-template": "$(touch /tmp/pwned)",
    "tokenizer": "{model_revision}",
    "revisio": "v1`id`",
    "root-path": "line1\nline2 && id",
    "response-role": 'it\'s "quoted" \\ {model}',
    "lora-modules": ["a=b c", "$(id)", "{model}"],
    "override-generation-config": '{"x": "{model} }}"}',
}
"""Flag values a stranger's recipe may hold: shell syntax, quotes, newlines and sparkrun's own `{name}` fields."""


def test_hostile_values_round_trip_through_the_template_and_the_shell(tmp_path, capsys):
    """sparkrun fills the template's fields and runs the result with `bash -c`: read as a shell reads it, it is the
    catalogue's own argv, word for word, whatever the recipe's values hold."""
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes" / "gptoss-120b", root / "gptoss-120b")
    recipe = root / "gptoss-120b" / "recipe.yaml"
    data = yaml.safe_load(recipe.read_text())
    data["serving"]["flags"] |= HOSTILE
    data["serving"]["model_path"] = "/models/x y;{model}'"
    recipe.write_text(yaml.safe_dump(data, sort_keys=False))
    entry = load_catalogue([root])[0]
    assert main(["--root", str(root), "export", "--sparkrun", "gptoss-120b", str(tmp_path / "out.yaml")]) == 0
    text = (tmp_path / "out.yaml").read_text()
    theirs = parse_sparkrun(text, "out.yaml")
    argv = shlex.split((theirs.rendered_command() or "").replace("\\\n", " "))
    assert argv == ["vllm", "serve", entry.recipe.model_arg, *flags_argv(entry.recipe.serving.flags)]
    assert argv[argv.index("--revision") + 1] == "v1.0" and theirs.model_revision == "v1.0"
    assert all(isinstance(v, (int, float)) or shlex.quote(str(v)) == str(v) for v in theirs.defaults.values())


def test_a_revision_the_model_would_refuse_is_still_one_quoted_word():
    """The exporter does not lean on the recipe's own check: a revision that is no commit or tag (set past the model's
    validation here) is a quoted literal, and no `model_revision` for sparkrun to fill in unquoted."""
    from catalogue.publish.sparkrun_export import sparkrun_recipe

    entry = next(e for e in PUBLISHED if e.id == "gptoss-120b")
    hostile = "main; touch /tmp/pwned"
    serving = entry.recipe.serving.model_copy(update={"flags": {**entry.recipe.serving.flags, "revision": hostile}})
    bent = dataclasses.replace(entry, recipe=entry.recipe.model_copy(update={"serving": serving}))
    theirs = parse_sparkrun(sparkrun_recipe(bent)[0], "out.yaml")
    argv = shlex.split((theirs.rendered_command() or "").replace("\\\n", " "))
    assert argv[argv.index("--revision") + 1] == hostile and theirs.model_revision is None
