"""Charts drawn at build time: lines and points in a stretchable SVG, every label in HTML.

The SVG fills the figure's width at any screen size (`preserveAspectRatio="none"`, strokes that do
not scale), while tick labels, axis titles and the
legend are HTML at the page's own font size, so they stay readable on a phone and on a desktop.
Points are HTML too (round at any stretch, focusable); each carries its reading in `data-tip`;
catalogue.js shows it on hover and focus, and the
legend's buttons show or hide a series. A chart may also draw reference lines: a horizontal rule at a value
(a latency limit) and a vertical mark at an x (a capacity), each with an HTML label.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from html import escape

BOX = 1000
"""The SVG's coordinate space is BOX x BOX, stretched to the figure."""
COLOURS = 6
"""Colours one chart can tell apart; series beyond them repeat a colour with a dash pattern."""
MARK_LINE = 1.6
"""Height of a mark label's line, em: the labels of a chart's marks stand one under another, left to right."""


@dataclass(frozen=True)
class Series:
    """One line of points: a name, (x, y) points and, optionally, ± spread per point."""

    name: str
    points: list[tuple[float, float]]
    spread: dict[float, float] = field(default_factory=dict)
    """x -> ± of y (a standard deviation), drawn as an error bar."""
    labels: dict[float, str] = field(default_factory=dict)
    """x -> what the point is, e.g. 'c=8', when x is not itself the concurrency."""
    kinds: dict[float, str] = field(default_factory=dict)
    """x -> a kind of point drawn apart (class rc-<kind>), e.g. 'probe'; other points are plain dots."""


@dataclass(frozen=True)
class Rule:
    """A horizontal reference line at y (a limit), labelled."""

    y: float
    label: str


@dataclass(frozen=True)
class Mark:
    """A vertical reference line at x (a capacity), labelled."""

    x: float
    label: str


@dataclass(frozen=True)
class Key:
    """A legend entry that is not a series: a kind of point or a reference line ('probe', 'rule', 'mark')."""

    kind: str
    label: str


@dataclass(frozen=True)
class Axis:
    """How one axis maps values: its title, and a log2 scale when values span powers of two."""

    title: str
    log2: bool = False
    dates: bool = False
    """Values are day ordinals (`date.toordinal()`), labelled as ISO dates."""

    def label(self, value: float) -> str:
        """A tick's text."""
        return dt.date.fromordinal(int(value)).isoformat() if self.dates else fmt(value)


def nice_max(value: float) -> float:
    """The round number at or above `value` that the axis ends at."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def fmt(value: float) -> str:
    """A tick or tip value: thousands separated, one decimal below 100."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}".rstrip("0").rstrip(".")


def _n(value: float) -> str:
    return str(round(value, 1)).removesuffix(".0")


def pareto_frontier(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points no other point beats on both axes (more of x and more of y), by ascending x."""
    best: list[tuple[float, float]] = []
    for x, y in sorted(set(points), key=lambda p: (-p[0], -p[1])):
        if not best or y > best[-1][1]:
            best.append((x, y))
    return sorted(best)


class _Scale:
    """Values to BOX coordinates for one axis."""

    def __init__(self, values: list[float], log2: bool, from_zero: bool, exact: bool = False) -> None:
        self.log2 = log2 and min(values) > 0 and len(set(values)) > 1
        self.exact = exact or self.log2
        if exact:
            self.lo, self.hi = min(values), max(values)
        elif self.log2:
            self.lo, self.hi = math.log2(min(values)), math.log2(max(values))
        else:
            self.lo, self.hi = (0.0 if from_zero else min(values)), nice_max(max(values))
        self.span = (self.hi - self.lo) or 1.0

    def __call__(self, value: float) -> float:
        v = math.log2(value) if self.log2 else value
        return (v - self.lo) / self.span * BOX

    def ticks(self, values: list[float]) -> list[float]:
        if self.exact:
            return sorted(set(values))
        return [self.lo + (self.hi - self.lo) * i / 4 for i in range(5)]


def chart(
    title: str,
    x_axis: Axis,
    y_axis: Axis,
    series: list[Series],
    *,
    by_x: bool = True,
    frontier: list[tuple[float, float]] | None = None,
    rules: list[Rule] | None = None,
    marks: list[Mark] | None = None,
    keys: list[Key] | None = None,
) -> str:
    """A figure: plot, tick labels, axis titles, legend. Empty when no series has a point.

    Each series' points are joined by ascending x, or in the order given (`by_x=False`). `rules` and `marks`
    are reference lines (their values widen the axes to show them); `keys` add legend entries that explain them
    and the kinds of point.
    """
    series = [s for s in series if s.points]
    if not series:
        return ""
    rules, marks = rules or [], marks or []
    xs = [x for s in series for x, _ in s.points] + [m.x for m in marks]
    ys = [y + s.spread.get(x, 0.0) for s in series for x, y in s.points] + [r.y for r in rules]
    sx = _Scale(xs, x_axis.log2, from_zero=not x_axis.log2, exact=x_axis.dates)
    sy = _Scale(ys, False, from_zero=True)

    def at(x: float, y: float) -> str:
        return f"{_n(sx(x))} {_n(BOX - sy(y))}"

    grid = "".join(f"M0 {_n(BOX - sy(t))}H{BOX}" for t in sy.ticks(ys))
    parts = [
        f'<svg viewBox="0 0 {BOX} {BOX}" preserveAspectRatio="none" aria-hidden="true" focusable="false">',
        f'<path class="rc-grid" d="{grid}"/>',
    ]
    if frontier and len(frontier) > 1:
        parts.append(f'<path class="rc-frontier" d="M{"L".join(at(x, y) for x, y in frontier)}"/>')
    labels = []
    for rule in rules:
        parts.append(f'<path class="rc-rule" d="M0 {_n(BOX - sy(rule.y))}H{BOX}"/>')
        labels.append(f'<span class="rc-rule-label" style="bottom:{_n(sy(rule.y) / 10)}%">{escape(rule.label)}</span>')
    for row, mark in enumerate(sorted(marks, key=lambda m: m.x)):
        parts.append(f'<path class="rc-mark" d="M{_n(sx(mark.x))} 0V{BOX}"/>')
        left = sx(mark.x) / 10
        side = "rc-mark-left" if left > 60 else "rc-mark-right"  # the label stays inside the plot
        top = f";top:{row * MARK_LINE:g}em" if row else ""  # a line of its own: labels of near x never overlap
        labels.append(f'<span class="rc-mark-label {side}" style="left:{_n(left)}%{top}">{escape(mark.label)}</span>')
    dot_rows = []
    for n, s in enumerate(series):
        points = sorted(s.points) if by_x else list(s.points)
        kind = f"rc-s{n % COLOURS} rc-d{min(n // COLOURS, 3)}"
        body = []
        if len(points) > 1:
            body.append(f'<path class="rc-line" d="M{"L".join(at(x, y) for x, y in points)}"/>')
        for x, y in points:
            if s.spread.get(x):
                d = s.spread[x]
                body.append(f'<path class="rc-err" d="M{at(x, max(y - d, 0))}L{at(x, y + d)}"/>')
        parts.append(f'<g class="rc-series {kind}" data-index="{n}" data-series="{escape(s.name)}">{"".join(body)}</g>')
        dots = []
        for x, y in points:
            what = s.labels.get(x, f"{x_axis.title} {x_axis.label(x)}")
            spread = f" ± {fmt(s.spread[x])}" if s.spread.get(x) else ""
            tip = f"{s.name}: {fmt(y)}{spread} {y_axis.title} at {what}"
            extra = f" rc-{s.kinds[x]}" if x in s.kinds else ""
            dots.append(
                f'<span class="rc-pt{extra}" style="left:{_n(sx(x) / 10)}%;bottom:{_n(sy(y) / 10)}%" data-x="{x:g}" '
                f'data-y="{y:g}" data-tip="{escape(tip)}"></span>'
            )
        dot_rows.append(
            f'<div class="rc-pts {kind}" data-index="{n}" data-series="{escape(s.name)}">{"".join(dots)}</div>'
        )
    parts.append("</svg>")
    parts.extend(dot_rows)
    parts.extend(labels)
    y_ticks = "".join(f'<span class="rc-ytick" style="bottom:{_n(sy(t) / 10)}%">{fmt(t)}</span>' for t in sy.ticks(ys))
    x_ticks = "".join(
        f'<span class="rc-xtick" style="left:{_n(sx(t) / 10)}%">{x_axis.label(t)}</span>' for t in sx.ticks(xs)
    )
    legend = "".join(
        f'<button type="button" class="rc-key" data-index="{n}" aria-pressed="true">'
        f'<i class="rc-swatch rc-s{n % COLOURS} rc-d{min(n // COLOURS, 3)}"></i>{escape(s.name)}</button>'
        for n, s in enumerate(series)
    )
    if frontier and len(frontier) > 1:
        legend += '<span class="rc-key rc-key-frontier"><i class="rc-swatch rc-frontier-swatch"></i>frontier</span>'
    for key in keys or []:
        legend += (
            f'<span class="rc-key rc-key-{key.kind}"><i class="rc-swatch rc-{key.kind}-swatch"></i>'
            f"{escape(key.label)}</span>"
        )
    return (
        f'<div class="rc-chart" role="figure" aria-label="{escape(title)}">'
        f'<p class="rc-chart-title">{escape(title)}</p><p class="rc-ytitle">{escape(y_axis.title)}</p>'
        f'<div class="rc-plot">{"".join(parts)}{y_ticks}{x_ticks}</div>'
        f'<p class="rc-xtitle">{escape(x_axis.title)}</p><div class="rc-legend">{legend}</div></div>'
    )


def line_chart(title: str, y_title: str, series: list[Series]) -> str:
    """A figure against concurrency (log2 scale when it spans powers of two)."""
    return chart(title, Axis("concurrency", log2=True), Axis(y_title), series)


def pareto_chart(
    title: str, series: list[Series], x_title: str = "output tok/s per node", y_title: str = "tok/s per user"
) -> str:
    """Interactivity against throughput, one point per concurrency (joined in the order given: by concurrency),
    with the frontier over every series."""
    frontier = pareto_frontier([p for s in series for p in s.points])
    return chart(title, Axis(x_title), Axis(y_title), series, by_x=False, frontier=frontier)
