"""vLLM's speculative-decoding counters from /metrics text, and a level's figures from two readings."""

from __future__ import annotations

import pytest

from catalogue.spec_decode import Counters, figures, parse_counters

METRICS = """# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="tiny"} 10.0
vllm:spec_decode_num_drafts_created{engine="0",model_name="tiny"} 1.7e+09
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="tiny"} 30.0
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="tiny"} 12.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="tiny",position="0"} 7.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="tiny",position="1"} 4.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="tiny",position="2"} 1.0
vllm:spec_decode_num_drafts_total{engine="1",model_name="tiny"} 2.0
vllm:generation_tokens_total{engine="0",model_name="tiny"} 99.0
"""


def test_counters_are_summed_over_engines_and_positions_kept():
    got = parse_counters(METRICS)
    assert got == Counters(drafts=12.0, draft_tokens=30.0, accepted=12.0, per_position={0: 7.0, 1: 4.0, 2: 1.0})


def test_a_server_without_speculative_decoding_has_no_counters():
    assert parse_counters('vllm:generation_tokens_total{engine="0"} 5.0\n') is None


def test_figures_are_the_difference_over_the_level():
    before = Counters(drafts=2, draft_tokens=6, accepted=2, per_position={0: 2.0})
    after = Counters(drafts=12, draft_tokens=36, accepted=17, per_position={0: 9.0, 1: 6.0, 2: 2.0})
    got = figures(before, after)
    assert (got.drafts, got.draft_tokens, got.accepted_tokens) == (10, 30, 15)
    assert got.acceptance_rate == 0.5 and got.mean_accepted_length == 2.5
    assert got.per_position == [0.7, 0.6, 0.2]
    idle = figures(after, after)
    assert idle.acceptance_rate is None and idle.mean_accepted_length is None
    with pytest.raises(ValueError, match="restarted"):
        figures(after, before)
