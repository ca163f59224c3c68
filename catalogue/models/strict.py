"""The base of every file model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base for every file model: unknown keys are errors, values are immutable, and a number is a finite number (a
    run file is untrusted: an infinite calibration or engine TPOT would silence the regression check)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
