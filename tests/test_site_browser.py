"""The built site in a real browser: Debian chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from catalogue.models.launch import split_command
from catalogue.models.topology import launch_argv
from tests.browser_support import EXAMPLES, _built_and_served, _opener

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def workloads_site(tmp_path_factory):
    """A site of one recipe into which `catalogue import` wrote three workloads (tests/workload_support.py)."""
    from tests.workload_support import import_three_workloads

    scratch = tmp_path_factory.mktemp("workloads")
    root, _ = import_three_workloads(scratch)
    yield from _built_and_served(scratch / "site", roots=[root, EXAMPLES])  # methodology links one example


@pytest.fixture
def open_page(browser, site):
    """Open a page; afterwards assert no console errors and no request left 127.0.0.1."""
    with _opener(browser, site) as go:
        yield go


@pytest.fixture
def open_workloads_page(browser, workloads_site):
    """`open_page` on the three-workload site."""
    with _opener(browser, workloads_site) as go:
        yield go


def _column(page, index: int) -> list[str]:
    return page.eval_on_selector_all(
        "#rc-index tbody tr[data-model]:not([hidden])",
        f"rows => rows.map(r => r.cells[{index}].getAttribute('data-value') ?? r.cells[{index}].textContent.trim())",
    )


SINGLE, BEST, PER_NODE, ROOFLINE = 5, 6, 7, 8
"""Columns of the index's c=1 generation, best generation, best per node, roofline share."""


def test_index_sorts_by_clicking_a_header(open_page):
    page = open_page("")
    # the seven seeds and the arena's gpt-oss-20b have figures, three launches none
    page.select_option("select[data-filter=family]", "gpt-oss")
    header = page.locator("#rc-index th", has_text="Best (tok/s)")
    header.click()
    ascending = [float(v) for v in _column(page, BEST) if v]
    assert ascending == sorted(ascending) and len(ascending) == 8
    header.click()
    descending = [float(v) for v in _column(page, BEST) if v]
    assert descending == sorted(ascending, reverse=True) and descending[0] == 567.9


def test_index_sorts_by_a_chosen_figure_and_filters_by_what_a_set_up_needs(open_page):
    page = open_page("")
    page.select_option("select[data-filter=family]", "gpt-oss")
    page.select_option("#rc-sort", "per_node")
    per_node = _column(page, PER_NODE)
    numbers = [float(v) for v in per_node if v]
    assert numbers == sorted(numbers, reverse=True) and len(numbers) == 8
    assert numbers[0] == 444.0  # the 131K community recipe's c=64, on one node
    page.select_option("#rc-sort", "roofline")
    roof = _column(page, ROOFLINE)
    known = [float(v) for v in roof if v]
    assert known == sorted(known, reverse=True) and roof[len(known) :] == [""] * (len(roof) - len(known))
    page.select_option("#rc-sort", "single")
    single = [float(v) for v in _column(page, SINGLE) if v]
    assert single == sorted(single, reverse=True)
    page.select_option("select[data-filter=nodes]:not([data-fit])", "2")
    assert page.locator("#rc-count").text_content() == "4 recipe(s)"  # three seeds and eugr's TP=2 launch
    assert set(_column(page, 1)) == {"2"}
    assert page.locator("#rc-launch-count").text_content() == "1"  # the launch, in the folded list
    titles = page.eval_on_selector_all(
        "#rc-index thead th", "ths => ths.map(t => t.title || t.querySelector('abbr').title)"
    )
    assert len(titles) == 12 and all(len(t) > 20 for t in titles), titles  # 11 figures and the agent sessions


def test_index_is_a_list_of_cards_on_a_phone(open_page):
    page = open_page("", width=375)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    assert page.locator("#rc-index thead").is_hidden()
    first = page.locator("#rc-index tbody tr[data-model]").first
    assert first.bounding_box()["width"] <= 375
    label = first.locator("td[data-label='Best (tok/s)']")
    assert label.is_visible() and "Best (tok/s)" in label.evaluate("td => getComputedStyle(td, '::before').content")
    assert page.locator("#rc-index td.rc-empty").count() and page.evaluate(
        "[...document.querySelectorAll('#rc-index td.rc-empty')].every(td => getComputedStyle(td).display === 'none')"
    ), "a card shows only the fields with a value"
    assert page.locator("#rc-filters").is_hidden()  # folded on a phone: the list comes first
    page.locator("#rc-filterbox summary").click()
    page.select_option("#rc-sort", "single")  # sorting without headers


def test_index_filters(open_page):
    page = open_page("")
    page.select_option("select[data-filter=family]", "gpt-oss")
    page.select_option("select[data-filter=topology]", "solo")
    assert page.locator("#rc-count").text_content() == "7 recipe(s)"  # four seeds, two launches, the arena's 20b
    page.select_option("select[data-filter=status]", "production")
    titles = page.eval_on_selector_all(
        "tr[data-model]:not([hidden]) td:first-child a", "cells => cells.map(c => c.textContent)"
    )
    assert titles == ["openai/gpt-oss-120b on ASUS GX10 / DGX Spark (concurrency-first)"]
    page.select_option("select[data-filter=status]", "")
    page.select_option("select[data-filter=topology]", "")
    page.fill("input[data-filter=text]", "least-busy")
    assert page.locator("#rc-count").text_content() == "1 recipe(s)"
    page.fill("input[data-filter=text]", "")
    page.select_option("select[data-filter=vllm]", "0.29")  # every seed recipe's flags parse on 0.29
    accepted = page.eval_on_selector_all(
        "tr[data-family='gpt-oss']",
        "rows => rows.filter(r => r.dataset.vllm.split(' ').includes('0.29')).length",
    )
    assert accepted >= 7 and page.locator("#rc-count").text_content() == f"{accepted} recipe(s)"


WORKLOADS = [
    # (heading words, figures in its table: prefill and generation at c=1)
    ("vllm bench serve · random · prompt 64 / output 16 tokens", ["808.9", "170.5"]),
    ("llama-benchy 0.4.0 · llama-benchy's generated prompts · prompt 128 / output 128 tokens", ["2,503.3", "117.5"]),
    ("llama-benchy 0.4.0 · llama-benchy's generated prompts · prompt 64 / output 128 tokens", ["1,668.9", "117.5"]),
]


def test_three_imported_workloads_each_show_their_figures(open_workloads_page):
    page = open_workloads_page("recipes/gptoss-120b-topology-solo/")
    headings = page.locator("h3[id^=workload-]")
    assert headings.count() == 3
    for i, (words, figures) in enumerate(WORKLOADS):
        heading = headings.nth(i)
        assert words in heading.text_content()
        table = page.locator(f"h3#workload-{i + 1} ~ div.rc-scroll table.rc-perf").first
        assert table.is_visible()
        first_row = table.locator("tbody tr").first.locator("td").all_text_contents()
        assert first_row[0] == "1" and all(any(cell.startswith(f) for cell in first_row) for f in figures), first_row
        chart = page.locator(f"h3#workload-{i + 1} ~ figure div.rc-chart").first
        assert words.split(" · ")[0] in chart.locator(".rc-chart-title").text_content()
    history = page.locator("table.rc-history tbody tr")
    assert history.count() == 3
    assert [c.split(" · ")[0] for c in page.locator("table.rc-history td.rc-workload").all_text_contents()] == [
        "vllm bench serve",
        "llama-benchy 0.4.0",
        "llama-benchy 0.4.0",
    ]
    toc = page.eval_on_selector_all("nav.md-nav--secondary a.md-nav__link", "a => a.map(x => x.getAttribute('href'))")
    assert "#performance" in toc and "#run-history" in toc


def test_index_names_the_workload_of_its_figures(open_workloads_page):
    page = open_workloads_page("")
    cell = page.locator("#rc-index tbody tr .rc-workload").first.text_content()
    assert cell.startswith("solo · Figures: vllm bench serve · random · prompt 64 / output 16 tokens")
    assert float(_column(page, SINGLE)[0]) == pytest.approx(170.465, abs=0.01)


@pytest.mark.parametrize("width", [1400, 375])
def test_three_workload_page_fits_desktop_and_phone(open_workloads_page, width):
    page = open_workloads_page("recipes/gptoss-120b-topology-solo/", width=width)
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / f"three-workloads-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_recipe_chart_has_one_point_per_level(open_page):
    page = open_page("recipes/gptoss-120b/")
    chart = page.locator("div.rc-chart").first
    assert chart.is_visible()
    xs = chart.locator('.rc-pts[data-series="Generation"] .rc-pt').evaluate_all(
        "ps => ps.map(p => Number(p.dataset.x))"
    )
    assert xs == [1, 2, 4, 5, 8, 10, 16, 32, 64, 128, 256]
    peaks = chart.locator('.rc-pts[data-series="Peak"] .rc-pt').evaluate_all("ps => ps.map(p => Number(p.dataset.y))")
    assert peaks[-1] == 1024
    box = chart.locator(".rc-pt").first.bounding_box()
    assert box["width"] == box["height"] == 9, "points stay round when the plot stretches"


def test_chart_point_shows_its_value_on_hover(open_page):
    page = open_page("recipes/gptoss-120b/")
    page.locator('div.rc-chart .rc-pts[data-series="Generation"] .rc-pt').nth(10).hover()
    tip = page.locator(".rc-tip").first
    assert tip.is_visible() and tip.text_content() == "Generation: 286 tok/s at concurrency 256"


def test_recipe_page_has_the_theme_and_a_table_of_contents(open_page):
    page = open_page("recipes/gptoss-120b/")
    assert page.locator("h1").count() == 1
    toc = page.eval_on_selector_all(
        "nav.md-nav--secondary a.md-nav__link", "links => links.map(a => a.getAttribute('href'))"
    )
    assert "#performance" in toc and "#launch-command" in toc
    page.locator("nav.md-nav--secondary a.md-nav__link[href='#launch-command']").click()
    assert page.evaluate("location.hash") == "#launch-command"


def test_copy_button_copies_the_exact_launch_command(open_page, entries):
    page = open_page("recipes/gptoss-120b/")
    block = page.locator("h2#launch-command ~ div.highlight").first
    block.hover()
    block.locator("button.md-code__button, button.md-clipboard").first.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert split_command(copied) == launch_argv(entries["gptoss-120b"].recipe, entries["gptoss-120b"].platform)


def _luminance(rgb: str) -> float:
    values = [int(v) / 255 for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in values]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chart_text_readable_in_both_palettes(open_page, scheme):
    page = open_page("recipes/gptoss-120b/", scheme)
    assert page.get_attribute("body", "data-md-color-scheme") == ("slate" if scheme == "dark" else "default")
    fill = page.eval_on_selector("div.rc-chart .rc-xtick", "t => getComputedStyle(t).color")
    background = page.eval_on_selector("body", "b => getComputedStyle(b).backgroundColor")
    light, dark = sorted([_luminance(fill), _luminance(background)], reverse=True)
    assert (light + 0.05) / (dark + 0.05) >= 4.5, (fill, background)


def test_comparison_page_renders(open_page):
    page = open_page("compare/openai-gpt-oss-120b--dgx-spark/")
    assert page.locator("table.rc-compare").count() >= 3
    assert page.locator("td.rc-best").count() > 0
    assert (
        page.locator("nav.md-nav--primary").first.is_hidden()
        and page.locator("nav.md-nav--secondary").first.is_hidden()
    )


def test_pareto_chart_has_every_point_and_its_frontier(open_page):
    page = open_page("compare/openai-gpt-oss-120b--dgx-spark/")
    chart = page.locator("div.rc-chart").first
    assert "tok/s per user" in chart.locator(".rc-chart-title").text_content()
    points = chart.locator(".rc-pt").evaluate_all("ps => ps.map(p => [Number(p.dataset.x), Number(p.dataset.y)])")
    assert len(points) == 4 * 7  # four set-ups, seven levels each
    from catalogue.site.charts import pareto_frontier

    frontier = chart.locator("path.rc-frontier").get_attribute("d")
    assert len(frontier.split("L")) == len(pareto_frontier([tuple(p) for p in points])) >= 2


def test_legend_toggles_a_series(open_page):
    page = open_page("compare/openai-gpt-oss-120b--dgx-spark/")
    chart = page.locator("div.rc-chart").first
    key, series = chart.locator("button.rc-key").first, chart.locator('.rc-pts[data-index="0"] .rc-pt').first
    assert series.is_visible()
    key.click()
    assert key.get_attribute("aria-pressed") == "false" and series.is_hidden()
    key.click()
    assert key.get_attribute("aria-pressed") == "true" and series.is_visible()


def test_stale_badge_says_by_how_much(open_page):
    page = open_page("examples/tiny-cpu-docker/")
    badge = page.locator(".rc-stale")
    assert badge.is_visible() and badge.text_content() == "stale: measured with vLLM 0.32.0, 1 release behind 0.33.0"
    drift = page.locator(".rc-drift").text_content()
    assert all(f"vLLM 0.{v} ✓" in drift for v in (29, 30, 31, 32, 33))


PAGES = [
    "",
    "compare/openai-gpt-oss-120b--dgx-spark/",
    "recipes/gptoss-120b/",
    "recipes/gptoss-120b-topology-cluster-tp2/",
    "examples/tiny-cpu-docker/",
    "examples/tiny-cpu-replicas/",
    "examples/tiny-cpu-capacity/",  # a measured open-loop sweep and capacity search: headline, rate table, charts
]
ARTEFACTS = (
    Path(os.environ.get("CATALOGUE_ARTEFACTS", Path(__file__).resolve().parents[1] / "artefacts")) / "screenshots"
)


@pytest.mark.parametrize("width", [1400, 375])
def test_layout_at_desktop_and_phone_width(browser, site, width):
    """Charts fill the column (>= 600 px on a desktop), labels >= 12 px, nothing scrolls sideways; screenshots kept."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        for path in PAGES:
            page.goto(f"{site}/{path}")
            page.wait_for_load_state("networkidle")
            name = (path.strip("/").replace("/", "__") or "index") + f"-{width}.png"
            page.screenshot(path=str(ARTEFACTS / name), full_page=True)
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (
                f"{path} scrolls sideways at {width} px"
            )
            column = page.eval_on_selector("article.md-content__inner", "a => a.getBoundingClientRect().width")
            for chart in page.locator("div.rc-chart").all():
                chart.scroll_into_view_if_needed()
                plot = chart.locator("svg").bounding_box()["width"]
                assert plot >= (600 if width >= 1400 else 0.7 * column), (path, plot, column)
                sizes = chart.locator(
                    ".rc-xtick, .rc-ytick, .rc-key, .rc-chart-title, .rc-rule-label, .rc-mark-label"
                ).evaluate_all("els => els.map(e => parseFloat(getComputedStyle(e).fontSize))")
                assert sizes and min(sizes) >= 12, (path, min(sizes))
        if width >= 1400:
            page.goto(f"{site}/")
            table = page.locator("#rc-index").bounding_box()["width"]
            assert table >= 0.75 * width, "the index uses the full width"
    finally:
        context.close()


CAPACITY_VARIANTS = {
    # id suffix: (what the copy changes in its capacity, and in its objective)
    "pinned": ({}, {}),
    "stopped": ({"rps": 1.5, "converged": False, "stopped": "the time budget of 1200 s ran out"}, {}),
    "missed": ({"rps": None, "upper_rps": 0.5, "converged": False, "concurrent_requests": None}, {}),
    "looser": ({"rps": 4.0, "upper_rps": 4.4}, {"ttft": 2000.0}),
}


def capacity_catalogue(root: Path) -> Path:
    """The capacity fixture as it is (an example), and published copies whose capacity is pinned, stopped early,
    missed at the lowest rate, or measured under a looser objective: an index and a comparison page to look at."""
    import json

    from tests.conftest import SITE_FIXTURES

    source = SITE_FIXTURES / "capacity-fixture"
    shutil.copytree(source, root / "capacity-fixture")
    for suffix, (capacity, slo) in CAPACITY_VARIANTS.items():
        folder = root / f"capacity-fixture-{suffix}"
        shutil.copytree(source, folder)
        recipe = folder / "recipe.yaml"
        text = recipe.read_text().replace("publish: false", "publish: true")
        recipe.write_text(text.replace("title: 'Capacity page fixture", f"title: 'Capacity page fixture, {suffix},"))
        (run_file,) = (folder / "runs").glob("*.json")
        run = json.loads(run_file.read_text())
        run["capacity"].update(capacity)
        run["slo"].update(slo)
        run_file.write_text(json.dumps(run))
    return root


@pytest.fixture(scope="session")
def capacity_site(tmp_path_factory):
    """A site of the capacity fixture and its published variants, beside the examples (methodology links one)."""
    scratch = tmp_path_factory.mktemp("capacity")
    root = capacity_catalogue(scratch / "recipes")
    yield from _built_and_served(scratch / "site", roots=[root, EXAMPLES], links_checked=True)


@pytest.fixture
def open_capacity_page(browser, capacity_site):
    with _opener(browser, capacity_site) as go:
        yield go


@pytest.mark.parametrize("width", [1400, 375])
def test_capacity_headline_and_latency_chart_fit_desktop_and_phone(open_capacity_page, width):
    page = open_capacity_page("examples/capacity-fixture/", width=width)
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / f"capacity-fixture-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    headline = page.locator("#workload-1-capacity .rc-capacity-figure")
    assert headline.is_visible()
    assert headline.text_content().startswith("Serves 2.8 req/s within p95 TTFT ≤ 1 s and p95 TPOT ≤ 50 ms")
    assert headline.bounding_box()["width"] <= width
    charts = page.locator("h4#workload-1-rates ~ figure div.rc-chart")
    assert charts.count() == 2
    ttft = charts.first
    ttft.scroll_into_view_if_needed()
    assert "TTFT against load" in ttft.locator(".rc-chart-title").text_content()
    plot = ttft.locator(".rc-plot").bounding_box()
    for label in (ttft.locator(".rc-rule-label"), ttft.locator(".rc-mark-label")):
        box = label.bounding_box()
        assert label.is_visible() and plot["x"] <= box["x"] and box["x"] + box["width"] <= plot["x"] + plot["width"] + 1
    assert ttft.locator(".rc-pt.rc-probe").count() == 6 and ttft.locator(".rc-pt:not(.rc-probe)").count() == 8
    table = page.locator("table.rc-rates")
    assert table.locator("tbody tr").count() == 7 and table.locator("tr.rc-capacity-row").count() == 1
    scroller = page.locator("div.rc-scroll", has=table)
    assert scroller.bounding_box()["width"] <= width  # a wide table scrolls inside its own box


def test_a_probe_point_shows_its_reading(open_capacity_page):
    page = open_capacity_page("examples/capacity-fixture/")
    point = page.locator('div.rc-chart .rc-pts[data-series="TTFT p95"] .rc-pt.rc-probe').first
    point.scroll_into_view_if_needed()
    point.hover()
    tip = page.locator(".rc-tip:visible")
    assert tip.text_content() == "TTFT p95: 817 ms at 2.663 req/s achieved (offered 2.69, probe 2)"


CAPACITY = 10
"""Column of the index's capacity."""


def test_index_sorts_by_capacity_and_names_each_objective(open_capacity_page):
    page = open_capacity_page("")
    page.select_option("#rc-sort", "capacity")
    assert _column(page, CAPACITY) == ["4.0", "2.875", "1.5", "0.0"]
    shown = page.locator("#rc-index tbody td[data-label='Capacity (req/s)']").all_text_contents()
    assert [" ".join(t.split()) for t in shown] == [
        "4 p95 TTFT ≤ 2 s, TPOT ≤ 50 ms",
        "2.875 p95 TTFT ≤ 1 s, TPOT ≤ 50 ms",
        "≥ 1.5 p95 TTFT ≤ 1 s, TPOT ≤ 50 ms",
        "< 0.5 p95 TTFT ≤ 1 s, TPOT ≤ 50 ms",
    ]
    title = page.locator("#rc-index th[data-key=capacity] abbr").get_attribute("title")
    assert "objective" in title and "Compare only figures under the same objective and workload" in title


@pytest.mark.parametrize("width", [1400, 375])
def test_capacity_comparison_and_index_fit_desktop_and_phone(browser, capacity_site, width):
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        for path in ("", "compare/catalogue-tiny-llama-cpu--cpu/"):
            page.goto(f"{capacity_site}/{path}")
            page.wait_for_load_state("networkidle")
            name = "capacity-" + (path.strip("/").replace("/", "__") or "index") + f"-{width}.png"
            page.screenshot(path=str(ARTEFACTS / name), full_page=True)
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (path, width)
            if not path and width >= 1400:  # every column of the index, the capacity too, fits without scrolling
                inner, box = page.evaluate(
                    "(t => [t.scrollWidth, t.parentElement.clientWidth])(document.getElementById('rc-index'))"
                )
                assert inner <= box, (inner, box)
        table = page.locator("table.rc-capacity-table")
        assert table.count() == 1 and table.locator("tbody tr").count() == 3
        assert page.locator("h2#capacity ~ p", has_text="No recipe is named best").count() == 1
    finally:
        context.close()
