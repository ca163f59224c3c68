"""Page: plain data and its Markdown writer (the MkDocs side is tests/test_mkdocs_adapter.py)."""

from __future__ import annotations

import html

import markdown
import pytest

from catalogue.site.page import Page

BODY = (
    '<div class="rc-page">\n<h2 id="one">One<a class="headerlink" href="#one">¶</a></h2>\n<p>x</p>\n'
    '<h2 id="two">Two &amp; more<a class="headerlink" href="#two">¶</a></h2>\n</div>'
)
PAGE = Page("recipes/x.md", "A *title* <b>", "Line one\n  line two", head="<p>head</p>", lead="<p>lead</p>", body=BODY)


def test_sections_are_the_h2_anchors_in_order():
    assert PAGE.sections == [("one", "One"), ("two", "Two &amp; more")]


def test_markdown_has_front_matter_title_and_every_block():
    text = PAGE.markdown()
    assert text.startswith('---\ntitle: "A *title* <b>"\ndescription: "Line one line two"\n---\n\n')  # plain text
    assert "# A \\*title\\* &lt;b&gt;\n\n<p>head</p>\n\n<p>lead</p>\n\n" + BODY in text


def test_description_is_shortened_at_a_word_for_search_engines():
    page = Page("a.md", "t", "word " * 60)
    description = page.meta["description"]
    assert len(description) <= 160 and description.endswith("word…")
    assert Page("a.md", "t", "short").meta == {"title": "t", "description": "short"}


def test_hide_goes_into_the_front_matter():
    assert Page("index.md", "t", "d", hide=("navigation",)).meta["hide"] == ["navigation"]


HOSTILE_TITLES = [
    'Tiny {: onclick="alert(1)" }',
    "Tiny { #x .y onclick='alert(1)' }",
    'Tiny <img src=x onerror="alert(1)">',
    "Tiny\n\n{: onclick=alert(1) }",
    "Tiny &lt;b&gt; [link](javascript:alert(1))",
]


@pytest.mark.parametrize("title", HOSTILE_TITLES)
def test_a_title_renders_as_its_own_text_with_the_exports_extensions(title):
    """Rendered by Python-Markdown with the export's extensions (tools/zensical_check.py): one h1, no attribute,
    no element of the title's, and the text reads as the title."""
    rendered = markdown.markdown(
        Page("x.md", title, "d").markdown().split("---\n", 2)[2],
        extensions=["admonition", "attr_list", "md_in_html"],
    )
    assert rendered.startswith("<h1>") and rendered.endswith("</h1>"), rendered
    assert rendered.count("<") == 2, rendered  # <h1> and </h1>: no element, no attribute
    shown = html.unescape(rendered.removeprefix("<h1>").removesuffix("</h1>"))
    assert shown == " ".join(title.split())
