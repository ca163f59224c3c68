"""The price model (site_src/price_model.yaml) and the cost per million output tokens, against a hand-computed case;
the methodology page states every input the model holds."""

from __future__ import annotations

import pytest

from catalogue.models.errors import CatalogueError
from catalogue.site.templating import fmt_num
from catalogue.stats.price_model import BoxPrice, PriceModel, cost_per_million, load_price_model

MODEL = PriceModel(
    currency="USD",
    electricity_per_kwh=0.30,
    electricity_source="a bill",
    years_of_service=3,
    hours_per_day=24,
    boxes={"dgx-spark": BoxPrice(price=3999, what="one Spark", source="a shop")},
)


def test_cost_per_million_output_tokens_by_hand():
    # 3,999 ÷ (3 x 365 x 24 h) = 0.152169 per hour; 100 W = 0.1 kW x 0.30 = 0.03 per hour; 0.182169 per hour
    # ÷ (50 tok/s x 3,600 = 180,000 tok/h) x 1,000,000 = 1.012050 per million output tokens.
    assert MODEL.box_per_hour("dgx-spark") == pytest.approx(0.1521689, rel=1e-6)
    assert cost_per_million(MODEL, "dgx-spark", 1, 100.0, 50.0) == pytest.approx(1.0120496, rel=1e-6)
    # Two boxes (a two-node cluster) at 250 W in all, 80 tok/s: (2 x 0.152169 + 0.075) ÷ 288,000 x 1e6 = 1.317145.
    assert cost_per_million(MODEL, "dgx-spark", 2, 250.0, 80.0) == pytest.approx(1.3171455, rel=1e-6)
    # Eight hours a day: the box's share triples.
    day = MODEL.model_copy(update={"hours_per_day": 8})
    assert day.box_per_hour("dgx-spark") == pytest.approx(3 * MODEL.box_per_hour("dgx-spark"))


def test_no_cost_without_measured_power_tokens_or_a_priced_box():
    assert cost_per_million(MODEL, "dgx-spark", 1, None, 50.0) is None
    assert cost_per_million(MODEL, "dgx-spark", 1, 100.0, None) is None
    assert cost_per_million(MODEL, "dgx-spark", 1, 100.0, 0.0) is None
    assert cost_per_million(MODEL, "cpu", 1, 100.0, 50.0) is None and cost_per_million(MODEL, None, 1, 1, 1) is None


def test_the_committed_model_loads_and_the_methodology_page_states_every_input(repo):
    model = load_price_model()
    page = (repo / "site_src" / "docs" / "methodology" / "cost.md").read_text()
    assert f"{model.currency} {model.electricity_per_kwh:g} per kWh" in page
    assert f"{model.years_of_service:g} years" in page and f"{model.hours_per_day:g} hours a day" in page
    for platform, box in model.boxes.items():
        assert f"`{platform}`: {model.currency} {fmt_num(box.price)}" in page, platform
    assert model.electricity_source.split(": ")[-1] in page


def test_a_bad_value_is_one_line_naming_the_file_and_field(tmp_path):
    path = tmp_path / "price_model.yaml"
    path.write_text(
        "currency: USD\nelectricity_per_kwh: -1\nelectricity_source: x\nyears_of_service: 3\n"
        "hours_per_day: 24\nboxes: {}\n"
    )
    with pytest.raises(CatalogueError) as caught:
        load_price_model(path)
    assert "price_model.yaml" in str(caught.value) and "electricity_per_kwh" in str(caught.value)
    assert "\n" not in str(caught.value)
