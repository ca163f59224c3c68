"""`catalogue stale`: the selection step of the scheduled refresh (.github/workflows/refresh.yml), on fixed dates."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from catalogue.commands.cli import main

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "refresh.yml"

SOLO = ["solo-march", "solo-may", "solo-never", "solo-undated"]
PAIR = ["cluster-march", "replicas-march"]


def copy(root: Path, seed: str, recipe_id: str) -> Path:
    folder = root / recipe_id
    shutil.copytree(REPO / "recipes" / seed, folder)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A catalogue with known dates: May 6 and March 22 2026, an undated import, no run; 1 and 2 nodes; and two
    recipes the refresh cannot take (unpublished, no image)."""
    root = tmp_path / "recipes"
    copy(root, "gptoss-120b", "solo-may")  # measured 2026-05-06
    copy(root, "gptoss-120b-topology-solo", "solo-march")  # 2026-03-22
    copy(root, "gptoss-120b-ngc-2509", "solo-undated")  # imported; the source gives no date
    shutil.rmtree(copy(root, "gptoss-120b-topology-solo", "solo-never") / "runs")
    copy(root, "gptoss-120b-topology-cluster-tp2", "cluster-march")  # 2 nodes, 2026-03-22
    copy(root, "gptoss-120b-topology-2x-shuffle", "replicas-march")  # 2 replicas, 2026-03-22
    draft = copy(root, "gptoss-120b-topology-solo", "draft") / "recipe.yaml"
    draft.write_text(draft.read_text() + "publish: false\n")
    bare = copy(root, "gptoss-120b-topology-solo", "no-image") / "recipe.yaml"
    lines = bare.read_text().splitlines(keepends=True)
    keep = [line for line in lines if not line.startswith(("  image", "    mxfp4-layers: vllm-node"))]
    bare.write_text("".join(keep))
    return root


def stale(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    code = main(["--root", str(root), "stale", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_every_stale_recipe_by_id(root, capsys):
    code, ids, err = stale(root, capsys, "--days", "30", "--today", "2026-11-25")
    assert code == 0
    assert ids == sorted(SOLO + PAIR)  # never the unpublished recipe nor the one without an image
    assert "solo-may: newest run 2026-05-06, 203 day(s) old; 1 node(s)" in err.splitlines()
    assert "solo-never: no run yet; 1 node(s)" in err.splitlines()
    assert "solo-undated: no run says when it was measured; 1 node(s)" in err.splitlines()
    assert "cluster-march: newest run 2026-03-22, 248 day(s) old; 2 node(s)" in err.splitlines()


def test_a_run_exactly_n_days_old_is_fresh(root, capsys):
    # 2026-06-05 is 30 days after 2026-05-06.
    assert "solo-may" not in stale(root, capsys, "--days", "30", "--today", "2026-06-05")[1]
    assert "solo-may" in stale(root, capsys, "--days", "29", "--today", "2026-06-05")[1]


def test_n_days_decides_between_the_dated_runs(root, capsys):
    code, ids, _ = stale(root, capsys, "--days", "100", "--today", "2026-07-01")
    # May 6 is 56 days old, March 22 is 101: only the March runs, and those with no (dated) run.
    assert code == 0
    assert ids == ["cluster-march", "replicas-march", "solo-march", "solo-never", "solo-undated"]


def test_a_run_measured_today_is_fresh_even_at_zero_days(root, capsys):
    assert "solo-may" not in stale(root, capsys, "--days", "0", "--today", "2026-05-06")[1]
    assert "solo-may" in stale(root, capsys, "--days", "0", "--today", "2026-05-07")[1]


def test_node_counts(root, capsys):
    assert stale(root, capsys, "--today", "2026-11-25", "--nodes", "1")[1] == SOLO
    assert stale(root, capsys, "--today", "2026-11-25", "--nodes", "2")[1] == PAIR  # cluster TP=2 and 2 replicas
    assert stale(root, capsys, "--today", "2026-11-25", "--nodes", "3")[1] == []


def test_named_ids_are_taken_whatever_their_age_in_the_given_order(root, capsys):
    code, ids, err = stale(root, capsys, "--ids", "solo-may,cluster-march", "--days", "30", "--today", "2026-05-06")
    assert code == 0
    assert ids == ["solo-may", "cluster-march"]
    assert "solo-may: named; 1 node(s)" in err.splitlines()


def test_named_ids_are_split_by_node_count(root, capsys):
    named = ("--ids", " solo-may, cluster-march,,solo-may ", "--today", "2026-05-06")
    assert stale(root, capsys, *named, "--nodes", "1")[1] == ["solo-may"]
    assert stale(root, capsys, *named, "--nodes", "2")[1] == ["cluster-march"]


def test_an_empty_ids_input_names_nothing(root, capsys):
    # The scheduled run passes the empty dispatch input: every stale recipe.
    assert stale(root, capsys, "--ids", "", "--days", "30", "--today", "2026-11-25")[1] == sorted(SOLO + PAIR)


def test_an_unknown_id_is_one_line_and_exit_1(root, capsys):
    code, ids, err = stale(root, capsys, "--ids", "solo-may,no-such-recipe", "--today", "2026-11-25")
    assert code == 1
    assert ids == []
    assert err.splitlines() == [f"error: no-such-recipe: no recipe with this id under {root}"]


def test_a_named_unpublished_recipe_is_refused_naming_file_and_field(root, capsys):
    code, ids, err = stale(root, capsys, "--ids", "draft", "--today", "2026-11-25")
    assert (code, ids) == (1, [])
    assert len(err.splitlines()) == 1
    assert err.startswith(f"error: {root / 'draft' / 'recipe.yaml'}:")
    assert "publish: is false" in err


def test_a_named_recipe_without_an_image_is_refused_naming_file_and_field(root, capsys):
    code, ids, err = stale(root, capsys, "--ids", "no-image", "--today", "2026-11-25")
    assert (code, ids) == (1, [])
    assert len(err.splitlines()) == 1
    assert f"{root / 'no-image' / 'recipe.yaml'}" in err
    assert "serving.image: is missing" in err


def test_negative_days_are_refused(root, capsys):
    code, ids, err = stale(root, capsys, "--days", "-1", "--today", "2026-11-25")
    assert (code, ids) == (1, [])
    assert err == "error: --days: must be 0 or more, not -1\n"


def test_a_bad_date_is_a_usage_error(root, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--root", str(root), "stale", "--today", "25/11/2026"])
    assert exit_.value.code == 2
    assert "not a date (YYYY-MM-DD)" in capsys.readouterr().err


def test_the_workflow_selects_with_this_command_per_node_count():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == {"schedule", "workflow_dispatch"}  # never a pull request on a self-hosted runner
    assert set(triggers["workflow_dispatch"]["inputs"]) == {"recipes", "days"}
    assert workflow["permissions"] == {}
    select = workflow["jobs"]["select"]
    script = select["steps"][-1]["run"]
    assert 'catalogue stale --days "$DAYS" --ids "$IDS" --nodes 1' in script
    assert 'catalogue stale --days "$DAYS" --ids "$IDS" --nodes 2' in script
    jobs = workflow["jobs"]
    assert jobs["single"]["runs-on"] == ["self-hosted", "dgx-spark"]
    assert jobs["pair"]["runs-on"] == ["self-hosted", "dgx-spark-pair"]
    assert (jobs["single"]["env"]["NODES"], jobs["pair"]["env"]["NODES"]) == (1, 2)
    for job in jobs.values():
        assert "permissions" in job
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False
