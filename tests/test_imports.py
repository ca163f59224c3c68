"""`catalogue import` on real tool outputs (tests/data/tool-outputs) and on a corpus of bad inputs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from catalogue.commands.cli import main
from catalogue.imports import llama_benchy, vllm_bench
from catalogue.models.loading import load_entry

REPO = Path(__file__).resolve().parents[1]
OUTPUTS = REPO / "tests" / "data" / "tool-outputs"
STATED = ["--dataset", "random", "--input-len", "64", "--output-len", "16"]


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "recipes"
    shutil.copytree(REPO / "examples" / "tiny-cpu", root / "tiny-cpu", ignore=shutil.ignore_patterns("runs"))
    return root, root / "tiny-cpu"


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_bench_serve_jsons_become_one_run_with_their_files(tiny):
    root, folder = tiny
    files = [OUTPUTS / "c1.json", OUTPUTS / "c2.json"]
    assert main(["--root", str(root), "import", "tiny-cpu", *map(str, files), *STATED]) == 0
    (run,) = load_entry(folder).runs
    assert [lv.concurrency for lv in run.levels] == [1, 2]
    raw = json.loads(files[1].read_text())
    level = run.level(2)
    assert level.generation_tps == raw["output_throughput"]
    assert level.ttft_ms.p99 == raw["p99_ttft_ms"]
    assert run.workload.tool == "vllm bench serve" and run.workload.input_len == 64
    assert run.provenance.imported_with.startswith("`vllm bench serve --save-result` JSON")
    for name in run.provenance.raw_files:
        assert (folder / "runs" / name).read_bytes() in {f.read_bytes() for f in files}


def test_the_same_file_is_not_imported_twice(tiny, capsys):
    root, folder = tiny
    args = ["--root", str(root), "import", "tiny-cpu", str(OUTPUTS / "llama-benchy.json")]
    assert main(args) == 0
    assert main(args) == 1
    assert "llama-benchy.json: already imported: the same file is kept as 2" in capsys.readouterr().err
    assert len(load_entry(folder).runs) == 1


def test_sweep_folder_keeps_its_tree(tiny):
    root, folder = tiny
    assert main(["--root", str(root), "import", "tiny-cpu", str(OUTPUTS / "sweep"), *STATED]) == 0
    (run,) = load_entry(folder).runs
    assert [lv.concurrency for lv in run.levels] == [1, 2]
    kept = folder / "runs" / run.stamp / "sweep" / "BENCH--max_concurrency=2" / "run=0.json"
    assert json.loads(kept.read_text())["output_throughput"] == run.level(2).generation_tps


def test_llama_benchy_maps_mean_and_std_and_says_how_pp_is_defined(tiny):
    root, folder = tiny
    assert main(["--root", str(root), "import", "tiny-cpu", str(OUTPUTS / "llama-benchy.json")]) == 0
    (run,) = load_entry(folder).runs
    report = json.loads((OUTPUTS / "llama-benchy.json").read_text())
    bench = next(b for b in report["benchmarks"] if b["concurrency"] == 2)
    level = run.level(2)
    assert level.prefill_tps == bench["pp_throughput"]["mean"] and level.prefill_std == bench["pp_throughput"]["std"]
    assert level.generation_tps == bench["tg_throughput"]["mean"]
    assert level.peak_tps == bench["peak_throughput"]["mean"]
    assert level.ttft_ms.mean == bench["e2e_ttft"]["mean"]
    assert run.workload.model_dump(exclude_none=True) == {
        "tool": "llama-benchy",
        "tool_version": "0.4.0",
        "dataset": llama_benchy.DATASET,
        "input_len": 64,
        "output_len": 128,
        "context_depth": 0,
        "repetitions": 2,
    }
    assert "time to first response − latency" in run.provenance.definitions


def test_stated_lengths_are_checked_against_the_tokens_the_file_counted(tiny, capsys):
    root, folder = tiny
    args = ["--root", str(root), "import", "tiny-cpu", str(OUTPUTS / "c1.json"), "--input-len", "512"]
    assert main(args) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {OUTPUTS / 'c1.json'}: total_input_tokens: the requests averaged 64.8")
    assert files_under(folder / "runs") == []


def test_several_workloads_in_one_llama_benchy_report_become_separate_runs(tiny, tmp_path):
    root, folder = tiny
    report = json.loads((OUTPUTS / "llama-benchy.json").read_text())
    deeper = [dict(b, context_size=512) for b in report["benchmarks"]]
    report["benchmarks"] += deeper
    path = tmp_path / "two-depths.json"
    path.write_text(json.dumps(report))
    assert main(["--root", str(root), "import", "tiny-cpu", str(path)]) == 0
    runs = load_entry(folder).runs
    assert sorted(r.workload.context_depth for r in runs) == [0, 512]


def _truncated(tmp: Path) -> tuple[list[Path], str]:
    path = tmp / "c1.json"
    path.write_text((OUTPUTS / "c1.json").read_text()[:300])
    return [path], f"{path}:"


def _missing_field(tmp: Path) -> tuple[list[Path], str]:
    data = json.loads((OUTPUTS / "c2.json").read_text())
    del data["output_throughput"]
    data["max_concurrency"] = 2
    path = tmp / "c2.json"
    path.write_text(json.dumps(data))
    return [path], f"{path}: output_throughput: required field is missing"


def _missing_metric_field(tmp: Path) -> tuple[list[Path], str]:
    report = json.loads((OUTPUTS / "llama-benchy.json").read_text())
    del report["benchmarks"][1]["tg_throughput"]["std"]
    path = tmp / "benchy.json"
    path.write_text(json.dumps(report))
    return [path], f"{path}: benchmarks[1].tg_throughput.std: required field is missing"


def _no_concurrency(tmp: Path) -> tuple[list[Path], str]:
    data = json.loads((OUTPUTS / "c1.json").read_text())
    data["max_concurrency"] = 0
    path = tmp / "c0.json"
    path.write_text(json.dumps(data))
    return [path], f"{path}: max_concurrency: not a positive number of requests in flight: 0"


def _mixed_workloads(tmp: Path) -> tuple[list[Path], str]:
    data = json.loads((OUTPUTS / "c2.json").read_text())
    data["total_input_tokens"] *= 8  # as if the prompts were 512 tokens long
    path = tmp / "c2-long.json"
    path.write_text(json.dumps(data))
    return [OUTPUTS / "c1.json", path], f"{path}: total_input_tokens: mixed workloads"


def _stated_mismatch(tmp: Path) -> tuple[list[Path], str]:
    paths, _ = _mixed_workloads(tmp)
    return paths, f"{paths[1]}: total_input_tokens: the requests averaged 518.0 prompt tokens, not the stated 64"


def test_mixed_workloads_without_stated_lengths_are_refused(tiny, tmp_path, capsys):
    root, folder = tiny
    paths, expected = _mixed_workloads(tmp_path)
    assert main(["--root", str(root), "import", "tiny-cpu", *map(str, paths)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {expected}: ≈518 prompt tokens per request here, ≈65 in "), err
    assert files_under(folder / "runs") == []


def _repeated_level(tmp: Path) -> tuple[list[Path], str]:
    path = tmp / "again.json"
    shutil.copyfile(OUTPUTS / "c1.json", path)
    return [OUTPUTS / "c1.json", path], f"{path}: max_concurrency: concurrency 1 is also in"


def _unknown_format(tmp: Path) -> tuple[list[Path], str]:
    path = tmp / "guidellm.json"
    path.write_text(json.dumps({"benchmarks": [{"metrics": {}}]}))
    return [path], f"{path}: unknown format"


def _not_a_sweep(tmp: Path) -> tuple[list[Path], str]:
    folder = tmp / "results"
    folder.mkdir()
    return [folder], f"{folder}: a folder, but not a `vllm bench sweep serve` / `serve_workload` output"


def _impossible_date(tmp: Path) -> tuple[list[Path], str]:
    data = json.loads((OUTPUTS / "c1.json").read_text())
    data["date"] = "20261399-025228"  # month 13, day 99
    path = tmp / "c1-date.json"
    path.write_text(json.dumps(data))
    return [path], f"{path}: date: not a calendar date (YYYY-MM-DD): '2026-13-99'"


def _zero_date(tmp: Path) -> tuple[list[Path], str]:
    data = json.loads((OUTPUTS / "c1.json").read_text())
    data["date"] = "00000000-000000"
    path = tmp / "c1-zero.json"
    path.write_text(json.dumps(data))
    return [path], f"{path}: date: not a calendar date (YYYY-MM-DD): '0000-00-00'"


def _impossible_timestamp(tmp: Path) -> tuple[list[Path], str]:
    report = json.loads((OUTPUTS / "llama-benchy.json").read_text())
    report["timestamp"] = "2026-02-30T00:00:00"
    path = tmp / "benchy-date.json"
    path.write_text(json.dumps(report))
    return [path], f"{path}: timestamp: not a calendar date (YYYY-MM-DD): '2026-02-30'"


def _impossible_start_time(tmp: Path) -> tuple[list[Path], str]:
    data = json.loads((OUTPUTS / "aiperf-concurrency.json").read_text())
    data["start_time"] = "9999-99-99T00:00:00"
    path = tmp / "aiperf-date.json"
    path.write_text(json.dumps(data))
    return [path], f"{path}: start_time: not a calendar date (YYYY-MM-DD): '9999-99-99'"


def _guidellm_start_beyond_time(tmp: Path) -> tuple[list[Path], str]:
    data = json.loads((OUTPUTS / "guidellm-concurrent.json").read_text())
    data["benchmarks"][0]["start_time"] = 1e300
    path = tmp / "guidellm-date.json"
    path.write_text(json.dumps(data))
    return [path], f"{path}: benchmarks[0].start_time: not a time (Unix seconds): 1e+300"


def _sweep_with(tmp: Path, name: str) -> tuple[Path, Path]:
    """A copy of the real sweep folder, and a path in one of its combinations to plant a file at."""
    folder = tmp / "sweep1"
    shutil.copytree(OUTPUTS / "sweep", folder)
    target = folder / "BENCH--max_concurrency=1" / name
    target.unlink(missing_ok=True)
    return folder, target


def _owner_file(tmp: Path) -> Path:
    secret = tmp / "owner.txt"
    secret.write_text("root:the-owner-only-line:0:0\n")
    return secret


def _linked_failure(tmp: Path) -> tuple[list[Path], str]:
    folder, link = _sweep_with(tmp, "y.failure.json")
    link.symlink_to(_owner_file(tmp))  # attack44b F1: kept and copied as a failed run's record
    return [folder], f"{link}: a symbolic link"


def _linked_summary(tmp: Path) -> tuple[list[Path], str]:
    folder, link = _sweep_with(tmp, "summary.json")
    link.symlink_to(_owner_file(tmp))
    return [folder], f"{link}: a symbolic link"


def _fifo_failure(tmp: Path) -> tuple[list[Path], str]:
    folder, fifo = _sweep_with(tmp, "z.failure.json")
    os.mkfifo(fifo)  # attack44b F1: import waited on it forever
    return [folder], f"{fifo}: not a regular file (a FIFO, device or socket)"


def _linked_result(tmp: Path) -> tuple[list[Path], str]:
    link = tmp / "c1.json"
    link.symlink_to(OUTPUTS / "c1.json")
    return [link], f"{link}: a symbolic link"


BAD = [
    _linked_failure,
    _linked_summary,
    _fifo_failure,
    _linked_result,
    _impossible_date,
    _zero_date,
    _impossible_timestamp,
    _impossible_start_time,
    _guidellm_start_beyond_time,
    _truncated,
    _missing_field,
    _missing_metric_field,
    _no_concurrency,
    _stated_mismatch,
    _repeated_level,
    _unknown_format,
    _not_a_sweep,
]


@pytest.mark.parametrize("make", BAD, ids=[f.__name__.strip("_") for f in BAD])
def test_bad_input_is_one_line_and_writes_nothing(make, tiny, tmp_path, capsys):
    root, folder = tiny
    paths, expected = make(tmp_path)
    assert main(["--root", str(root), "import", "tiny-cpu", *map(str, paths), *STATED]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"error: {expected}"), err
    assert files_under(folder / "runs") == []


def test_formats_are_told_apart():
    assert vllm_bench.looks_like(json.loads((OUTPUTS / "c1.json").read_text()))
    assert not llama_benchy.looks_like(json.loads((OUTPUTS / "c1.json").read_text()))
    assert llama_benchy.looks_like(json.loads((OUTPUTS / "llama-benchy.json").read_text()))
    assert vllm_bench.looks_like_sweep(OUTPUTS / "sweep") and not vllm_bench.looks_like_sweep(OUTPUTS / "c1.json")
