"""Inline SVG line charts, drawn at build time; colours follow the page palette via CSS classes.

Each point carries its values in data-x / data-y; catalogue.js shows them on hover and focus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 640, 300
MAX_SERIES = 6
"""Lines one chart can tell apart: one colour each (catalogue.css, light and dark)."""
LEFT, RIGHT, TOP, BOTTOM = 64, 150, 20, 44


@dataclass(frozen=True)
class Series:
    """One line: a name and (x, y) points."""

    name: str
    points: list[tuple[float, float]]


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def _n(value: float) -> str:
    """A coordinate in whole units: a unit of the 640-wide view box is under half a pixel on screen."""
    return str(round(value))


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}".rstrip("0").rstrip(".")


def line_chart(title: str, y_label: str, series: list[Series], log_x: bool = True) -> str:
    """An accessible SVG chart; x is concurrency (log2 scale when it spans powers of two)."""
    series = [s for s in series if s.points]
    if not series:
        return ""
    xs = sorted({x for s in series for x, _ in s.points})
    y_max = _nice_max(max(y for s in series for _, y in s.points))
    use_log = log_x and xs[0] > 0 and len(xs) > 1

    def sx(x: float) -> float:
        lo, hi = (math.log2(xs[0]), math.log2(xs[-1])) if use_log else (xs[0], xs[-1])
        v = math.log2(x) if use_log else x
        span = (hi - lo) or 1.0
        return LEFT + (v - lo) / span * (WIDTH - LEFT - RIGHT)

    def sy(y: float) -> float:
        return TOP + (1 - y / y_max) * (HEIGHT - TOP - BOTTOM)

    width = WIDTH - RIGHT
    grid = "".join(f"M{LEFT} {_n(sy(y_max * i / 4))}H{width}" for i in range(5))
    y_ticks = "".join(f'<text x="{LEFT - 6}" y="{_n(sy(y_max * i / 4) + 4)}">{_fmt(y_max * i / 4)}</text>' for i in range(5))
    x_ticks = "".join(f'<text x="{_n(sx(x))}" y="{HEIGHT - BOTTOM + 16}">{_fmt(x)}</text>' for x in xs)
    parts = [
        (
            f'<svg class="rc-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        ),
        f'<path class="rc-grid" d="{grid}"/>',
        f'<g class="rc-axis" text-anchor="end">{y_ticks}</g>',
        f'<g class="rc-axis" text-anchor="middle">{x_ticks}<text x="{_n((LEFT + width) / 2)}" y="{HEIGHT - 6}">concurrency</text></g>',
        f'<text class="rc-axis" transform="translate(14 {_n((TOP + HEIGHT - BOTTOM) / 2)}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>',
    ]
    for n, s in enumerate(series):
        points = sorted(s.points)
        path = "L".join(f"{_n(sx(x))} {_n(sy(y))}" for x, y in points)
        circles = "".join(f'<circle cx="{_n(sx(x))}" cy="{_n(sy(y))}" data-x="{x:g}" data-y="{y:g}"/>' for x, y in points)
        ly = TOP + 14 + n * 18
        parts.append(
            f'<g class="rc-series rc-s{n % 6}" data-series="{escape(s.name)}"><path d="M{path}"/>{circles}'
            f'<path d="M{width + 12} {ly - 4}h18"/><text class="rc-legend" x="{width + 36}" y="{ly}">{escape(s.name[:20])}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
