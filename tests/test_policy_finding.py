"""catalogue.policy.finding: which findings are errors, the one line a finding prints, and how consent and never
findings are made."""

from __future__ import annotations

from catalogue.policy.finding import PolicyFinding, consent, never
from catalogue.policy.rules import CONSENT_HOW, NEVER_HOW


def test_is_error_by_class_and_reason():
    assert PolicyFinding("never", "o", "w", "h").is_error
    assert PolicyFinding("consent", "o", "w", "h").is_error
    assert not PolicyFinding("consent", "o", "w", "h", reason="because").is_error
    assert not PolicyFinding("consent", "o", "w", "h", reason="").is_error
    assert not PolicyFinding("note", "o", "w", "h").is_error


def test_line_and_str():
    finding = PolicyFinding("never", "--privileged", "all devices", "never allowed")
    assert finding.line() == "never: --privileged: all devices (never allowed)"
    assert str(finding) == "never: --privileged: all devices (never allowed)"
    sourced = PolicyFinding("never", "o", "w", "h", source="r/recipe.yaml")
    assert str(sourced) == "r/recipe.yaml: never: o: w (h)"
    placed = PolicyFinding("never", "o", "w", "h", source="r/recipe.yaml", lineno=7)
    assert str(placed) == "r/recipe.yaml:7: never: o: w (h)"


def test_an_undeclared_consent_says_how_to_declare_it():
    finding = consent("--cap-add X", "why", "basis", {}, ("serving", "container", "options", 0))
    assert finding == PolicyFinding(
        "consent",
        "--cap-add X",
        "why",
        CONSENT_HOW.format(name="--cap-add X"),
        "basis",
        field=("serving", "container", "options", 0),
        reason=None,
    )


def test_a_declared_consent_shows_its_reason_and_the_allow():
    finding = consent("--cap-add X", "why", "basis", {"--cap-add X": "pins memory", "other": "x"}, ())
    assert finding.reason == "pins memory"
    assert finding.how == "declared: pins memory; the owner runs it with --allow '--cap-add X'"


def test_never_defaults_and_how():
    assert never("o", "w", "b", ("f",)) == PolicyFinding("never", "o", "w", NEVER_HOW, "b", field=("f",))
    assert never("o", "w", "b", (), "do this").how == "do this"
