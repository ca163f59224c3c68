"""The runner's Arena step without a server: a stand-in llama-benchy (the key reaches it only inside its process,
the corpus is served on 127.0.0.1), its report into one run file per depth, a failure as a note; the dry run."""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

from catalogue.commands.cli import main
from catalogue.models.loading import load_entry
from runner.measuring import arena
from runner.planning.plan import make_plan
from runner.state import Progress

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-" + "5f1e" * 8
REAL_REPORT = REPO / "tests" / "data" / "tool-outputs" / "llama-benchy.json"
"""llama-benchy 0.4.0's own report against the tiny server (its README says how it was made)."""

FAKE = """
import json, os, sys, urllib.request
argv = sys.argv[1:]
cmdline = open("/proc/self/cmdline", "rb").read().decode()
assert argv[-2:] == ["--api-key", KEY] and KEY not in cmdline and "LLAMA_BENCHY_API_KEY" not in os.environ
book = urllib.request.urlopen(argv[argv.index("--book-url") + 1]).read().decode()
assert len(book.split()) > 50000 and os.environ["HOME"] != REAL_HOME
def words(flag):
    i = argv.index(flag) + 1
    out = []
    while i < len(argv) and not argv[i].startswith("--"):
        out.append(int(argv[i])); i += 1
    return out
# The real report of llama-benchy 0.4.0 against the tiny server (tests/data/tool-outputs), entry by entry as it wrote
# them; each depth asked for past 0 gets the same entries at that depth, after a context-loading phase of its own
# (is_context_prefill_phase), as llama-benchy lays out a run with --depth.
report = json.load(open(REAL))
measured = report["benchmarks"]
report["benchmarks"] = []
for d in words("--depth"):
    for bench in measured:
        if d:
            report["benchmarks"].append({**bench, "context_size": d, "is_context_prefill_phase": True})
        report["benchmarks"].append({**bench, "context_size": d})
report["model"] = argv[argv.index("--model") + 1]
open(argv[argv.index("--save-result") + 1], "w").write(json.dumps(report))
print("done, key", KEY)
"""


def fake_benchy(tmp_path: Path, body: str = FAKE) -> str:
    script = tmp_path / "llama-benchy"
    head = f"KEY = {KEY!r}\nREAL_HOME = {str(Path.home())!r}\nREAL = {str(REAL_REPORT)!r}\n"
    script.write_text(f"#!{sys.executable}\n{head}{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def refresh(tmp_path: Path) -> SimpleNamespace:
    folder = tmp_path / "tiny-cpu"
    shutil.copytree(REPO / "examples" / "tiny-cpu", folder, ignore=shutil.ignore_patterns("runs"))
    entry = load_entry(folder)
    plan = make_plan(entry, stamp="20261125T060000Z")
    plan.raw_dir.mkdir(parents=True)
    progress = Progress(vllm_version="0.32.0")
    return SimpleNamespace(
        plan=plan,
        entry=entry,
        progress=progress,
        key=KEY,
        running=SimpleNamespace(redact=[KEY]),
        bar=SimpleNamespace(show=lambda *a: None),
    )


def test_the_report_becomes_one_run_file_per_depth(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CATALOGUE_LLAMA_BENCHY", fake_benchy(tmp_path))
    r = refresh(tmp_path)
    arena.step_arena(r)  # type: ignore[arg-type]
    [note] = r.progress.notes
    assert note.startswith("arena spark-arena-v2: 2 run file(s) (20261125T060001Z.json, 20261125T060002Z.json; "
                           "depths 0, 256) in "), note  # fmt: skip
    assert "regression check: 20261125T060002Z has no earlier run of its workload" in capsys.readouterr().err
    log = (r.plan.raw_dir / "arena.log").read_text()
    assert "done, key [redacted]" in log and KEY not in log  # the log is filtered for the key
    entry = load_entry(r.entry.folder)
    runs = sorted(entry.runs, key=lambda run: run.recorded_at)
    real = json.loads(REAL_REPORT.read_text())
    assert [run.workload.context_depth for run in runs] == [0, 256]
    for run in runs:
        assert run.workload.profile == "spark-arena-v2" and run.workload.dataset.endswith(
            "answers forced to --tg tokens"
        )
        # the report's own figures (tg and pp means per concurrency), prompt and answer lengths as it ran them
        assert [(lv.concurrency, lv.generation_tps, lv.prefill_tps) for lv in run.levels] == [
            (b["concurrency"], b["tg_throughput"]["mean"], b["pp_throughput"]["mean"]) for b in real["benchmarks"]
        ]
        assert (run.workload.input_len, run.workload.output_len, run.workload.tool_version) == (64, 128, "0.4.0")
        assert [lv.ttft_ms.mean for lv in run.levels] == [b["e2e_ttft"]["mean"] for b in real["benchmarks"]]
        assert any(n.startswith("2 context-loading phase(s) of the report left out") for n in run.notes)
        [command] = run.provenance.bench_commands
        assert command[-2:] == ["--api-key", "sk-********"] and KEY not in json.dumps(run.model_dump(mode="json"))
        assert run.provenance.vllm_version == "0.32.0" and "llama-benchy 0.4.0" in run.provenance.client


def test_a_failing_llama_benchy_is_a_note_and_no_run_file(tmp_path, monkeypatch):
    monkeypatch.setenv("CATALOGUE_LLAMA_BENCHY", fake_benchy(tmp_path, "import sys\nsys.exit(3)"))
    r = refresh(tmp_path)
    arena.step_arena(r)  # type: ignore[arg-type]
    [note] = r.progress.notes
    assert note.startswith("arena spark-arena-v2: no figures (llama-benchy exited with code 3 (see runs/")
    assert list((r.entry.folder / "runs").glob("*.json")) == []


def test_a_command_that_is_not_a_python_script_is_refused_before_it_runs(tmp_path, monkeypatch):
    script = tmp_path / "llama-benchy"
    script.write_text('#!/bin/sh\nexec uvx llama-benchy "$@"\n')
    monkeypatch.setenv("CATALOGUE_LLAMA_BENCHY", str(script))
    r = refresh(tmp_path)
    arena.step_arena(r)  # type: ignore[arg-type]
    assert "could only go on its command line" in r.progress.notes[0]


def test_a_recipe_without_the_profile_has_no_arena_step(tmp_path):
    r = refresh(tmp_path)
    recipe = r.entry.recipe.model_copy(update={"sweep": r.entry.recipe.sweep.model_copy(update={"arena": None})})
    r.entry = SimpleNamespace(recipe=recipe, folder=r.entry.folder)
    arena.step_arena(r)  # type: ignore[arg-type]
    assert r.progress.notes == [] and arena.dry_run_lines(r.plan, r.entry.folder, recipe) == []


def test_the_dry_run_lists_the_arena_step_and_its_command(capsys):
    assert main(["--root", str(REPO / "examples"), "refresh", "tiny-cpu", "--dry-run"]) == 0
    out = capsys.readouterr().out
    tail = out[out.index("Arena profile spark-arena-v2 (Spark Arena v2, scaled down for the tiny model's") :]
    assert "after the quality checks, llama-benchy on this machine" in tail and "--api-key" not in tail
    for words in (
        "--depth 0 256",
        "--concurrency 1 2",
        "--pp 64",
        "--tg 16",
        "--runs 1",
        "--enable-prefix-caching",
        "--exact-tg",
        "--tokenizer " + str(REPO / "examples" / "tiny-cpu" / "model"),
        "--format json",
    ):
        assert words in tail.replace(" \\\n      ", " "), words  # fmt: skip
