"""catalogue.site.spec_view.config: --speculative-config as the site reads it, from a recipe's string or mapping."""

from __future__ import annotations

from types import SimpleNamespace

from catalogue.site.spec_view import config


def recipe(value: object) -> object:
    """What config reads of a recipe: its flags."""
    return SimpleNamespace(serving=SimpleNamespace(flags={"speculative-config": value}))


def test_the_config_is_read_from_a_json_string_and_deep_json_is_no_config():
    assert config(recipe('{"method": "eagle", "num_speculative_tokens": 3}')) == {
        "method": "eagle",
        "num_speculative_tokens": 3,
    }
    # 1,100 brackets inside the string were a RecursionError that stopped the site build
    assert config(recipe("[" * 1100 + "]" * 1100)) == {}
    assert config(SimpleNamespace(serving=SimpleNamespace(flags={}))) is None
