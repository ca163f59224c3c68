"""The quality section's pure parts: the recipe switch, the fixed accuracy items and their scoring, tool-eval-bench's
report, and that a run without checks claims no figure."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from catalogue.models import quality as q


def test_accuracy_items_are_fixed_and_answerable():
    items = q.accuracy_items()
    assert items == q.accuracy_items() and len(items) == q.ACCURACY_ITEMS
    assert items != q.accuracy_items(seed=q.ACCURACY_SEED + 1)
    for item in items:
        last = item.prompt.rsplit("Q: ", 1)[1]
        a, op, b = last.split(" = ?")[0].split()
        x, y = int(a), int(b)
        assert str({"+": x + y, "-": x - y, "*": x * y}[op]) == item.answer
        assert item.prompt.endswith("\nA:") and item.prompt.count("Q: ") == len(q.SHOTS) + 1


def test_exact_match_reads_the_first_line_only():
    items = [q.Item(prompt="p", answer="42"), q.Item(prompt="p", answer="-7"), q.Item(prompt="p", answer="5")]
    assert q.exact_matches(items, [" 42\nQ: 1 + 1", "-7 ", "55"]) == 2
    with pytest.raises(ValueError, match="2 completions for 3 items"):
        q.exact_matches(items, ["1", "2"])
    check = q.accuracy_check(items, [" 42", "x", "y"], 1.234)
    assert (check.passed, check.score, check.took_s, check.kind) == (1, 33.3, 1.23, "accuracy")


def report(*results: dict, score: int = 40) -> dict:
    """The parts of tool-eval-bench 3.0.0's --json-file report the check reads (as it wrote them here)."""
    return {"final_score": score, "total_scenarios": len(results), "scores": {"scenario_results": list(results)}}


def test_tool_eval_report_gives_its_own_score():
    found = report({"status": "pass"}, {"status": "fail", "summary": "wrong tool"}, {"status": "partial"})
    check = q.tool_eval_check(found, 12.0, "20261125T000000Z/tool-eval.json")
    assert (check.score, check.passed, check.items, check.version) == (40.0, 1, 3, q.TOOL_EVAL_VERSION)
    with pytest.raises(ValueError, match="no final_score"):
        q.tool_eval_check({"scores": {"scenario_results": []}}, 1.0, None)


def test_requests_the_server_refused_are_no_score():
    refused = {"status": "fail", "summary": "Endpoint rejected the request with HTTP 400 before the model produced"}
    with pytest.raises(ValueError, match="refused 1 of 2 scenarios: Endpoint rejected"):
        q.tool_eval_check(report({"status": "pass"}, refused, score=50), 1.0, None)


def test_a_failed_check_claims_no_score():
    check = q.failed_check("tool-calling", 5, 0.5, "connection refused\nsecond line")
    assert check.score is None and check.passed is None and check.error == "connection refused"
    assert q.Quality(checks=[check]).check("tool-calling") is check
    assert q.Quality(checks=[check]).check("accuracy") is None


def test_turning_the_checks_off_needs_a_reason():
    assert q.QualitySetting().enabled
    assert q.QualitySetting(enabled=False, reason="a vision model").reason == "a vision model"
    with pytest.raises(ValidationError, match="needs a reason"):
        q.QualitySetting(enabled=False)
    with pytest.raises(ValidationError, match="needs a reason"):
        q.QualitySetting(tool_calling=False)
    with pytest.raises(ValidationError):
        q.QualitySetting(enabeld=False, reason="typo")  # type: ignore[call-arg]


def test_random_weights_come_from_the_load_format():
    assert q.random_weights({"load-format": "dummy"})
    assert not q.random_weights({"load-format": "safetensors"}) and not q.random_weights({})
