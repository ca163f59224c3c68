"""The synthetic agent trace: what the generator writes, its hash, and the workload key it makes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from catalogue.models import agent_trace
from catalogue.models.agent_trace import AgentTrace
from catalogue.models.workload import Workload

BASE = AgentTrace(
    sessions=4, turns=3, block_tokens=64, first_turn_blocks=10, reuse=0.5, growth_blocks=2, output_tokens=16,
    think="exponential", think_ms=200, seed=7,
)  # fmt: skip


def records(trace: AgentTrace) -> list[dict]:
    return [json.loads(line) for line in agent_trace.text(trace).splitlines()]


def test_first_turns_share_exactly_the_stated_blocks_and_nothing_else_repeats():
    found = records(BASE)
    firsts = [r["hash_ids"] for r in found if "delay" not in r]
    assert len(firsts) == 4
    shared = set.intersection(*(set(ids) for ids in firsts))
    assert len(shared) == 5  # half of 10 blocks
    every = [i for r in found for i in r["hash_ids"]]
    assert len(every) - len(set(every)) == 3 * 5  # only the shared blocks of the 2nd..4th session repeat


def test_each_turn_is_a_mooncake_record_with_tokens_matching_its_blocks():
    for record in records(BASE):
        assert record["input_length"] == 64 * len(record["hash_ids"])
        assert record["output_length"] == 16
    by_session: dict[str, list[dict]] = {}
    for record in records(BASE):
        by_session.setdefault(record["session_id"], []).append(record)
    assert len(by_session) == 4 and all(len(turns) == 3 for turns in by_session.values())
    for turns in by_session.values():
        assert "delay" not in turns[0] and all(t["delay"] >= 0 for t in turns[1:])
        assert [len(t["hash_ids"]) for t in turns] == [10, 2, 2]


def test_no_reuse_shares_nothing_and_full_reuse_shares_every_first_block():
    none = records(BASE.with_reuse(0))
    assert len({i for r in none for i in r["hash_ids"]}) == sum(len(r["hash_ids"]) for r in none)
    full = [r["hash_ids"] for r in records(BASE.with_reuse(1)) if "delay" not in r]
    assert all(ids == full[0] for ids in full)


def test_the_same_parameters_give_the_same_bytes_and_any_change_another_hash(tmp_path: Path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert agent_trace.write(BASE, a) == agent_trace.write(BASE, b)
    assert a.read_bytes() == b.read_bytes()
    changed = {
        agent_trace.sha256(agent_trace.text(BASE.model_copy(update={name: value})).encode())
        for name, value in (("seed", 8), ("reuse", 0.9), ("think_ms", 300.0), ("growth_blocks", 3))
    }
    assert len(changed) == 4 and agent_trace.sha256(a.read_bytes()) not in changed


def test_fixed_think_time_is_the_stated_delay():
    fixed = BASE.model_copy(update={"think": "fixed", "think_ms": 250.0})
    assert {r["delay"] for r in records(fixed) if "delay" in r} == {250.0}


def test_think_none_needs_zero_and_a_bad_share_is_refused():
    with pytest.raises(ValidationError):
        BASE.model_copy(update={}).model_validate({**BASE.model_dump(), "think": "none"})
    with pytest.raises(ValidationError):
        AgentTrace.model_validate({**BASE.model_dump(), "reuse": 1.5})


def test_intended_hit_rate_by_hand():
    one = AgentTrace(sessions=2, turns=2, block_tokens=10, first_turn_blocks=4, reuse=0.5, growth_blocks=1,
                     output_tokens=5, think="none", think_ms=0)  # fmt: skip
    # per session: turn 1 sends 40 tokens; turn 2 sends 40 + 5 + 10 = 55 with 45 of history.
    # the second session's first turn finds the 20 shared tokens.
    assert agent_trace.intended_hit_rate(one) == pytest.approx((45 + 45 + 20) / (2 * (40 + 55)))
    assert agent_trace.intended_hit_rate(one.with_reuse(0)) < agent_trace.intended_hit_rate(one)


def test_trace_parameters_and_hash_are_part_of_the_workload_key():
    base = Workload(tool="AIPerf", dataset="agent", input_len=640, output_len=16, trace=BASE.describe(),
                    trace_sha256="a" * 64)  # fmt: skip
    other_params = base.model_copy(update={"trace": BASE.with_reuse(0.9).describe()})
    other_file = base.model_copy(update={"trace_sha256": "b" * 64})
    assert base.key != other_params.key and base.key != other_file.key
    assert any(d.startswith("trace:") for d in base.differences(other_params))
    assert "agent trace: 4 sessions × 3 turns" in base.describe()


def test_the_command_writes_a_trace_and_refuses_bad_input_in_one_line(tmp_path: Path, capsys):
    out = tmp_path / "t.jsonl"
    args = ["--sessions", "2", "--turns", "2", "--first-turn-blocks", "4", "--growth-blocks", "1",
            "--output-tokens", "8", "--think", "none"]  # fmt: skip
    assert agent_trace.main([str(out), *args]) == 0
    assert capsys.readouterr().out.strip() == agent_trace.sha256(out.read_bytes())
    bad = tmp_path / "bad.jsonl"
    assert agent_trace.main([str(bad), *args, "--reuse", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{bad}: reuse:") and "\n" not in err and not bad.exists()


def test_the_shipped_trace_is_what_its_parameters_make(repo: Path):
    from catalogue.models.loading import load_entry

    entry = load_entry(repo / "examples" / "tiny-cpu-agents")
    setting = entry.recipe.sweep.agents
    assert setting is not None
    shipped = repo / "examples" / "tiny-cpu-agents" / "trace-reuse50.jsonl"
    assert shipped.read_text() == agent_trace.text(setting.trace.with_reuse(0.5))
