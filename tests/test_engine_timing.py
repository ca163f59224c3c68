"""The server's own clock per level (catalogue.stats.engine_timing): vLLM's histogram sums and counts before and after a
level, and the burst rule, against hand-computed cases."""

from __future__ import annotations

import pytest

from catalogue.stats.engine_timing import NAMES, burst_delivery, parse_sums, plausible, timing
from runner.scripts.driver import HISTOGRAMS, KEPT

BEFORE = """\
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="tiny"} 0.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="tiny"} 0.5
vllm:time_to_first_token_seconds_count{engine="0",model_name="tiny"} 10.0
vllm:request_time_per_output_token_seconds_sum{engine="0",model_name="tiny"} 0.3
vllm:request_time_per_output_token_seconds_count{engine="0",model_name="tiny"} 150.0
vllm:inter_token_latency_seconds_sum{engine="0",model_name="tiny"} 9.0
"""
AFTER = """\
vllm:time_to_first_token_seconds_sum{engine="0",model_name="tiny"} 0.62
vllm:time_to_first_token_seconds_count{engine="0",model_name="tiny"} 18.0
vllm:time_to_first_token_seconds_sum{engine="1",model_name="tiny"} 0.04
vllm:time_to_first_token_seconds_count{engine="1",model_name="tiny"} 2.0
vllm:request_time_per_output_token_seconds_sum{engine="0",model_name="tiny"} 0.57
vllm:request_time_per_output_token_seconds_count{engine="0",model_name="tiny"} 300.0
"""


def test_sums_and_counts_are_added_over_engines_and_other_series_ignored():
    sums = parse_sums(AFTER + 'vllm:time_to_first_token_seconds_bucket{le="1"} 7\n')
    assert sums == pytest.approx(
        {
            "vllm:time_to_first_token_seconds_sum": 0.66,
            "vllm:time_to_first_token_seconds_count": 20.0,
            "vllm:request_time_per_output_token_seconds_sum": 0.57,
            "vllm:request_time_per_output_token_seconds_count": 300.0,
        }
    )


def test_a_levels_timing_is_the_difference_of_the_readings():
    """10 first tokens in 0.16 s (16 ms each); 150 finished requests whose TPOTs add up to 0.27 s (1.8 ms each)."""
    found = timing(BEFORE, AFTER)
    assert found is not None
    assert (found.requests, found.finished) == (10, 150)
    assert found.ttft_ms == pytest.approx(16.0) and found.tpot_ms == pytest.approx(1.8)


def test_a_restart_or_no_histogram_gives_nothing():
    assert timing(AFTER, BEFORE) is None  # counters went backwards: the server restarted in between
    assert timing("", "# nothing exported\n") is None


def test_tokens_faster_than_the_engine_made_them_arrived_in_bursts():
    """The CI episode's shape: client TPOT 0.3 ms against the engine's 1.8 ms: bursts; 1.43 ms (0.79) too. A client
    TPOT of 1.9 ms (ordinary transport) or 1.45 ms (0.81) is the engine's own pace."""
    engine = timing(BEFORE, AFTER)
    client = (200.0, 64.0, 50.0)  # the client's mean E2E, output tokens and mean TTFT, which bound the engine's
    why = burst_delivery(0.3, engine, *client)
    assert why is not None and "TPOT 0.30 ms at the client, 1.80 ms on the engine's clock" in why
    assert burst_delivery(1.43, engine, *client) is not None
    assert burst_delivery(1.9, engine, *client) is None and burst_delivery(1.45, engine, *client) is None
    assert burst_delivery(None, engine, *client) is None and burst_delivery(0.3, None, *client) is None


def test_the_driver_keeps_exactly_the_lines_read_here():
    """driver.py runs inside images without the catalogue, so it names the histograms itself."""
    assert HISTOGRAMS == NAMES
    kept = [line for line in (BEFORE + AFTER).splitlines() if line.startswith(KEPT)]
    assert parse_sums("\n".join(kept)) == parse_sums(BEFORE + AFTER) and len(kept) == 10


def test_the_page_marks_a_level_whose_tokens_arrived_in_bursts(repo):
    """The committed tiny run with the engine's clock put beside c2: agreeing, nothing is said; at 0.56 of the
    engine's TPOT (the measured case), c2 carries a 'bursts' badge and the reason in both figures."""
    from catalogue.models.loading import load_entry
    from catalogue.site.pages import render_recipe
    from catalogue.stats.engine_timing import EngineTiming
    from tests.test_openloop import with_run

    entry = load_entry(repo / "examples" / "tiny-cpu")
    run = entry.latest
    c2 = next(lv for lv in run.levels if lv.concurrency == 2)

    def page_with(engine_tpot: float) -> str:
        engine = EngineTiming(requests=8, ttft_ms=10.6, finished=8, tpot_ms=engine_tpot)
        tpot = c2.tpot_ms.model_copy(update={"mean": 1.461})
        levels = [lv.model_copy(update={"engine": engine, "tpot_ms": tpot}) if lv is c2 else lv for lv in run.levels]
        return render_recipe(with_run(entry, levels=levels)).body

    assert "bursts</span>" not in page_with(1.5)
    body = page_with(2.591)
    assert body.count('rc-badge rc-incomplete" title="tokens reached the client in bursts') == 1
    assert "c2: tokens reached the client in bursts (TPOT 1.46 ms at the client, 2.59 ms on the engine" in body


def test_a_servers_nonsense_is_left_out_not_recorded():
    """The server is the recipe's and its /metrics text untrusted: NaN, infinity and negative sums are skipped, so a
    level records nothing rather than a figure that is not one (or a run file that does not validate)."""
    hostile = "\n".join(
        [
            'vllm:time_to_first_token_seconds_sum{engine="0"} NaN',
            'vllm:time_to_first_token_seconds_count{engine="0"} +Inf',
            'vllm:request_time_per_output_token_seconds_sum{engine="0"} -5',
            'vllm:request_time_per_output_token_seconds_count{engine="0"} 3',
        ]
    )
    assert parse_sums(hostile) == {"vllm:request_time_per_output_token_seconds_count": 3.0}
    found = timing("", hostile)
    assert found is not None and found.ttft_ms is None and found.tpot_ms is None and found.requests == 0


def test_sums_that_overflow_give_no_timing():
    """A hostile server's sums near the float limit: two label sets add up to infinity, or the mean overflows when
    turned into milliseconds. The level records no engine timing rather than stopping the sweep."""
    twice = "\n".join(
        f'vllm:request_time_per_output_token_seconds_sum{{engine="{i}"}} 1e308\n'
        f'vllm:request_time_per_output_token_seconds_count{{engine="{i}"}} 1'
        for i in (0, 1)
    )
    assert timing("", twice) is None
    one = "vllm:request_time_per_output_token_seconds_sum 1e306\nvllm:request_time_per_output_token_seconds_count 1"
    assert timing("", one) is None


def test_an_engine_tpot_no_request_could_have_is_not_believed():
    """The server's /metrics is the recipe's image's to write. An engine TPOT of 1e9 ms put every level in 'bursts'
    (its latencies not judged). A request's engine span lies inside the client's E2E, so 64 tokens in a 200 ms mean
    request allow at most 1.25 × 200 / 63 = 3.97 ms per token: 3.9 ms is believed, 4.1 ms and 1e9 are not."""
    engine = timing(BEFORE, AFTER)
    assert engine is not None
    for tpot, believed in ((3.9, True), (4.1, False), (1e9, False)):
        lying = engine.model_copy(update={"tpot_ms": tpot})
        assert plausible(lying, 200.0, 64.0, 50.0) is believed
        assert (burst_delivery(0.3, lying, 200.0, 64.0, 50.0) is not None) is believed


def test_engine_figures_the_clients_cannot_bound_are_not_believed():
    """A run file (or an image) whose level has an engine TPOT of 1e9 but no client E2E or output length to hold it
    to put every level in 'bursts', so its latencies were not judged: without the client's bound, the engine's figures
    say nothing. An engine TTFT beyond the client's (which contains it) is not believed either."""
    engine = timing(BEFORE, AFTER)
    assert engine is not None and engine.ttft_ms is not None
    huge = engine.model_copy(update={"tpot_ms": 1e9})
    assert not plausible(huge, None, None) and burst_delivery(0.3, huge) is None
    assert not plausible(engine, 200.0, None, 50.0) and not plausible(engine, None, 64.0, 50.0)
    assert plausible(engine, 200.0, 64.0, engine.ttft_ms) and not plausible(engine, 200.0, 64.0, None)
    assert not plausible(engine, 200.0, 64.0, engine.ttft_ms / 2)  # the server's TTFT twice the client's


def test_an_engine_figure_past_its_plausible_bound_is_no_timing():
    """A run file past catalogue.models.plausible's bounds does not load, so the runner keeps no such figure: an image
    whose /metrics says its requests took 1e9 ms per token records no engine timing (the run goes on)."""
    huge = "vllm:request_time_per_output_token_seconds_sum 1e6\nvllm:request_time_per_output_token_seconds_count 1"
    assert timing("", huge) is None
