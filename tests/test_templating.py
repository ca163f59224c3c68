"""catalogue.site.templating: compiled templates kept on disk between processes, never shared by environments that
compile a template differently, never kept when the source changed."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
from markupsafe import Markup

from catalogue.site.templating import CompiledOnDisk, compile_settings, environment

TEMPLATE = "{% if x %}\n  yes {{ x }}\n{% endif %}\nend\n"


def _env(folder: Path, cache: Path, **options: object) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), autoescape=True, **options)  # type: ignore[arg-type]
    env.bytecode_cache = CompiledOnDisk(env, str(cache))
    return env


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "t").mkdir()
    (tmp_path / "cache").mkdir()
    (tmp_path / "t" / "page.j2").write_text(TEMPLATE)
    return tmp_path / "t", tmp_path / "cache"


def test_a_second_process_loads_the_compiled_template_instead_of_compiling_it(folders, monkeypatch):
    templates, cache = folders
    first = _env(templates, cache).get_template("page.j2").render(x="<b>")
    assert list(cache.iterdir()), "the compiled template was not written"

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again")

    later = _env(templates, cache)
    monkeypatch.setattr(later, "compile", no_compile)
    assert later.get_template("page.j2").render(x="<b>") == first == "\n  yes &lt;b&gt;\n\nend"


def test_environments_that_compile_differently_do_not_share_an_entry(folders):
    templates, cache = folders
    trimmed = _env(templates, cache, trim_blocks=True, lstrip_blocks=True).get_template("page.j2").render(x=1)
    plain = _env(templates, cache).get_template("page.j2").render(x=1)
    assert trimmed == "  yes 1\nend"
    assert plain == "\n  yes 1\n\nend"
    assert len(list(cache.iterdir())) == 2


def test_a_changed_source_is_compiled_again(folders):
    templates, cache = folders
    assert _env(templates, cache).get_template("page.j2").render(x=1) == "\n  yes 1\n\nend"
    (templates / "page.j2").write_text("changed {{ x }}\n")
    assert _env(templates, cache).get_template("page.j2").render(x=1) == "changed 1"


def test_autoescape_by_function_keeps_nothing(folders):
    templates, cache = folders
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates), autoescape=jinja2.select_autoescape())
    env.bytecode_cache = CompiledOnDisk(env, str(cache))
    assert compile_settings(env) is None
    env.get_template("page.j2").render(x=1)
    assert not list(cache.iterdir())


def test_a_filter_that_takes_the_context_changes_the_key():
    env = jinja2.Environment()
    env.filters["f"] = lambda value: value
    before = compile_settings(env)
    env.filters["f"] = jinja2.pass_context(lambda context, value: value)
    assert compile_settings(env) != before


MACRO = (
    '{% macro h3(id, text) %}<h3 id="{{ id }}">{{ text }}<a class="headerlink" href="#{{ id }}">¶</a></h3>'
    "{% endmacro %}"
    "{{ h3(anchor, text) }}"
)
"""The Jinja macro the heading functions replaced."""


@pytest.mark.parametrize(
    ("anchor", "text"),
    [
        ("why", "Why this recipe exists"),
        ('a"<b>', "x & y 'z'"),
        ("workload-1", Markup("<em>kept</em> & as is")),
        (3, 4),
    ],
)
def test_a_heading_is_what_the_macro_wrote(anchor, text):
    macro = jinja2.Environment(autoescape=True).from_string(MACRO).render(anchor=anchor, text=text)
    assert environment().from_string("{{ h3(anchor, text) }}").render(anchor=anchor, text=text) == macro
