"""Every number a run file holds has a plausible bound, and so do the recipe's open-loop settings and SLO: a run
file is untrusted input that the statistics read (counts of 1e9, budgets of 1e308). Each past its bound is one line
naming the field; the counts at their bound stay cheap for the binomial rules."""

from __future__ import annotations

import json
import resource
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from catalogue.commands.cli import main
from catalogue.models.benchmark import BenchmarkRun, RateLevel
from catalogue.models.plausible import MAX_MS, MAX_REQUESTS, MAX_S
from catalogue.models.recipe import RegressionBand, Sweep
from catalogue.models.slo import OpenLoop, Slo
from catalogue.stats.order_stats import binom_cdf, rank_bounds
from catalogue.stats.request_samples import decide

REPO = Path(__file__).resolve().parents[1]


def unbounded(model: type[BaseModel]) -> list[str]:
    """Every number of the model's JSON Schema with no upper bound (an enum is bounded), by property path."""
    found: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            number = node.get("type") in ("number", "integer") and "enum" not in node
            if number and "maximum" not in node and "exclusiveMaximum" not in node:
                found.append(path)
            for key, value in node.items():
                if key in ("properties", "$defs"):
                    for name, child in value.items():
                        walk(child, f"{path}.{name}")
                elif isinstance(value, (dict, list)):
                    for child in value if isinstance(value, list) else [value]:
                        walk(child, path)

    walk(model.model_json_schema(), model.__name__)
    return found


def test_every_number_of_a_run_file_has_an_upper_bound():
    assert unbounded(BenchmarkRun) == []


def test_the_open_loop_settings_and_slo_have_upper_bounds():
    assert unbounded(OpenLoop) == [] and unbounded(Slo) == []


def test_the_sweeps_own_numbers_and_its_regression_band_have_upper_bounds():
    assert unbounded(RegressionBand) == []
    assert [path for path in unbounded(Sweep) if path.count(".") == 1] == []  # Arena and agents settings aside


@pytest.mark.parametrize(
    ("band", "accepted"),
    [
        ({"throughput_ratio": 1e-9}, False),  # attack44b F6: with latency_ratio 1e9, a 10x regression was noise
        ({"latency_ratio": 1e9}, False),
        ({"throughput_ratio": 0.49}, False),
        ({"latency_ratio": 2.01}, False),
        ({"throughput_ratio": 1.0}, False),
        ({"latency_ratio": 1.0}, False),
        ({"throughput_ratio": 0.5, "latency_ratio": 2.0}, True),
        ({"throughput_ratio": 0.93, "latency_ratio": 1.07}, True),  # examples/sim-tiny's
    ],
)
def test_the_regression_band_lies_between_half_and_double(band, accepted):
    if accepted:
        RegressionBand.model_validate(band)
    else:
        with pytest.raises(ValidationError):
            RegressionBand.model_validate(band)


def test_validate_names_the_recipe_and_the_band_field_that_would_mute_the_alarm(tmp_path, capsys):
    shutil.copytree(REPO / "examples" / "tiny-cpu-docker", tmp_path / "tiny-cpu-docker")
    path = tmp_path / "tiny-cpu-docker" / "recipe.yaml"
    path.write_text(path.read_text().replace("throughput_ratio: 0.7", "throughput_ratio: 0.000000001"))
    assert main(["--root", str(tmp_path), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "recipe.yaml" in err and "sweep.regression.throughput_ratio" in err, err


@pytest.mark.parametrize(
    ("model", "field", "value"),
    [
        (OpenLoop, "search_budget_s", 1e308),
        (OpenLoop, "min_window_s", 1e308),
        (OpenLoop, "rates", [1e308]),
        (OpenLoop, "min_requests", 10**9),
        (Slo, "ttft", 1e308),
    ],
)
def test_budgets_windows_and_limits_of_1e308_are_refused(model, field, value):
    with pytest.raises(ValidationError, match="less than or equal to"):
        model.model_validate({field: value, **({"ttft": 100} if model is Slo and field != "ttft" else {})})
    assert MAX_S == 604_800 and MAX_MS == 604_800_000  # a week


def rate_level(**figures) -> dict:
    return {"offered_rps": 2.0, "completed": 10, **figures}


@pytest.mark.parametrize(
    ("figures", "field"),
    [
        ({"judged": 10**9}, "judged"),
        ({"completed": 10**9}, "completed"),
        ({"judged": 10, "exceed": {"ttft": 10**9}}, "exceed.ttft"),
        ({"judged": 10, "exceed": {"ttft": 11}}, "exceed counts more requests than were judged"),
        ({"e2e_ms": {"mean": 1e300}}, "e2e_ms.mean"),
        ({"duration_s": 1e308}, "duration_s"),
    ],
)
def test_counts_and_figures_past_their_bound_are_refused(figures, field):
    with pytest.raises(ValidationError) as caught:
        RateLevel.model_validate(rate_level(**figures))
    assert field.split(".")[0] in str(caught.value)


def test_a_run_file_claiming_a_billion_judged_requests_is_one_line(tmp_path, capsys):
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples" / "tiny-cpu-capacity", root / "tiny-cpu-capacity")
    shutil.copytree(REPO / "examples" / "tiny-cpu", root / "tiny-cpu")
    (path,) = (root / "tiny-cpu-capacity" / "runs").glob("*.json")
    data = json.loads(path.read_text())
    data["rates"][0]["judged"] = 10**9
    path.write_text(json.dumps(data))
    assert main(["--root", str(root), "validate", "--no-flags"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "rates[0].judged: Input should be less than or equal to 1000000" in err


def test_the_binomial_rules_at_the_largest_count_are_quick_and_small():
    """binom_pmfs once built a list of n + 1 terms (about 30 GB at n = 1e9); the rules now sum only the terms they
    need. Measured here at three pooled levels of the most requests a level may hold."""
    n = 3 * MAX_REQUESTS
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    assert decide(n, n // 20, 95, 0.99) == "undecided"  # exactly at the boundary: more requests needed
    assert decide(n, n // 25, 95, 0.99) == "meets"
    assert rank_bounds(n, 0.99) is not None
    took = time.perf_counter() - started
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    print(f"binomial rules at n = {n:,}: {took:.2f} s, peak grew {grown_mb:.0f} MB")
    assert took < 1 and grown_mb < 50
    assert binom_cdf(2, 4, 0.5) == pytest.approx(11 / 16)
