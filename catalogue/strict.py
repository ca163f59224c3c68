"""The base of every file model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Base for every file model: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)
