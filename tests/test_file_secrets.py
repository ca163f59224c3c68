"""Run files and imported files are untrusted: a credential in any of their strings is one masked line naming the
file, the JSON path and the line; `catalogue import --command` masks what it finds before writing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.models.errors import CatalogueError
from catalogue.models.loading import load_entry
from catalogue.policy.file_secrets import file_secret_errors, json_secret_errors, mask_text

REPO = Path(__file__).resolve().parents[1]
OUTPUTS = REPO / "tests" / "data" / "tool-outputs"
HF = "hf_" + "RunFileToken0123456789ab"
SK = "sk-" + "proj-RunFileKey0123456789"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
STATED = ["--dataset", "random", "--input-len", "64", "--output-len", "16"]


def committed_files() -> list[Path]:
    """Every committed run file and raw result file, and the tool outputs the import tests read."""
    found = [*REPO.glob("recipes/*/runs/**/*"), *REPO.glob("examples/*/runs/**/*"), *OUTPUTS.glob("**/*.json")]
    return sorted(p for p in found if p.is_file())


def test_no_credential_in_any_committed_run_or_result_file():
    files = committed_files()
    assert len(files) > 100
    assert [str(e) for p in files for e in file_secret_errors(p)] == []


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"notes": ["fine", f"logged in with {GITHUB}"]}, "notes[1]"),
        ({"provenance": {"hosts": [{"image_note": f"pull with HF_TOKEN={HF}"}]}}, "provenance.hosts[0].image_note"),
        ({"provenance": {"serve_command": ["vllm", "serve", "m", "--api-key", SK]}}, None),
        ({"env": {"HF_TOKEN": "abcdefgh12345678"}}, "env.HF_TOKEN"),
    ],
)
def test_a_nested_credential_is_found_with_its_path_and_line(data, field):
    text = json.dumps(data, indent=2)
    (error,) = json_secret_errors("run.json", text, data)
    if field is not None:
        assert error.field == field
    assert error.line is not None and error.line > 1
    secret = next(s for s in (GITHUB, HF, SK, "abcdefgh12345678") if s in text)
    assert secret in text.splitlines()[error.line - 1]
    assert secret not in str(error) and "********" in str(error)


def test_an_escaped_credential_is_found_too():
    """JSON may spell a character as \\uXXXX: the scanner reads the decoded string."""
    text = '{"notes": ["\\u0068' + HF[1:] + '"]}'
    assert HF not in text
    (error,) = json_secret_errors("run.json", text, json.loads(text))
    assert error.field == "notes[0]" and HF not in str(error)


def test_model_text_is_searched_for_credential_formats_not_for_name_value_pairs():
    """A random-weight model writes `token: lit` by chance (GuideLLM keeps every output): that is no credential;
    a credential's own format in model text still is one. Outside model text, `token: value` still counts."""
    chance = "ermanent token: lit_cap secret = 'abc' password: hunter2"
    report = {"benchmarks": [{"requests": {"successful": [{"prompt": "p", "output": chance}]}}]}
    assert json_secret_errors("benchmarks.json", json.dumps(report), report) == []
    detailed = {"generated_texts": ["fine", chance]}
    assert json_secret_errors("c4.json", json.dumps(detailed), detailed) == []
    leaked = {"benchmarks": [{"requests": {"successful": [{"output": f"here is {HF} for you"}]}}]}
    (error,) = json_secret_errors("benchmarks.json", json.dumps(leaked), leaked)
    assert error.field == "benchmarks[0].requests.successful[0].output" and HF not in str(error)
    elsewhere = {"notes": ["token: lit_cap"]}
    assert len(json_secret_errors("run.json", json.dumps(elsewhere), elsewhere)) == 1


def test_json_lines_records_are_read_as_json(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"event": "start"}\n{"event": "env", "value": "\\u0068' + HF[1:] + '"}\nnot json\n')
    assert HF not in path.read_text()
    (error,) = file_secret_errors(path)
    assert (error.line, error.field) == (2, "value") and HF not in str(error)
    path.write_text(f'{{"a": 1}}\nnot json {GITHUB}\n')
    (error,) = file_secret_errors(path)
    assert error.line == 2 and GITHUB not in str(error)


def test_mask_text_masks_every_credential_of_a_line():
    command = f"HF_TOKEN={HF} vllm bench serve --api-key {SK} --header 'Authorization: Bearer {GITHUB}'"
    masked, found = mask_text(command)
    for secret in (HF, SK, GITHUB):
        assert secret not in masked
    assert "vllm bench serve --api-key sk-******** " in masked
    assert {s.kind for s in found} >= {"keyword HF_TOKEN", "keyword --api-key", "GitHub Token"}
    assert mask_text("vllm bench serve --api-key $VLLM_API_KEY") == ("vllm bench serve --api-key $VLLM_API_KEY", [])


def _runs_copy(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes" / "gptoss-120b", root / "gptoss-120b")
    (run,) = (root / "gptoss-120b" / "runs").glob("*.json")
    return root, run


@pytest.mark.parametrize("command", ["validate", "export"])
def test_a_run_file_with_a_nested_token_is_refused_in_one_line(tmp_path, capsys, command):
    root, run = _runs_copy(tmp_path)
    data = json.loads(run.read_text())
    data["levels"][0]["stdev_of"] = f"runs by HF_TOKEN={HF}"
    run.write_text(json.dumps(data, indent=2))
    line = next(i for i, t in enumerate(run.read_text().splitlines(), 1) if HF in t)
    out = tmp_path / "out"
    args = ["validate", "--no-flags"] if command == "validate" else ["export", str(out)]
    assert main(["--root", str(root), *args]) == 1
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        f"error: {run}:{line}: levels[0].stdev_of: a secret in the file (keyword HF_TOKEN: hf_********); "
        "the catalogue never keeps a credential: remove it from the file"
    )
    assert HF not in captured.out + captured.err
    assert not out.exists()


def test_the_page_build_leaves_the_scan_to_the_commands_that_take_files_in(tmp_path):
    """load_entry scans run files unless asked not to: the MkDocs build asks (site_src/hooks.py), since validate and
    check-changes (the pull-request check) read the same files first; everything else keeps the scan."""
    root, run = _runs_copy(tmp_path)
    data = json.loads(run.read_text())
    data["levels"][0]["stdev_of"] = f"runs by HF_TOKEN={HF}"
    run.write_text(json.dumps(data, indent=2))
    with pytest.raises(CatalogueError, match="a secret in the file"):
        load_entry(root / "gptoss-120b")
    assert load_entry(root / "gptoss-120b", scan_secrets=False).runs
    hooks = (REPO / "site_src" / "hooks.py").read_text()
    assert hooks.count("scan_secrets=False") == 1


def test_a_schema_error_beside_a_token_does_not_quote_it(tmp_path, capsys):
    root, run = _runs_copy(tmp_path)
    data = json.loads(run.read_text())
    data["recorded_at"] = GITHUB  # not a date: the schema error would quote it
    run.write_text(json.dumps(data))
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err
    assert GITHUB not in err and f"{run}:1: recorded_at: a secret in the file (GitHub Token: ghp********)" in err


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "examples" / "tiny-cpu", root / "tiny-cpu", ignore=shutil.ignore_patterns("runs"))
    return root, root / "tiny-cpu"


def test_import_command_with_tokens_writes_no_token_anywhere(tiny, capsys):
    root, folder = tiny
    command = f"HF_TOKEN={HF} vllm bench serve --api-key {SK} --model m"
    args = ["--root", str(root), "import", "tiny-cpu", str(OUTPUTS / "c1.json"), *STATED]
    assert main([*args, "--command", command, "--label", f"token {GITHUB}"]) == 0
    out = capsys.readouterr().out
    masked = [line for line in out.splitlines() if line.startswith("masked ")]
    assert masked == [
        "masked 1 secret(s) in --label before writing (GitHub Token: ghp********)",
        "masked 2 secret(s) in --command before writing "
        "(keyword HF_TOKEN: hf_********, keyword --api-key: sk-********)",
    ], out
    written = [p for p in folder.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" and p.parent.name == "runs" for p in written)
    for path in written:
        text = path.read_text(encoding="utf-8")
        for secret in (HF, SK, GITHUB):
            assert secret not in text, path
    (run_file,) = (folder / "runs").glob("*.json")
    recorded = json.loads(run_file.read_text())["provenance"]["command"]
    assert recorded == "HF_TOKEN=hf_******** vllm bench serve --api-key sk-******** --model m"
    assert main(["--root", str(root), "export", str(folder.parent.parent / "site")]) in (0, 1)
    for path in (folder.parent.parent / "site").rglob("*"):
        if path.is_file():
            assert HF not in path.read_text(encoding="utf-8") and SK not in path.read_text(encoding="utf-8")


def test_an_imported_file_with_a_token_is_refused_and_nothing_is_written(tiny, tmp_path, capsys):
    root, folder = tiny
    data = json.loads((OUTPUTS / "c1.json").read_text())
    data["model_id"] = f"org/model?token={GITHUB}"
    report = tmp_path / "c1.json"
    report.write_text(json.dumps(data, indent=1))
    assert main(["--root", str(root), "import", "tiny-cpu", str(report), *STATED]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {report}:") and ": model_id: a secret in the file (" in err and "ghp********" in err
    assert GITHUB not in err and not (folder / "runs").exists()


def test_a_kept_file_the_reader_does_not_parse_is_scanned_too(tiny, tmp_path, capsys):
    """A sweep's summary.json is copied beside the run without being read for figures: it is scanned as well."""
    root, folder = tiny
    sweep = tmp_path / "sweep"
    shutil.copytree(OUTPUTS / "sweep", sweep)
    summaries = sorted(sweep.rglob("summary.json"))
    assert summaries, "the committed sweep has a summary.json beside its runs"
    summaries[0].write_text(json.dumps({"note": f"HF_TOKEN={HF}"}))
    assert main(["--root", str(root), "import", "tiny-cpu", str(sweep), *STATED]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: {summaries[0]}:1: note: a secret in the file (keyword HF_TOKEN: hf_********); "
        "the catalogue never keeps a credential: remove it from the file"
    ), err
    assert not (folder / "runs").exists()
