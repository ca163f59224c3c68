"""The built site in chromium, measured: the index's height on a phone and its columns on a desktop, how soon a
recipe page shows its answer, the "what fits my machine" choice, and axe-core's accessibility rules on each kind
of page (tests/data/axe: the vendored axe-core, injected through Playwright)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from catalogue.models.launch import split_command
from catalogue.models.topology import launch_argv
from catalogue.site.index_page import index_row
from catalogue.site.view import hardware_line
from tests.browser_support import _opener

pytestmark = pytest.mark.browser
AXE = Path(__file__).parent / "data" / "axe" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
"""axe-core 4.14.1's axe.min.js as the npm registry publishes it (tests/data/axe/README.md)."""
PHONE, SCREEN = 375, 667
"""A phone's width and the height of one screen of it (the screens counted below)."""
RECIPE = "recipes/gptoss-120b/"
MODEL = "models/openai-gpt-oss-120b/"


@pytest.fixture
def open_page(browser, site):
    with _opener(browser, site) as go:
        yield go


def _viewport(page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": SCREEN if width < 768 else 900})


def test_the_index_on_a_phone_is_at_most_12000_px_and_reaches_every_recipe(open_page, entries):
    page = open_page("", width=PHONE)
    _viewport(page, PHONE)
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= 12_000, height
    published = sorted(e.id for e in entries.values() if e.recipe.publish)
    page.locator("#rc-launch-only summary").click()  # the launch-only recipes, folded and counted
    links = page.eval_on_selector_all(
        "tr[data-model] td:first-child a",
        "as => as.filter(a => a.getBoundingClientRect().height > 0).map(a => a.pathname.split('/').at(-2))",
    )
    assert sorted(links) == published


def _clipped(page, tables: str) -> list[str]:
    """The cells of the tables `tables` selects whose right edge is past their scroll box's (cut off on screen)."""
    return page.evaluate(
        """sel => [...document.querySelectorAll(sel)].flatMap(t => {
            const box = t.closest('.rc-scroll').getBoundingClientRect();
            return [...t.querySelectorAll('th, td')].filter(c => c.getBoundingClientRect().width > 0
                && c.getBoundingClientRect().right > box.right + 0.5).map(c => t.className + ':' + c.cellIndex);
        })""",
        tables,
    )


def test_no_index_column_is_clipped_at_1400_px(open_page):
    page = open_page("", width=1400)
    assert _clipped(page, "table.rc-index") == []
    rows = page.locator("#rc-index tr[data-model]").all()
    line = page.eval_on_selector("#rc-index tr[data-model] td:first-child a", "a => a.getBoundingClientRect().height")
    assert all(r.bounding_box()["height"] <= 3.2 * line for r in rows[:20]), "one line per recipe, and its workload"


@pytest.mark.parametrize("width", [1400, PHONE])
def test_a_model_pages_figures_and_a_recipes_comparisons_are_in_view(open_page, width):
    """No cell of a model page's recipe tables, or of a recipe's published comparisons, is cut off; on a phone each
    recipe is a card whose figures are inside the screen."""
    page = open_page(MODEL, width=width)
    _viewport(page, width)
    assert _clipped(page, "table.rc-models") == []
    rights = page.eval_on_selector_all(
        "table.rc-models [data-figure]", "cs => cs.map(c => c.getBoundingClientRect().right)"
    )
    page = open_page(RECIPE, width=width)
    _viewport(page, width)
    assert page.locator("table.rc-published").count() == 1 and _clipped(page, "table.rc-published") == []
    assert rights and max(rights) <= width


def _longest_head(entries) -> str:
    """The published recipe with the most text above its answer box and in it (title, hardware line, weights,
    workload): the page whose figures and launch command sit lowest."""

    def size(entry) -> int:
        workload = index_row(entry, None)["workload"] or ""
        return sum(map(len, (entry.recipe.title, hardware_line(entry.recipe), entry.recipe.quantization, workload)))

    return f"recipes/{max((e for e in entries.values() if e.recipe.publish), key=size).id}/"


@pytest.mark.parametrize("width", [1400, PHONE])
def test_a_recipe_page_shows_its_figures_and_launch_command_first(open_page, entries, width):
    for path in (RECIPE, _longest_head(entries)):
        page = open_page(path, width=width)
        _viewport(page, width)
        limit = 900 if width >= 1400 else 2 * SCREEN
        figure = page.locator(".rc-answer [data-figure]").first.bounding_box()
        launch = page.locator(".rc-answer pre").first.bounding_box()
        assert figure["y"] + figure["height"] <= limit and launch["y"] <= limit, (path, figure, launch)
        assert page.locator(".rc-answer").bounding_box()["y"] < page.locator("h2#why").bounding_box()["y"]


def test_the_answer_box_copies_the_exact_launch_command_and_links_each_figure(open_page, entries):
    page = open_page(RECIPE)
    block = page.locator(".rc-answer div.highlight").first
    block.hover()
    block.locator("button.md-code__button, button.md-clipboard").first.click()
    entry = entries["gptoss-120b"]
    assert split_command(page.evaluate("navigator.clipboard.readText()")) == launch_argv(entry.recipe, entry.platform)
    for link in page.locator(".rc-fig > a").all():
        href = link.get_attribute("href")
        assert "methodology/" in href
        link.click()
        page.wait_for_load_state("networkidle")
        anchor = page.evaluate("location.hash").lstrip("#")
        assert page.locator("h1").count() == 1 and (not anchor or page.locator(f"[id='{anchor}']").count() == 1)
        page.go_back()


def test_what_fits_my_machine_keeps_the_best_recipe_of_each_model(open_page):
    page = open_page("")
    page.select_option("select[data-fit][data-filter=nodes]", "1")
    rows = page.eval_on_selector_all(
        "tr[data-model]",
        "rs => rs.map(r => [r.dataset.model, r.dataset.nodes, r.dataset.best, r.hidden])",
    )
    shown = [r for r in rows if not r[3]]
    assert len({r[0] for r in shown}) == len(shown), "one recipe per model"
    assert all(r[1] == "1" for r in shown)
    for model, _, best, _ in shown:
        fitting = [float(r[2]) for r in rows if r[0] == model and r[1] == "1" and r[2]]
        assert (float(best) if best else None) == (max(fitting) if fitting else None), model
    page.select_option("select[data-fit][data-filter=nodes]", "")
    assert all(
        not hidden for *_, hidden in page.eval_on_selector_all("tr[data-model]", "rs => rs.map(r => [r.hidden])")
    )


def _axe(page) -> list[str]:
    assert hashlib.sha256(AXE.read_bytes()).hexdigest() == AXE_SHA256, "tests/data/axe/axe.min.js changed"
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} -- {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("path", ["", MODEL, RECIPE, "compare/openai-gpt-oss-120b--dgx-spark/"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_or_critical_violation(open_page, path, scheme):
    page = open_page(path, scheme)
    assert _axe(page) == []
