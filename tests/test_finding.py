"""PolicyFinding's lines (catalogue/policy/finding.py): a recipe's text reaches the terminal with its control
characters escaped, whichever command prints the finding (validate, refresh --dry-run, new, the runner)."""

from __future__ import annotations

from catalogue.models.terminal import CONTROL
from catalogue.policy.finding import consent, never

HOSTILE = "ok\x1b]0;owned\x07\r\x1b[2Khidden\u202e"


def test_a_declared_reason_with_control_characters_is_one_escaped_line():
    found = consent("--dns", "a name server", "rule", {"--dns": HOSTILE}, ("serving",))
    text = str(found)
    assert not CONTROL.search(text), repr(text)
    assert "\\x1b]0;owned\\x07\\x0d\\x1b[2Khidden\\u202e" in text


def test_a_name_and_source_with_control_characters_are_escaped():
    found = never(f"--x{HOSTILE}", "why", "rule", ("serving",))
    found = type(found)(**{**found.__dict__, "source": f"r\r{HOSTILE}.yaml", "lineno": 3})
    assert not CONTROL.search(str(found)), repr(str(found))


def test_the_runners_refusal_for_consent_not_given_is_escaped():
    from runner.planning.policy_gate import refusals

    found = consent("--dns", "a name server", "rule", {"--dns": HOSTILE}, ("serving",))
    lines = refusals([found], [])
    assert lines and not any(CONTROL.search(line) for line in lines), lines
