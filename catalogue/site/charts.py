"""Inline SVG line charts, drawn at build time; colours follow the page palette via CSS classes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 640, 300
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

    parts = [
        f'<svg class="rc-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    ]
    for i in range(5):
        y = y_max * i / 4
        parts.append(
            f'<line class="rc-grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{sy(y):.1f}" y2="{sy(y):.1f}"/>'
            f'<text class="rc-axis" x="{LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{_fmt(y)}</text>'
        )
    for x in xs:
        parts.append(f'<text class="rc-axis" x="{sx(x):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{_fmt(x)}</text>')
    parts.append(
        f'<text class="rc-axis" x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 6}" text-anchor="middle">concurrency</text>'
        f'<text class="rc-axis" transform="translate(14 {(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>'
    )
    for n, s in enumerate(series):
        cls = f"rc-s{n % 6}"
        path = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(sorted(s.points)))
        parts.append(f'<g class="rc-series {cls}" data-series="{escape(s.name)}"><path d="{path}"/>')
        for x, y in sorted(s.points):
            parts.append(
                f'<circle class="rc-point" cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.5" data-x="{x:g}" data-y="{y:g}">'
                f"<title>{escape(s.name)}: {_fmt(y)} at c={x:g}</title></circle>"
            )
        ly = TOP + 14 + n * 18
        parts.append(
            f'<line x1="{WIDTH - RIGHT + 12}" x2="{WIDTH - RIGHT + 30}" y1="{ly - 4}" y2="{ly - 4}"/>'
            f'<text class="rc-legend" x="{WIDTH - RIGHT + 36}" y="{ly}">{escape(s.name[:20])}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
