"""A level of agent sessions read from AIPerf 0.13's real per-request export and two /metrics pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalogue.stats import agent_levels
from catalogue.stats.request_samples import intervals

EXPORT = Path(__file__).parent / "data" / "aiperf-agents" / "s2" / "profile_export.jsonl"
"""AIPerf 0.13.0 replaying a mooncake trace (2 sessions at a time, chat endpoint) against the tiny CPU server."""

BEFORE = """# HELP vllm:prefix_cache_queries Prefix cache queries, in terms of number of queried tokens.
vllm:prefix_cache_queries_total{engine="0",model_name="tiny"} 1000.0
vllm:prefix_cache_queries_created{engine="0",model_name="tiny"} 1.79e+09
vllm:prefix_cache_hits_total{engine="0",model_name="tiny"} 200.0
"""
AFTER = BEFORE.replace("1000.0", "8289.0").replace("200.0", "4808.0")


def raw_records() -> list[dict]:
    return [json.loads(line) for line in EXPORT.read_text().splitlines()]


def test_every_turn_is_read_with_its_session_and_index():
    turns = agent_levels.read_turns(EXPORT)
    assert len(turns) == len(raw_records()) == 10
    assert [t.start_s for t in turns] == sorted(t.start_s for t in turns)
    assert {(t.session, t.index) for t in turns} == {
        (r["metadata"]["conversation_id"], r["metadata"]["turn_index"]) for r in raw_records()
    }
    assert all(t.ok and t.output_tokens == 16 for t in turns)


def test_first_turns_apart_from_later_turns_with_n_and_intervals():
    turns = agent_levels.read_turns(EXPORT)
    level = agent_levels.level(2, turns, BEFORE, AFTER, {})
    firsts = sorted(
        r["metrics"]["time_to_first_token"]["value"] for r in raw_records() if r["metadata"]["turn_index"] == 0
    )
    later = sorted(
        r["metrics"]["time_to_first_token"]["value"] for r in raw_records() if r["metadata"]["turn_index"] > 0
    )
    assert level.ttft_first_ms.n == len(firsts) == 4 and level.ttft_later_ms.n == len(later) == 6
    assert level.ttft_first_ms.mean == pytest.approx(sum(firsts) / 4)
    assert level.ttft_later_ms.p50 == pytest.approx((later[2] + later[3]) / 2)
    assert level.ttft_ms.n == 10 and level.ttft_ms.ci == (intervals(firsts + later) or None)
    assert level.turns == 10 and level.failed == 0 and level.sessions == 2


def test_tokens_per_second_over_the_window_from_the_servers_counts():
    turns = agent_levels.read_turns(EXPORT)
    level = agent_levels.level(2, turns, BEFORE, AFTER, {})
    window = max(t.end_s for t in turns) - min(t.start_s for t in turns)
    prompt = sum(r["metrics"]["usage_prompt_tokens"]["value"] for r in raw_records())
    assert level.duration_s == pytest.approx(window)
    assert level.output_tps == pytest.approx(160 / window)
    assert level.total_tps == pytest.approx((160 + prompt) / window)


def test_hit_rate_is_the_growth_of_vllms_counters():
    level = agent_levels.level(2, agent_levels.read_turns(EXPORT), BEFORE, AFTER, {})
    assert (level.prefix_queries, level.prefix_hits) == (7289.0, 4608.0)
    assert level.hit_rate == pytest.approx(4608 / 7289)
    unread = agent_levels.level(2, agent_levels.read_turns(EXPORT), "", AFTER, {})
    assert unread.hit_rate is None and unread.prefix_queries is None
    idle = agent_levels.level(2, agent_levels.read_turns(EXPORT), BEFORE, BEFORE, {})
    assert idle.hit_rate == 0.0


def test_counters_of_several_engines_add_up_and_garbage_is_skipped():
    page = (
        BEFORE + 'vllm:prefix_cache_hits_total{engine="1",model_name="tiny"} 50.0\nvllm:prefix_cache_hits_total nan\n'
    )
    assert agent_levels.prefix_counters(page) == {"queries": 1000.0, "hits": 250.0}


def test_slo_counts_come_from_the_judged_turns():
    turns = agent_levels.read_turns(EXPORT)
    level = agent_levels.level(2, turns, BEFORE, AFTER, {"ttft": 150.0})
    judged = turns[1:]  # the warm-up tenth of 10 turns: the first one sent
    assert level.judged == 9 and level.exceed == {"ttft": sum(1 for t in judged if t.ttft_ms > 150)}


def test_lines_that_do_not_parse_or_lie_are_left_out(tmp_path: Path):
    lines = EXPORT.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["metadata"]["request_start_ns"] = -5
    failed = json.loads(lines[2])
    failed["error"] = {"code": 500}
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join([lines[0], "{not json", json.dumps(broken), json.dumps(failed), "[1]"]) + "\n")
    turns = agent_levels.read_turns(path)
    assert len(turns) == 2 and [t.ok for t in turns] == [True, False]
    level = agent_levels.level(1, turns, "", "", {})
    assert level.turns == 1 and level.failed == 1


def test_an_export_nested_deep_or_past_the_import_limit_is_one_line_naming_the_file(tmp_path: Path):
    """The export may be an import's: a line of 200,000 `[` made json.loads recurse (RecursionError traceback), and a
    sparse file of gigabytes was read whole. Both are refused before parsing, naming the file (and the line)."""
    from catalogue.models.bounded import MAX_IMPORT_BYTES
    from catalogue.models.errors import CatalogueError

    deep = tmp_path / "deep.jsonl"
    deep.write_text(EXPORT.read_text().splitlines()[0] + "\n" + "[" * 200_000 + "\n")
    with pytest.raises(CatalogueError) as found:
        agent_levels.read_turns(deep)
    assert str(found.value) == f"{deep}:2: nested more than 64 deep: refused unparsed"
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as f:
        f.truncate(MAX_IMPORT_BYTES + 1)  # sparse: no disk used
    with pytest.raises(CatalogueError, match="larger than 65536 KB: refused unread") as found:
        agent_levels.read_turns(huge)
    assert found.value.path == huge
