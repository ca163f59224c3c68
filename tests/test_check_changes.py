"""The pull-request check: only changed recipes, committed snapshots, annotations, exit code; and the workflow
that runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def clone_with_change(tmp_path: Path, edit: dict[str, tuple[str, str]]) -> Path:
    """A git repo holding the catalogue; `edit` (recipe id -> (old, new) text) is committed on top."""
    work = tmp_path / "work"
    work.mkdir()
    for part in ("recipes", "snapshots"):
        shutil.copytree(REPO / part, work / part)
    git(work, "init", "-q", "-b", "main")
    git(work, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "base")
    git(work, "add", "-A")
    git(work, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "catalogue")
    git(work, "tag", "base")
    for recipe_id, (old, new) in edit.items():
        path = work / "recipes" / recipe_id / "recipe.yaml"
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))
    return work


def check(work: Path, base: str = "base") -> subprocess.CompletedProcess:
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(work / "summary.md")}
    env.pop("CATALOGUE_FLAGS_SNAPSHOT", None)
    return subprocess.run(
        [sys.executable, "-m", "catalogue", "check-changes", "--base", base],
        cwd=work,
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )


def test_a_bad_flag_in_a_changed_recipe_fails_with_an_annotation(tmp_path):
    work = clone_with_change(tmp_path, {"gptoss-120b": ("max-num-seqs: 256", "max-num-seqs: 2x")})
    done = check(work)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("1 changed recipe(s) since base; flags checked against snapshot vllm-0.33.0.json")
    assert (
        "::error file=recipes/gptoss-120b/recipe.yaml::--max-num-seqs: invalid int value: '2x' [vLLM 0.33.0]" in lines
    )
    assert "recipes/gptoss-120b/recipe.yaml: error: --max-num-seqs: invalid int value: '2x' [vLLM 0.33.0]" in lines
    assert lines[-1] == "1 recipe(s) checked: 1 error(s)"
    assert "1 error(s)" in (work / "summary.md").read_text()


def test_a_broken_recipe_file_is_one_annotated_line(tmp_path):
    work = clone_with_change(tmp_path, {"gptoss-120b-ngc-2509": ("status: ", "statuss: ")})
    done = check(work)
    assert done.returncode == 1
    assert any(
        line.startswith("::error file=recipes/gptoss-120b-ngc-2509/recipe.yaml,line=")
        for line in done.stdout.splitlines()
    ), done.stdout


def test_an_untouched_catalogue_passes_and_checks_nothing(tmp_path):
    work = clone_with_change(tmp_path, {})
    done = check(work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "0 recipe(s) checked: 0 error(s)"


def test_older_releases_refusing_a_value_is_a_warning(tmp_path):
    # ultraquant_4bit is a KV-cache dtype since vLLM 0.32: older releases refuse it, the newest accepts it
    work = clone_with_change(
        tmp_path, {"gptoss-120b-community-131k": ("kv-cache-dtype: fp8", "kv-cache-dtype: ultraquant_4bit")}
    )
    done = check(work)
    assert done.returncode == 0, done.stdout
    warned = [
        line
        for line in done.stdout.splitlines()
        if line.startswith("::warning file=recipes/gptoss-120b-community") and "refused by vLLM " in line
    ]
    assert [w.split("refused by vLLM ")[1][:4] for w in warned] == ["0.29", "0.30", "0.31"], done.stdout


def test_the_workflow_runs_the_nox_session_ci_runs():
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "pull-request.yml").read_text())
    steps = workflow["jobs"]["check"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    assert any(r.startswith("nox -s pr_check -- --base ") for r in runs)
    assert steps[0]["with"]["fetch-depth"] == 0
    assert "nox -s pr_check" in (REPO / ".ci" / "run").read_text()
    session = (REPO / "noxfile.py").read_text().split("def pr_check", 1)[1].split("@nox.session", 1)[0]
    assert "install_vllm_cpu" not in session and "--strict" in session


def test_a_kv_cache_dtype_no_release_knows_is_an_error(tmp_path):
    # vLLM 0.33 reads --kv-cache-dtype as free text and checks it after parsing against KV_CACHE_DTYPES; the
    # snapshot keeps that list as the flag's registry, so the newest release refuses the typo too
    work = clone_with_change(tmp_path, {"gptoss-120b-community-131k": ("kv-cache-dtype: fp8", "kv-cache-dtype: fp9")})
    done = check(work)
    assert done.returncode == 1, done.stdout
    assert (
        "recipes/gptoss-120b-community-131k/recipe.yaml: error: --kv-cache-dtype: 'fp9' is not a registered value "
        "(did you mean 'fp8'?) [vLLM 0.33.0]" in done.stdout.splitlines()
    ), done.stdout


def test_consent_is_a_warning_for_review_and_never_an_error(tmp_path):
    declared = (
        "    options: [-d, --restart, unless-stopped, --runtime, nvidia, --gpus, all, --ipc, host, --shm-size, 64g, "
        '-p, "8000:8000", --cap-add, IPC_LOCK]\n'
        "  consent:\n  - option: --cap-add IPC_LOCK\n    reason: RDMA pins memory\n"
    )
    work = clone_with_change(
        tmp_path,
        {
            "gptoss-120b": (
                "    options: [-d, --restart, unless-stopped, --runtime, nvidia, --gpus, all, --ipc, host, --shm-size, "
                '64g, -p, "8000:8000"]\n',
                declared,
            ),
            "gptoss-120b-ngc-2509": ("--gpus, all,", "--gpus, all, -v, '/:/host',"),
        },
    )
    done = check(work)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    warned = [line for line in lines if line.startswith("::warning file=recipes/gptoss-120b/recipe.yaml,line=")]
    assert any("consent: --cap-add IPC_LOCK: " in line for line in warned), done.stdout
    assert any(
        line.startswith("::error file=recipes/gptoss-120b-ngc-2509/recipe.yaml,line=") and "never: --volume /: " in line
        for line in lines
    ), done.stdout
    assert lines[-1] == "2 recipe(s) checked: 1 error(s)"


def test_a_secret_in_a_changed_recipe_is_an_error_with_the_value_masked(tmp_path):
    work = clone_with_change(
        tmp_path, {"gptoss-120b": ("VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8", "HF_TOKEN: hf_SeCrEtToKeN1234567890\n    X")}
    )
    done = check(work)
    assert done.returncode == 1
    assert "SeCrEt" not in done.stdout + done.stderr + (work / "summary.md").read_text()
    assert any(
        line.startswith("::error file=recipes/gptoss-120b/recipe.yaml,line=29::never: secret: ")
        for line in done.stdout.splitlines()
    ), done.stdout


def test_a_published_recipe_on_a_mutable_tag_is_a_warning(tmp_path):
    """A figure measured on `:latest` cannot be reproduced: the reviewer is told, the check still passes."""
    work = clone_with_change(
        tmp_path, {"gptoss-120b-topology-solo": ("image: vllm-node-mxfp4", "image: vllm-node-mxfp4:latest")}
    )
    done = check(work)
    assert done.returncode == 0, done.stdout + done.stderr
    path = "recipes/gptoss-120b-topology-solo/recipe.yaml"
    warnings = [line for line in done.stdout.splitlines() if line.startswith(f"::warning file={path},line=")]
    notes = [line.split("::", 2)[2].split(": ", 2)[:2] for line in warnings]
    assert notes == [["consent", "image docker.io/library/vllm-node-mxfp4"], ["note", "image vllm-node-mxfp4:latest"]]
    assert "the image is pulled by a mutable tag" in warnings[1]
    assert f"warning: {path}:" in done.stdout


HF = "hf_" + "PullRequestToken0123456789"


def test_a_changed_run_file_with_a_token_is_one_masked_error(tmp_path):
    work = clone_with_change(tmp_path, {})
    (path,) = (work / "recipes" / "gptoss-120b" / "runs").glob("*.json")
    data = json.loads(path.read_text())
    data["levels"][0]["stdev_of"] = f"export HF_TOKEN={HF}"
    path.write_text(json.dumps(data, indent=2))
    name = path.relative_to(work).as_posix()
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if HF in t)
    done = check(work)
    assert done.returncode == 1, done.stdout + done.stderr
    assert HF not in done.stdout + done.stderr + (work / "summary.md").read_text()
    errors = [t for t in done.stdout.splitlines() if t.startswith("error: ")]
    assert errors == [
        f"error: {name}:{line}: levels[0].stdev_of: a secret in the file (keyword HF_TOKEN: hf_********); "
        "the catalogue never keeps a credential: remove it from the file"
    ], done.stdout
    assert f"::error file={name},line={line}::levels[0].stdev_of: a secret in the file (" in done.stdout
    assert done.stdout.splitlines()[-1] == "1 recipe(s) checked: 1 error(s)"


def test_added_run_and_raw_files_are_read_one_line_each(tmp_path):
    work = clone_with_change(tmp_path, {})
    runs = work / "recipes" / "gptoss-120b" / "runs"
    (run,) = runs.glob("*.json")
    stamp = run.stem
    (runs / stamp).mkdir()
    (runs / stamp / "c1.json").write_text(json.dumps({"note": f"HF_TOKEN={HF}"}))
    (runs / stamp / "c2.json").write_text('{"completed": 8,\n "failed": }\n')
    (runs / stamp / "events.jsonl").write_text('{"ok": 1}\n{"ok": 2\n')
    (runs / "20990101T000000Z").mkdir()
    (runs / "20990101T000000Z" / "c1.json").write_text("{}")
    bad = json.loads(run.read_text())
    bad["recorded_at"] = "2099-01-02T00:00:00Z"
    bad["levels"][0]["concurrency"] = 0
    (runs / "20990102T000000Z.json").write_text(json.dumps(bad, indent=2))
    done = check(work)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = sorted(t for t in done.stdout.splitlines() if t.startswith("error: "))
    rel = "recipes/gptoss-120b/runs"
    assert errors == sorted(
        [
            f"error: {rel}/20990101T000000Z/c1.json: a result file with no run file for its folder (runs/<stamp>.json)",
            f"error: {rel}/20990102T000000Z.json: levels[0].concurrency: Input should be greater than 0 (got 0)",
            f"error: {rel}/{stamp}/c1.json:1: note: a secret in the file (keyword HF_TOKEN: hf_********); "
            "the catalogue never keeps a credential: remove it from the file",
            f"error: {rel}/{stamp}/c2.json:2: not valid JSON: Expecting value",
            f"error: {rel}/{stamp}/events.jsonl:2: not valid JSON Lines: Expecting ',' delimiter",
        ]
    ), done.stdout
    assert HF not in done.stdout + done.stderr


def test_a_changed_recipe_that_is_a_link_is_refused_unread(tmp_path):
    # A recipe.yaml linked to /proc/self/environ or ~/.aws/credentials was read by the secret scan before the
    # loader refused the link: the credential's name and first characters were printed (and annotated on the PR).
    work = clone_with_change(tmp_path, {})
    secrets = tmp_path / "credentials"
    secrets.write_text("AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    recipe = work / "recipes" / "gptoss-120b" / "recipe.yaml"
    recipe.unlink()
    recipe.symlink_to(secrets)
    done = check(work)
    assert done.returncode == 1, done.stdout + done.stderr
    shown = done.stdout + done.stderr + (work / "summary.md").read_text()
    assert "wJa" not in shown and "AWS_SECRET" not in shown, shown
    refusal = "recipes/gptoss-120b/recipe.yaml: a symbolic link: only regular files are read, never a link"
    assert f"error: {refusal}" in done.stdout.splitlines(), done.stdout


def test_a_hosts_file_anywhere_in_the_change_is_refused(tmp_path):
    work = clone_with_change(tmp_path, {})
    engine = "hosts:\n  spark1: {docker: 'tcp://203.0.113.9:2375'}\n"
    (work / "hosts.yaml").write_text(engine)
    (work / "recipes" / "gptoss-120b" / "hosts.yml").write_text(engine)
    done = check(work)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = sorted(t for t in done.stdout.splitlines() if t.startswith("error: "))
    why = (
        "a hosts file in the change: it names the docker engines the runner drives, so it is the owner's "
        "(~/.config/catalogue/hosts.yaml) and never committed"
    )
    assert errors == [f"error: hosts.yaml: {why}", f"error: recipes/gptoss-120b/hosts.yml: {why}"], done.stdout
    assert f"::error file=hosts.yaml::{why}" in done.stdout.splitlines()


def test_a_changed_file_git_would_quote_is_read(tmp_path):
    """attack44b F3: `git diff --name-only` prints "recipes/.../t\\303\\266k.json" (quoted): it matched nothing."""
    work = clone_with_change(tmp_path, {})
    runs = work / "recipes" / "gptoss-120b" / "runs"
    (run,) = runs.glob("*.json")
    (runs / run.stem).mkdir()
    (runs / run.stem / "tök.json").write_text(json.dumps({"note": f"HF_TOKEN={HF}"}))
    done = check(work)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [t for t in done.stdout.splitlines() if t.startswith("error: ")]
    assert errors == [
        f"error: recipes/gptoss-120b/runs/{run.stem}/tök.json:1: note: a secret in the file (keyword HF_TOKEN: "
        "hf_********); the catalogue never keeps a credential: remove it from the file"
    ], done.stdout


def test_a_recipe_folder_named_outside_the_id_rule_is_an_error(tmp_path):
    work = clone_with_change(tmp_path, {})
    evil = work / "recipes" / "gptoss-120b-ü"
    shutil.copytree(work / "recipes" / "gptoss-120b", evil)
    done = check(work)
    assert done.returncode == 1, done.stdout + done.stderr
    why = "recipe id (the folder name) must be lower-case letters, digits and '-'"
    assert f"error: {evil.relative_to(work)}: {why}" in done.stderr


def test_a_file_name_cannot_end_the_annotation_or_start_another_command():
    """A raw file's name is the contributor's: a newline in it would start a workflow command of theirs
    (`::stop-commands::`), and `:` or `,` would end the `file=` property early. GitHub's rules encode them."""
    from catalogue.commands.check_changes import error_annotation
    from catalogue.models.errors import CatalogueError

    line = error_annotation(CatalogueError(Path("a\n::stop-commands::zz\r\nb,c%.json"), "not JSON", line=3))
    assert line.splitlines() == [line]
    assert line == "::error file=a%0A%3A%3Astop-commands%3A%3Azz%0D%0Ab%2Cc%25.json,line=3::not JSON"


def test_the_workflow_runs_for_every_folder_that_can_change_a_verdict():
    """A pull request to the platform profiles (trust list, HF cache), the examples (a runnable --root) or the
    runner (its gates) is checked, and such a change checks every recipe, the examples included."""
    from catalogue.commands.check_changes import EVERYTHING

    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "pull-request.yml").read_text())
    paths = workflow[True]["pull_request"]["paths"]  # YAML 1.1 reads the key `on` as true
    assert {"platforms/", "runner/"} <= set(EVERYTHING)
    assert {f"{folder}**" for folder in (*EVERYTHING, "recipes/", "examples/")} <= set(paths), paths
    session = (REPO / "noxfile.py").read_text().split("def pr_check", 1)[1].split("@nox.session", 1)[0]
    assert '"--root", "examples"' in session
