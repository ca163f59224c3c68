"""The price model (`site_src/price_model.yaml`) and the cost per million output tokens it gives a level.

cost per 1M output tokens = (box price ÷ (years × 365 × hours a day) × boxes + power kW × electricity per kWh)
                            ÷ (output tokens per hour) × 1,000,000

The power is the level's measured mean power (energy ÷ window), so a level without measured power has no cost.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, PositiveFloat, ValidationError

from catalogue.models.errors import CatalogueError, from_validation
from catalogue.models.strict import Strict
from catalogue.models.yaml_files import parse_yaml

PRICE_MODEL_FILE = Path(__file__).resolve().parents[2] / "site_src" / "price_model.yaml"


class BoxPrice(Strict):
    """What one box of a platform costs."""

    price: PositiveFloat = Field(description="Price of one box, in the model's currency.")
    what: str = Field(min_length=1, description="Which box and price this is.")
    source: str = Field(min_length=1, description="Where the price comes from.")


class PriceModel(Strict):
    """The inputs of the cost per million output tokens."""

    currency: str = Field(min_length=1, description="Currency of every price, e.g. 'USD'.")
    electricity_per_kwh: PositiveFloat = Field(description="Price of one kWh.")
    electricity_source: str = Field(min_length=1, description="Where the electricity price comes from.")
    years_of_service: PositiveFloat = Field(description="Years a box is written off over.")
    hours_per_day: float = Field(gt=0, le=24, description="Hours a day a box serves.")
    boxes: dict[str, BoxPrice] = Field(description="Box price by platform profile name (platforms/<name>.yaml).")

    def box_per_hour(self, platform: str) -> float | None:
        """A box's amortised cost per hour in use; None when the model has no price for the platform."""
        box = self.boxes.get(platform)
        if box is None:
            return None
        return box.price / (self.years_of_service * 365 * self.hours_per_day)


def cost_per_million(
    model: PriceModel, platform: str | None, boxes: int, mean_power_w: float | None, output_tps: float | None
) -> float | None:
    """Cost per million output tokens at a level: None unless power was measured, tokens were made and the model
    prices the platform's box."""
    per_box = model.box_per_hour(platform) if platform else None
    if per_box is None or mean_power_w is None or not output_tps or boxes < 1:
        return None
    per_hour = per_box * boxes + mean_power_w / 1000 * model.electricity_per_kwh
    return per_hour / (output_tps * 3600) * 1e6


def load_price_model(path: Path = PRICE_MODEL_FILE) -> PriceModel:
    """The price model (read again only when the file changes); a bad value is one line naming the file and field."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as exc:
        raise CatalogueError(path, f"cannot read: {exc.strerror}") from None
    return _read(path, stamp)


@lru_cache(maxsize=4)
def _read(path: Path, _stamp: int) -> PriceModel:
    text = path.read_text(encoding="utf-8")
    try:
        return PriceModel.model_validate(parse_yaml(text, path))
    except ValidationError as exc:
        raise from_validation(path, exc, text) from None
