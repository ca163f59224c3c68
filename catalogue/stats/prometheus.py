"""The samples of a Prometheus text page (a vLLM server's /metrics): one reader for every counter and histogram the
catalogue takes from a server. The page is the recipe's server's, so untrusted: a line that does not parse, or whose
value is not a finite, non-negative number (no counter or sum of latencies is below zero), is skipped."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Sample:
    """One sample line: metric name, its labels, its value."""

    name: str
    labels: dict[str, str]
    value: float


def samples(text: str) -> Iterator[Sample]:
    """Every sample of the page with a usable value, in page order."""
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match:
            continue
        try:
            value = float(match["value"])
        except ValueError:
            continue
        if not math.isfinite(value) or value < 0:
            continue
        yield Sample(match["name"], dict(_LABEL.findall(match["labels"] or "")), value)
