"""The rules table (catalogue.policy.rules) applied to one `docker run` option: its value read as docker reads it,
and the first rule that matches."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

from catalogue.policy import rules
from catalogue.policy.docker_csv import CsvError, first_record


def option_rule(name: str, value: str | None) -> rules.OptionRule | None:
    """The first rule of the table for this option and value."""
    shown = normal_value(name, value or "")
    for rule in rules.OPTION_RULES:
        if rule.option == name and fnmatchcase(shown, rule.value):
            return rule
    return None


def normal_value(name: str, value: str) -> str:
    """A value as the rules table matches it: a label's key lower-cased, a capability without CAP_, a device's host
    path, the network of docker's long `--network name=...` syntax."""
    if name == "label":
        key, eq, rest = value.partition("=")
        return key.lower() + eq + rest
    if name == "cap-add":
        return value.upper().removeprefix("CAP_")
    if name == "device":
        return value.split(":", 1)[0]
    if name == "network" and re.search(r"\w+=\w+", value):
        return _network_name(value)
    return value


def _network_name(value: str) -> str:
    """The network of docker's long `--network name=...,alias=...` syntax (its CSV's `name` field)."""
    try:
        fields = first_record(value)
    except CsvError:
        return value
    names = [v.strip() for k, _, v in (f.partition("=") for f in fields) if k.strip().lower() == "name"]
    return names[-1] if names else value
