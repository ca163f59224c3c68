"""catalogue.models.yaml_files: the YAML 1.2 reader, its one-line errors, and what the writer must quote."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from catalogue.commands.new import render
from catalogue.models import yaml_files
from catalogue.models.errors import CatalogueError
from catalogue.models.yaml_files import dump_yaml, parse_yaml, plain_scalar_safe

REPO = Path(__file__).resolve().parents[1]
COMMITTED = sorted(
    [*REPO.glob("recipes/*/recipe.yaml"), *REPO.glob("examples/*/recipe.yaml"), *REPO.glob("tests/data/**/*.yaml")]
)
COMMITTED = [p for p in COMMITTED if "sparkrun" not in p.relative_to(REPO).parts]
"""Files of the catalogue's own. The sparkrun recipes under tests/data are other projects' files kept byte for byte
(one ends inside a block scalar without a final newline, where YAML readers differ); tests/test_sparkrun_format.py
holds our reading of them to sparkrun's own loader instead."""


def test_committed_yaml_reads_as_pyyaml_read_it():
    """Moving from PyYAML (YAML 1.1) to the 1.2 reader changed no committed file's meaning."""
    assert len(COMMITTED) >= 10
    for path in COMMITTED:
        text = path.read_text(encoding="utf-8")
        assert parse_yaml(text, path) == yaml.safe_load(text), path


def test_yaml_1_2_scalars():
    data = parse_yaml("a: yes\nb: on\nc: 1e3\nd: 0o17\ne: 2026-05-06\nf: '1'\ng: true\n", "x.yaml")
    assert data == {"a": "yes", "b": "on", "c": 1000.0, "d": 15, "e": yaml.safe_load("2026-05-06"), "f": "1", "g": True}


def test_empty_and_byte_order_mark():
    assert parse_yaml("", "x.yaml") is None
    assert parse_yaml("\ufefftitle: x\n", "x.yaml") == {"title": "x"}


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("title: x\nstatus: [production\nmodel: m\n", 3, "YAML syntax error: "),
        ("a: b: c\n", 1, "YAML syntax error: mapping values are not allowed"),
        (
            "title: x\nserving:\n  flags:\n    port: 1\n    host: h\n    port: 2\n",
            6,
            "YAML: key 'port' is written twice",
        ),
    ],
)
def test_bad_yaml_is_one_line_with_its_line(text, line, message):
    with pytest.raises(CatalogueError) as err:
        parse_yaml(text, "recipe.yaml")
    assert str(err.value).startswith(f"recipe.yaml:{line}: {message}")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("value", ["1e3", "09", "0o17", "-.5", "null", "true", "", "a: b", "# x", "8000"])
def test_strings_the_reader_would_not_read_back_are_not_plain(value):
    assert not plain_scalar_safe(value)


@pytest.mark.parametrize("value", ["1e3", "09", "0o17", "-.5", "yes", "on", "null", "true", "", "a: b", "# x", "8000"])
def test_written_strings_read_back_as_strings(value):
    text = render({"title": value, "flags": {"x": value}, "list": [value]})
    assert parse_yaml(text, "recipe.yaml") == {"title": value, "flags": {"x": value}, "list": [value]}


@pytest.mark.parametrize("value", ["fastsafetensors", "CUTLASS", "moe,qkv,o,lm_head", "8000:8000", "openai_gptoss"])
def test_plain_strings_stay_plain(value):
    assert plain_scalar_safe(value)
    assert f"title: {value}\n" in render({"title": value})


class _PythonDumper(yaml.SafeDumper):
    """PyYAML's pure-Python emitter with the writer's representers: the reference the C emitter is held to."""


_PythonDumper.add_representer(list, yaml_files._list)
_PythonDumper.add_representer(str, yaml_files._str)


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml writes with the Python emitter itself")
def test_the_fast_writer_reads_back_and_keeps_the_recipes_style():
    """dump_yaml runs on libyaml's emitter (the sparkrun file of every recipe, on every build). Everything it writes
    reads back as what was written; a recipe of the catalogue's own is byte for byte what PyYAML's Python emitter
    writes. (libyaml breaks a long double-quoted string with escapes at other places than the Python emitter, as
    in a sparkrun recipe under tests/data/commands: the same string either way.)"""
    assert issubclass(yaml_files._RecipeDumper, yaml.CSafeDumper)
    tricky = ["é ü 中文", "a" * 300, "x: y", "1e3", "  lead", "multi\nline", "tab\there", "'q", '"dq', "- i", "~"]
    documents = [parse_yaml(p.read_text(encoding="utf-8"), p) for p in COMMITTED]
    documents += [{"k": s, "l": [s, 1, 2.5, None, True], "m": {"n": [{"a": s}]}} for s in tricky]
    for data in documents:
        assert parse_yaml(dump_yaml(data), "written") == data
    own = [p for p in COMMITTED if p.relative_to(REPO).parts[0] in ("recipes", "examples")]
    assert len(own) >= 10
    for path in own:
        data = parse_yaml(path.read_text(encoding="utf-8"), path)
        assert dump_yaml(data) == yaml.dump(data, Dumper=_PythonDumper, sort_keys=False, allow_unicode=True, width=110)
