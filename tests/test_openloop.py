"""Open-loop levels on a recipe page: the capacity headline in each state, the rate table, the latency–load charts."""

from __future__ import annotations

import dataclasses
import html
import re

from catalogue.models.benchmark import BenchmarkRun
from catalogue.models.loading import Entry
from catalogue.site import capacity_headline, openloop
from catalogue.site.pages import render_recipe


def _run(entry: Entry) -> BenchmarkRun:
    return entry.runs[-1]


def with_run(entry: Entry, **update) -> Entry:
    """The entry with its run changed (a copy; the fixture stays as loaded)."""
    return dataclasses.replace(entry, runs=[_run(entry).model_copy(update=update)])


def with_capacity(entry: Entry, **update) -> Entry:
    cap = _run(entry).capacity
    assert cap is not None
    return with_run(entry, capacity=cap.model_copy(update=update))


def _headline(page: str) -> str:
    box = page.split('id="workload-1-capacity">')[1].split("</div>")[0]
    return html.unescape(re.sub(r"<[^>]+>", "", box)).strip()


def _rates_table(page: str) -> list[list[str]]:
    table = page.split('<table class="rc-perf rc-rates">')[1].split("</table>")[0]
    body = table.split("<tbody>")[1]
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body)
    ]


def test_a_pinned_capacity_is_stated_with_its_objective_and_bracket(capacity_entry):
    run = _run(capacity_entry)
    cap = run.capacity
    assert cap is not None and cap.converged and cap.rps == 2.875 and cap.upper_rps == 3.162
    text = _headline(render_recipe(capacity_entry).markdown())
    assert text.startswith("Serves 2.8 req/s within p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms")
    assert "(≈ 11 requests in flight at this workload), measured on 2026-11-25 with vLLM 0.32.0." in text
    assert (
        "pinned it to within 10 %: 2.875 req/s met" in text
        and "3.162 req/s did not (p95 TTFT 1,348 ms > 1,000 ms)" in text
    )
    assert "3 probes" in text


def test_a_bracket_bound_settled_on_its_percentile_gives_the_decided_interval_beside_it(capacity_entry):
    """Seed 11 of the queue model: 1.28 decided to meet, 1.355 settled as a miss, 1.639 decided to miss. The page
    keeps the bracket and adds where the decided verdicts alone put the capacity; agreeing, it adds nothing."""
    entry = with_capacity(capacity_entry, rps=1.28, upper_rps=1.355, decided_rps=(1.28, 1.639), confidence=None)
    text = _headline(render_recipe(entry).markdown())
    assert "By the rates decided at 99 % confidence alone, the capacity lies between 1.28 and 1.639 req/s." in text
    same = with_capacity(capacity_entry, decided_rps=(2.875, 3.162))
    assert "decided at 99 % confidence alone" not in _headline(render_recipe(same).markdown())
    above = with_capacity(capacity_entry, rps=1.28, upper_rps=1.355, decided_rps=(1.28, None))
    assert "the capacity lies above 1.28 req/s." in _headline(render_recipe(above).markdown())


def test_a_capacity_whose_limit_was_nearly_reached_at_half_of_it_carries_a_caution(capacity_entry):
    """The fixture's lightest rates had room; with p95 TTFT at 900 ms of its 1 s limit at a rate at half the capacity
    or less, the page says that the limit is set by noise more than load (catalogue.stats.capacity_conditioning)."""
    assert "noise more than load" not in _headline(render_recipe(capacity_entry).markdown())
    run = _run(capacity_entry)
    assert run.capacity is not None and run.capacity.rps is not None
    light = max(lv.offered_rps or 0 for lv in run.rates if (lv.offered_rps or 0) * 2 <= run.capacity.rps)
    rates = [
        lv.model_copy(update={"ttft_ms": lv.ttft_ms.model_copy(update={"p95": 900.0})})
        if lv.offered_rps == light and lv.ttft_ms is not None
        else lv
        for lv in run.rates
    ]
    text = _headline(render_recipe(with_run(capacity_entry, rates=rates)).markdown())
    assert f"A limit set by noise more than load. At {light:g} req/s," in text
    assert "p95 TTFT was already 900 ms, 90 % of its 1,000 ms limit" in text


def test_a_search_that_stopped_early_says_why_and_gives_its_bracket(capacity_entry):
    stopped = "the time budget of 1200 s ran out"
    entry = with_capacity(capacity_entry, converged=False, stopped=stopped, rps=2.69, upper_rps=3.162)
    text = _headline(render_recipe(entry).markdown())
    assert text.startswith("Serves at least 2.6 req/s within p95 TTFT ≤ 1 s")
    assert f"The search did not pin it down: {stopped}." in text
    assert "3.162 req/s did not" in text and "the capacity lies between them" in text
    open_top = with_capacity(capacity_entry, converged=False, stopped=stopped, upper_rps=None)
    assert "no higher rate was measured, so the capacity may be higher" in _headline(render_recipe(open_top).markdown())


def test_when_even_the_lowest_rate_misses_the_page_says_so_and_keeps_the_rows(capacity_entry):
    stopped = (
        "even the lowest rate probed, 0.5 req/s, misses the SLO (p95 TTFT 1,200 ms > 1,000 ms): "
        "nothing down to 0.5 req/s met it"
    )
    entry = with_capacity(
        capacity_entry, rps=None, upper_rps=0.5, converged=False, stopped=stopped, concurrent_requests=None
    )
    page = render_recipe(entry).markdown()
    text = _headline(page)
    assert text.startswith(
        "No rate tried meets the objective (p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms): even the lowest, 0.5 req/s, missed it"
    )
    assert f"The capacity search stopped: {stopped}." in text and "Serves" not in text
    assert len(_rates_table(page)) == len(_run(entry).rates)
    assert "rc-capacity-badge" not in page  # no row is the capacity


def test_without_a_search_the_highest_planned_rate_that_met_is_named(capacity_entry):
    planned = [lv for lv in _run(capacity_entry).rates if lv.probe is None]
    page = render_recipe(with_run(capacity_entry, capacity=None, rates=planned)).markdown()
    assert 'class="rc-capacity ' not in page
    assert "No capacity search in this run. Of the rates measured, the highest that met p95 TTFT ≤ 1 s" in page
    assert "<strong>2 req/s</strong>; the next one up, 5 req/s, missed it" in page


def test_rate_table_rows_by_offered_rate_with_probes_marked(capacity_entry):
    page = render_recipe(capacity_entry).markdown()
    rows = _rates_table(page)
    run = _run(capacity_entry)
    assert [r[1] for r in rows] == ["0.5", "1", "2", "2.69", "2.875", "3.162", "5"]
    assert [r[0] for r in rows] == ["planned"] * 3 + ["probe 2", "probe 3 capacity", "probe 1", "planned"]
    by_offered = {r[1]: r for r in rows}
    assert by_offered["3.162"][3] == "p95 TTFT 1,348 ms > 1,000 ms"
    assert by_offered["5"][3] == "saturated: achieved 3.61 of 5 req/s offered"
    assert by_offered["2.875"][3:7] == ["✓ meets", "2.713", "95.3 %", "0 of 87"]
    capacity_level = next(lv for lv in run.rates if lv.offered_rps == 2.875)
    assert by_offered["2.875"][8] == f"{capacity_level.ttft_ms.p95:,.1f}"  # TTFT p95, the objective's percentile
    header = page.split('<table class="rc-perf rc-rates">')[1].split("</thead>")[0]
    assert "TTFT p95 (ms)" in header and "TPOT p95 (ms)" in header and "E2E p95 (ms)" in header
    saturated = page.split("<td>5</td>")[1].split("</tr>")[0]
    assert saturated.count('class="rc-miss"') == 2  # TTFT p95 and TPOT p95 over their limits


def test_latency_charts_draw_the_limit_the_capacity_and_probes_apart(capacity_entry):
    run = _run(capacity_entry)
    charts = openloop.latency_charts(run, "t")
    assert len(charts) == 2  # TTFT and TPOT; E2E only when the objective limits it
    ttft, tpot = charts
    assert "TTFT against load (p50 and p95)" in ttft and "TPOT against load" in tpot
    assert 'class="rc-rule"' in ttft and "SLO: p95 ≤ 1,000 ms" in ttft and "SLO: p95 ≤ 50 ms" in tpot
    assert ttft.count('class="rc-mark"') == 1 and "capacity 2.8 req/s" in ttft
    probes = sum(lv.probe is not None for lv in run.rates)
    assert ttft.count('class="rc-pt rc-probe"') == 2 * probes  # p50 and p95 of each probe
    assert ttft.count('class="rc-pt"') == 2 * (len(run.rates) - probes)
    xs = {float(x) for x in re.findall(r'data-x="([\d.]+)"', ttft)}
    assert xs == {lv.achieved_rps for lv in run.rates}  # against the achieved rate, not the offered one
    assert "TTFT p95: 974 ms at 2.846 req/s achieved (offered 2.875, probe 3)" in html.unescape(ttft)
    with_e2e = run.model_copy(update={"slo": run.slo.model_copy(update={"e2el": 6000.0})})
    assert len(openloop.latency_charts(with_e2e, "t")) == 3


def test_every_string_of_a_rate_level_is_escaped(capacity_entry):
    run = _run(capacity_entry)
    rates = [lv.model_copy(update={"label": "<script>x</script>", "probe": None}) for lv in run.rates[:2]]
    rates.append(run.rates[-1].model_copy(update={"verdict": "<b>missed</b> & more"}))
    cap = run.capacity.model_copy(update={"converged": False, "stopped": "<img src=x onerror=alert(1)>"})
    page = render_recipe(with_run(capacity_entry, rates=rates, capacity=cap)).markdown()
    assert "<script>" not in page and "<img" not in page and "<b>missed" not in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&lt;b&gt;missed&lt;/b&gt; &amp; more" in page


def test_a_run_with_rates_only_gets_its_own_section(capacity_entry):
    """An import of an open-loop tool (GuideLLM, AIPerf) gives rate levels without a concurrency sweep."""
    rates_only = _run(capacity_entry).model_copy(
        update={
            "levels": [],
            "capacity": None,
            "slo": None,
            "workload": _run(capacity_entry).workload.model_copy(update={"tool": "guidellm"}),
            "rates": [lv.model_copy(update={"verdict": None, "probe": None}) for lv in _run(capacity_entry).rates],
        }
    )
    entry = dataclasses.replace(capacity_entry, runs=[*capacity_entry.runs, rates_only])
    page = render_recipe(entry).markdown()
    assert page.count('<table class="rc-perf rc-rates">') == 2 and page.count('<table class="rc-perf">') == 1
    second = page.split('<h3 id="workload-2">')[1].split("<h2")[0]
    assert "guidellm" in page.split('<h3 id="workload-2">')[1].split("</h3>")[0]
    assert "no latency objective" in second and "Against the objective" not in second
    assert "<td>planned</td>" in second  # the runner's planned rates (this copy keeps the measured provenance)
    imported = rates_only.model_copy(
        update={
            "provenance": {"method": "imported", "source_title": "a GuideLLM report", "source": "benchmarks.json"},
        }
    )
    imported = type(rates_only).model_validate(dict(imported))
    rows = openloop.rows(imported)
    assert {r.name for r in rows} == {"imported"}


def test_rate_words():
    assert [capacity_headline.rate_floor(v) for v in (2.875, 12.7, 0.257, 3.1, 150.9)] == [
        "2.8",
        "12",
        "0.25",
        "3.1",
        "150",
    ]
    assert [capacity_headline.rate_text(v) for v in (2.875, 0.5, 3.0, 1234.5, None)] == [
        "2.875",
        "0.5",
        "3",
        "1,234",
        "—",
    ]


def test_a_search_cut_short_says_so_and_keeps_its_probes(capacity_entry):
    run = _run(capacity_entry)
    probes = [lv for lv in run.rates if lv.probe is not None]
    cut = with_run(
        capacity_entry, capacity=None, complete=False, incomplete_reason="the server died during probe 4 (node local)"
    )
    page = render_recipe(cut).markdown()
    assert (
        "The capacity search did not finish in this run</strong> (the server died during probe 4 (node local))" in page
    )
    assert f"its {len(probes)} probes so far are in the table below, and <code>--resume</code> finishes it" in page
    assert "No capacity search in this run" not in page
    assert (
        "Of the rates measured, the highest that met p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms was <strong>2.875 req/s"
        in page
    )
    assert len(_rates_table(page)) == len(run.rates)


def test_the_runner_timings_are_folded_away_and_the_search_line_is_not(repo):
    from catalogue.models.loading import load_entry

    entry = load_entry(repo / "examples" / "tiny-cpu-capacity")
    body = render_recipe(entry).body
    cap = entry.latest.capacity
    assert cap is not None and cap.rps is not None
    timings = re.search(r"<details class=\"rc-meta\"><summary>Runner timings \((\d+)\)</summary>(.*?)</details>", body)
    assert timings is not None, "no folded timings"
    assert "probe1: " in timings.group(2) and "server healthy after" in timings.group(2)
    assert int(timings.group(1)) == timings.group(2).count("<p>")
    outside = body.replace(timings.group(0), "")
    assert f"capacity search: {cap.rps:g} req/s within" in outside and "s wall" not in outside


def test_each_percentile_states_its_interval_or_that_it_has_none(capacity_entry):
    """With per-request data a percentile cell carries its 95 % interval (hover: from how many requests); one that
    too few requests cannot bound says so instead of standing as a bare figure."""
    run = _run(capacity_entry)
    first, second, *rest = run.rates
    bounded = first.ttft_ms.model_copy(update={"n": 150, "ci": {"p50": (100.0, 120.0), "p95": (900.0, 1500.0)}})
    few = second.ttft_ms.model_copy(update={"n": 20, "ci": {"p50": (90.0, 130.0)}})
    rates = [first.model_copy(update={"ttft_ms": bounded}), second.model_copy(update={"ttft_ms": few}), *rest]
    page = render_recipe(with_run(capacity_entry, rates=rates)).markdown()
    table = _rates_table(page)
    header = page.split('<table class="rc-perf rc-rates">')[1].split("</thead>")[0]
    names = [html.unescape(re.sub(r"<[^>]+>", "", h)).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", header)]
    p50, p95 = names.index("TTFT p50 (ms)"), names.index("TTFT p95 (ms)")
    assert table[0][p50].endswith("[100–120]") and table[0][p95].endswith("[900–1,500]")
    assert table[1][p95].endswith("unbounded") and table[1][p50].endswith("[90–130]")
    assert "95 % interval from 150 requests (order statistics)" in page
    assert "20 requests are too few to bound a p95" in page
    assert "[" not in table[2][p95]  # a level without per-request data: the figure as the tool gave it


def test_a_capacity_too_small_to_mean_anything_is_said_not_overflowed():
    """A run file is untrusted: 1e-308 req/s made the rounding scale overflow and stopped the whole build."""
    assert capacity_headline.rate_floor(1e-308) == "1.0e-308"
