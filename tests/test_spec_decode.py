"""vLLM's speculative-decoding counters from /metrics text, and a level's figures from two readings."""

from __future__ import annotations

import pytest

from catalogue.stats.spec_decode import Counters, figures, parse_counters

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


def test_a_level_event_gives_figures_only_with_both_readings():
    from runner.measuring.sweep import spec_figures

    before = METRICS.replace("12.0", "2.0").replace("10.0", "1.0")
    got = spec_figures({"metrics_before": before, "metrics_after": METRICS})
    assert got is not None and got.accepted_tokens == 10 and got.drafts == 9
    assert spec_figures({}) is None and spec_figures({"metrics_before": "", "metrics_after": METRICS}) is None
    assert spec_figures({"metrics_before": METRICS, "metrics_after": before}) is None  # a restart: no figure


def test_the_client_keeps_only_the_counter_lines(tmp_path):
    import http.server
    import threading

    from runner.scripts.driver import metrics_lines

    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(METRICS.encode())

        def log_message(self, format: str, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Metrics)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        text = metrics_lines(f"http://127.0.0.1:{server.server_address[1]}/metrics")
    finally:
        server.shutdown()
    assert text is not None and "generation_tokens" not in text and "# HELP" not in text
    assert parse_counters(text) == parse_counters(METRICS)
    assert metrics_lines(None) is None and metrics_lines("http://127.0.0.1:9/metrics") is None


def test_jobs_read_the_metrics_except_behind_a_router(entries):
    """Every level reads its server's /metrics (speculative decoding and the latency histograms); behind a router
    several servers share the traffic, so none is read."""
    from runner.planning.jobs import level_jobs

    entry = entries["gptoss-120b"]
    jobs = level_jobs(entry, entry.recipe, "http://127.0.0.1:8000", "/raw", "s", False)
    assert jobs and all(job.payload()["metrics_url"] == "http://127.0.0.1:8000/metrics" for job in jobs)
    routed = entries["gptoss-120b-topology-2x-shuffle"]
    assert routed.recipe.topology.kind == "replicas"
    plain = level_jobs(routed, routed.recipe, "http://127.0.0.1:8000", "/raw", "s", False)
    assert plain and all(job.metrics_url is None and "metrics_url" not in job.payload() for job in plain)
