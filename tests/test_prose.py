"""Recipe text to HTML, and links between generated pages."""

from __future__ import annotations

from catalogue.site.prose import inline, paragraphs
from catalogue.site.urls import link, page_url


def test_text_is_escaped_and_code_spans_become_code():
    assert str(inline('a < b `<x>` & "c"')) == 'a &lt; b <code>&lt;x&gt;</code> &amp; "c"'
    assert str(inline("`` a`b ``")) == "<code>a`b</code>"
    assert str(inline("**not bold** [not](a link)")) == "**not bold** [not](a link)"


def test_blank_lines_separate_paragraphs():
    assert str(paragraphs("one\ntwo\n\n  \nthree")) == "<p>one\ntwo</p>\n<p>three</p>"


def test_page_urls_follow_directory_urls():
    assert [page_url(p) for p in ("index.md", "compare/index.md", "recipes/x.md")] == ["", "compare/", "recipes/x/"]
    assert link("recipes/x.md", "compare/y.md") == "../../compare/y/"
    assert link("index.md", "recipes/x.md") == "recipes/x/"
    assert link("recipes/x.md", "index.md") == "../../"
    assert link("compare/index.md", "compare/y.md") == "y/"
    assert link("index.md", "index.md", "top") == "./#top"
