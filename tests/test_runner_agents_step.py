"""The runner's agent step without a server: a stand-in AIPerf that replays the trace it is given (every turn of it,
at the concurrency asked, the key only inside its process), one run file per reuse ratio, a failure as a note."""

from __future__ import annotations

import shutil
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

import yaml

from catalogue.models import agent_trace
from catalogue.models.loading import load_entry, parse_run
from catalogue.models.recipe import Recipe
from runner.measuring import agents
from runner.planning.plan import make_plan
from runner.state import Progress
from tests.test_driver import trickling_server

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-" + "a9c3" * 8

FAKE = """
import json, os, sys
argv = sys.argv[1:]
assert argv[-2:] == ["--api-key", KEY] and KEY not in open("/proc/self/cmdline", "rb").read().decode()
assert os.environ["HF_HUB_OFFLINE"] == "1" and argv[argv.index("--tokenizer") + 1] == "catalogue/agent-tokenizer"
assert os.path.isfile(os.path.join(os.environ["HF_HUB_CACHE"], "models--catalogue--agent-tokenizer", "snapshots",
                                   "local", "tokenizer.json"))
trace = [json.loads(line) for line in open(argv[argv.index("--input-file") + 1])]
sessions = int(argv[argv.index("--concurrency") + 1])
out = argv[argv.index("--artifact-dir") + 1]
os.makedirs(out, exist_ok=True)
seen = {}
with open(os.path.join(out, "profile_export.jsonl"), "w") as f:
    for i, turn in enumerate(trace):
        index = seen.setdefault(turn["session_id"], 0)
        seen[turn["session_id"]] += 1
        ttft = 20.0 * sessions + (0 if index else 30.0)
        start = 1_000_000_000_000 + i * 100_000_000
        metrics = {"time_to_first_token": {"value": ttft, "unit": "ms"},
                   "request_latency": {"value": ttft + 15 * 2.0, "unit": "ms"},
                   "usage_completion_tokens": {"value": turn["output_length"], "unit": "tokens"},
                   "usage_prompt_tokens": {"value": turn["input_length"], "unit": "tokens"}}
        meta = {"conversation_id": turn["session_id"], "turn_index": index, "request_start_ns": start,
                "request_end_ns": start + 50_000_000}
        f.write(json.dumps({"metadata": meta, "metrics": metrics}) + "\\n")
summary = os.path.join(out, "profile_export_aiperf.json")
json.dump({"schema_version": "1.4", "aiperf_version": "0.13.0"}, open(summary, "w"))
"""


def fake_aiperf(tmp_path: Path, body: str = FAKE) -> str:
    script = tmp_path / "aiperf"
    script.write_text(f"#!{sys.executable}\nKEY = {KEY!r}\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def refresh(tmp_path: Path, port: int = 1, sessions: tuple[int, ...] = (2, 3)) -> SimpleNamespace:
    folder = tmp_path / "tiny-cpu-agents"
    shutil.copytree(REPO / "examples" / "tiny-cpu-agents", folder, ignore=shutil.ignore_patterns("runs"))
    data = yaml.safe_load((folder / "recipe.yaml").read_text())
    data["sweep"]["agents"].update(reuse=[0, 0.9], sessions=list(sessions), max_sessions=None)
    data["sweep"]["agents"]["trace"].update(sessions=6, turns=2)
    (folder / "recipe.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    entry = load_entry(folder)
    plan = make_plan(entry, stamp="20261127T060000Z", port=port, local=True)  # port 1: nothing listens, no /metrics
    plan.raw_dir.mkdir(parents=True)
    return SimpleNamespace(
        plan=plan, entry=entry, progress=Progress(vllm_version="0.32.0"), key=KEY,
        running=SimpleNamespace(redact=[KEY]), bar=SimpleNamespace(show=lambda *a: None),
    )  # fmt: skip


def test_one_run_file_per_reuse_ratio_with_its_trace_and_levels(tmp_path, monkeypatch):
    monkeypatch.setenv("CATALOGUE_AIPERF", fake_aiperf(tmp_path))
    r = refresh(tmp_path)
    agents.step_agents(r)  # type: ignore[arg-type]
    runs_dir = r.plan.folder / "runs"
    names = sorted(p.name for p in runs_dir.glob("*.json"))
    assert names == ["20261127T060000Z-agents-reuse0.json", "20261127T060000Z-agents-reuse90.json"]
    setting = r.entry.recipe.sweep.agents
    for name, trace in zip(names, setting.traces(), strict=True):
        run = parse_run(runs_dir / name)
        kept = r.plan.raw_dir / f"{agents.part_name(trace.reuse)}.jsonl"
        assert run.workload.trace_sha256 == agent_trace.sha256(kept.read_bytes())
        assert kept.read_text() == agent_trace.text(trace)
        assert [lv.sessions for lv in run.agents.levels] == [2, 3]
        assert {c[c.index("--conversation-num") + 1] for c in run.provenance.bench_commands} == {"6"}
        seeds = [c[c.index("--random-seed") + 1] for c in run.provenance.bench_commands]
        assert len(set(seeds)) == 2 and run.workload.seeds == "per level"  # no level replays another's text
        for level in run.agents.levels:
            assert level.turns == 12 and level.ttft_first_ms.n == 6 and level.ttft_later_ms.n == 6
            assert level.ttft_first_ms.p50 == 20.0 * level.sessions + 30 and level.hit_rate is None
        assert KEY not in (runs_dir / name).read_text()
        for command in run.provenance.bench_commands:
            assert command[0] == "aiperf" and command[-2:] == ["--api-key", "sk-********"]
            assert not any(str(tmp_path) in word or "aiperf-" in word for word in command), command
        assert run.agents.intended_hit_rate == agent_trace.intended_hit_rate(trace)
    assert r.progress.notes[-1].startswith("agents: 2 run file(s)")


def test_a_failing_replay_is_a_note_not_a_failed_refresh(tmp_path, monkeypatch):
    monkeypatch.setenv("CATALOGUE_AIPERF", fake_aiperf(tmp_path, "import sys; sys.exit(3)"))
    r = refresh(tmp_path)
    agents.step_agents(r)  # type: ignore[arg-type]
    assert not list((r.plan.folder / "runs").glob("*.json"))
    assert any("reuse 0%" in n and "AIPerf exited with code 3" in n for n in r.progress.notes)


def test_prefix_caching_is_read_in_either_releases_spelling():
    recipe = load_entry(REPO / "examples" / "tiny-cpu-agents").recipe
    assert agents.prefix_caching(recipe)

    def with_flag(name: str, value: object) -> Recipe:
        serving = recipe.serving.model_copy(update={"flags": {**recipe.serving.flags, name: value}})
        return recipe.model_copy(update={"serving": serving})

    for name, value in (("no-enable-prefix-caching", True), ("disable-prefix-caching", True),
                        ("enable-prefix-caching", False)):  # fmt: skip
        assert not agents.prefix_caching(with_flag(name, value)), name
    assert agents.prefix_caching(with_flag("enable-prefix-caching", True))


def test_a_trickling_metrics_page_is_given_up_at_one_deadline_for_the_whole_read():
    """The server is the recipe's: one that answers at once, then sends a byte every 0.5 s, stays within any per-read
    timeout (urllib's was 10 s a read) and held a level for as long as it liked. One deadline covers the whole read."""
    import time

    port, done = trickling_server(stop_after_s=10.0)  # a byte every 0.2 s
    started = time.monotonic()
    page = agents.read_metrics(f"http://127.0.0.1:{port}", deadline_s=1.5)
    took = time.monotonic() - started
    done.set()
    assert page == "" and 1.4 < took < 2.5, (page, took)
