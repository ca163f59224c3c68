"""The Jinja2 environment for page bodies, and the filters the templates use."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from catalogue.site.prose import code_html, inline, paragraphs

TEMPLATES = Path(__file__).parent / "templates"


def fmt_num(value: Any) -> str:
    """Figures for tables: thousands separators, no trailing zeros, an em dash for none."""
    if value is None or value == "":
        return "—"
    number = float(value)
    if number.is_integer():
        return f"{int(number):,}"
    return f"{number:,.1f}" if abs(number) >= 100 else f"{number:,.2f}".rstrip("0").rstrip(".")


def fmt_rate(value: Any) -> str:
    """A request rate as measured or probed: up to four significant figures ('2.875', '0.5', '12.5', '1,234')."""
    if value is None or value == "":
        return "—"
    number = float(value)
    if number >= 1000:
        return f"{number:,.0f}"
    return f"{float(f'{number:.4g}'):g}"


def heading(level: int) -> Any:
    """The template function `h<level>(id, text)`: a heading with its anchor link, both values escaped (a Python
    function: as a Jinja macro, its 20 calls a recipe page took a tenth of the page's render)."""

    def h(anchor: Any, text: Any) -> Markup:
        anchor = escape(anchor)
        return Markup(f'<h{level} id="{anchor}">{escape(text)}<a class="headerlink" href="#{anchor}">¶</a></h{level}>')

    return h


def code(text: str) -> Markup:
    """Inline code."""
    return Markup(code_html(text))


def code_block(text: str) -> Markup:
    """A code block in the markup Material gives a copy button."""
    return Markup(f'<div class="highlight"><pre>{code_html(text)}</pre></div>')


TIMING = re.compile(
    r"^(\S+: [\d.]+ s wall\b|preflight and provenance took |server healthy after |router live after |ray cluster of )"
)
"""Notes the runner writes about its own timing (per level, boot, router): kept, but folded away on the page."""


def timing_notes(notes: list[str], timing: bool) -> list[str]:
    """The runner's timing notes (`timing`), or every other note."""
    return [note for note in notes if bool(TIMING.match(note)) == timing]


@lru_cache(maxsize=1)
def environment() -> Environment:
    """Autoescaping on, so every recipe string is HTML-escaped; block tags leave no blank lines."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # no stat per template per page: `mkdocs serve` makes a new environment when code changes
        cache_size=-1,  # a plain dict: every template stays, and a look-up (each include) is not an LRU reordering
    )
    env.bytecode_cache = compiled_on_disk(env)
    env.filters.update(num=fmt_num, rps=fmt_rate, code=code, codeblock=code_block, inline=inline, prose=paragraphs)
    env.globals.update(h2=heading(2), h3=heading(3), h4=heading(4))
    env.filters.update(timings=lambda notes: timing_notes(notes, True), facts=lambda notes: timing_notes(notes, False))
    return env


def compile_settings(env: Environment) -> str | None:
    """What a template's compiled code depends on besides its source: the Jinja version, the environment's syntax
    and output options, its extensions, and how each filter and test is called (`pass_context` and its kin are read
    when a template compiles). None when autoescaping is decided by a function (not compared here: nothing kept)."""
    if not isinstance(env.autoescape, bool):
        return None
    calls = [
        (kind, name, str(getattr(func, "jinja_pass_arg", "")))
        for kind, table in (("filter", env.filters), ("test", env.tests))
        for name, func in sorted(table.items())
    ]
    settings = (
        jinja2.__version__,
        env.block_start_string,
        env.block_end_string,
        env.variable_start_string,
        env.variable_end_string,
        env.comment_start_string,
        env.comment_end_string,
        env.line_statement_prefix,
        env.line_comment_prefix,
        env.trim_blocks,
        env.lstrip_blocks,
        env.newline_sequence,
        env.keep_trailing_newline,
        env.optimized,
        env.autoescape,
        env.is_async,
        getattr(env.finalize, "__qualname__", None),
        sorted(env.extensions),
        calls,
    )
    return hashlib.sha256(repr(settings).encode()).hexdigest()[:16]


class CompiledOnDisk(jinja2.FileSystemBytecodeCache):
    """Jinja's own cache of compiled templates in the user's private temporary folder, so that a build does not
    compile them again (a third of a second of every site build here: the page templates and Material's). Jinja
    keeps an entry only while its source's checksum matches; the key adds `compile_settings`, so environments that
    compile the same file differently never share an entry."""

    def __init__(self, env: Environment, directory: str | None = None) -> None:
        super().__init__(directory, pattern="__catalogue_%s.cache")
        self.env = env

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return super().get_cache_key(f"{compile_settings(self.env)}|{name}", filename)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if compile_settings(self.env) is not None:
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if compile_settings(self.env) is not None:
            try:
                super().dump_bytecode(bucket)
            except OSError:  # a full or read-only disk: the next build compiles it again
                pass


def compiled_on_disk(env: Environment) -> CompiledOnDisk | None:
    """The environment's templates compiled once and kept on disk between processes; None (each process compiles)
    where Jinja cannot make its private folder (no temp folder, or one that another user owns)."""
    try:
        return CompiledOnDisk(env)
    except (OSError, RuntimeError):
        return None


def compile_templates() -> None:
    """Compile every page template now, into the environment's cache: before a batch is forked (catalogue.site.forking)
    both processes then share them instead of each compiling its own."""
    env = environment()
    for name in env.list_templates(extensions=["j2"]):
        env.get_template(name)


def render(template: str, **context: Any) -> str:
    """One template, rendered; trailing whitespace trimmed."""
    return environment().get_template(template).render(**context).strip()
