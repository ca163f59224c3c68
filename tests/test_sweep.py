"""runner.sweep: what the client's event lines say about a level is read as untrusted input (the image writes them)."""

from __future__ import annotations

import pytest

from runner.sweep import calibrations


def test_a_levels_calibrations_are_two_positive_finite_numbers():
    assert calibrations({"calibration_ms": [9.8, 10.25]}) == [9.8, 10.25]
    assert calibrations({"calibration_ms": [10, 11]}) == [10.0, 11.0]


@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        [9.8],
        [9.8, 9.9, 10.0],
        [0, 9.8],
        [-1.0, 9.8],
        [float("inf"), 9.8],
        [1e6, 9.8],  # past catalogue.plausible's bound: the run file would not load
        [float("nan"), 9.8],
        [True, 9.8],
        ["9.8", 9.8],
        "9.8,9.9",
        {"before": 9.8},
    ],
)
def test_anything_else_is_no_reading(value):
    assert calibrations({"calibration_ms": value}) is None
