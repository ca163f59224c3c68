"""The command line (the shape of the packages: tests/test_layers.py)."""

from __future__ import annotations

from catalogue.commands.cli import plugin_commands


def test_refresh_is_registered_by_the_runner():
    commands = plugin_commands()
    assert commands["refresh"].__name__ == "runner.command"
