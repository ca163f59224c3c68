"""Open-loop levels on a page: the capacity headline, the rate table and the latency–load charts.

Everything here reads the run file's model (`BenchmarkRun.rates`, `.slo`, `.capacity`): a rate level's verdict is
the one the run recorded, else `catalogue.stats.capacity.judge` against the run's SLO; nothing is measured or guessed
here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from catalogue.models.benchmark import BenchmarkRun, ImportedProvenance, RateLevel, Stats
from catalogue.models.slo import LIMIT_LABELS, STATS_FIELD, Slo
from catalogue.site.capacity_headline import Headline, headline, rate_floor, rate_text, verdict
from catalogue.site.charts import Axis, Key, Mark, Rule, Series, chart
from catalogue.site.templating import fmt_num

DEFAULT_PERCENTILE = 95
"""The upper percentile the table and charts show when a run has no SLO to name one."""


def slo_short(slo: Slo) -> str:
    """The objective in a narrow cell: 'p95 TTFT ≤ 1 s, TPOT ≤ 50 ms' (Slo.describe, the percentile said once)."""
    each = f"p{slo.percentile} "
    return each + slo.describe().replace(each, "").replace(" and ", ", ")


def percentile_of(run: BenchmarkRun) -> int:
    return run.slo.percentile if run.slo is not None else DEFAULT_PERCENTILE


def level_name(level: RateLevel, run: BenchmarkRun) -> str:
    """'probe 3', the tool's own name for the level, or what it was: 'planned' (a rate of the recipe's sweep, in a
    measured run) or 'imported'."""
    if level.probe is not None:
        return f"probe {level.probe}"
    return level.label or ("imported" if isinstance(run.provenance, ImportedProvenance) else "planned")


def ordered(rates: list[RateLevel]) -> list[RateLevel]:
    """By offered rate (as fast as possible last), then probe number: the table reads as a load curve."""
    return sorted(
        rates,
        key=lambda lv: (lv.offered_rps is None, lv.offered_rps or 0.0, lv.probe or 0),
    )


def capacity_level(run: BenchmarkRun) -> RateLevel | None:
    """The level the capacity was read from: the highest rate that met, at the capacity's rate."""
    cap = run.capacity
    if cap is None or cap.rps is None:
        return None
    found = [lv for lv in run.rates if lv.offered_rps is not None and math.isclose(lv.offered_rps, cap.rps)]
    return max(found, key=lambda lv: lv.probe or 0) if found else None


def best_planned(run: BenchmarkRun) -> tuple[RateLevel, RateLevel | None] | None:
    """Without a capacity search: (the highest rate that met the SLO, the next rate up, which missed), when the run
    has an SLO and some rate met it."""
    if run.slo is None or run.capacity is not None:
        return None
    rated = [lv for lv in ordered(run.rates) if lv.offered_rps is not None]
    met = [lv for lv in rated if verdict(lv, run.slo) == "meets"]
    if not met:
        return None
    best = met[-1]
    above = next((lv for lv in rated if (lv.offered_rps or 0) > (best.offered_rps or 0)), None)
    return best, above


@dataclass(frozen=True)
class Column:
    """One column of the rate table."""

    header: str
    title: str
    """What it measures, shown on hover."""
    get: Callable[[RateLevel], float | int | str | None]
    kind: str = "num"
    """'num' (a figure), 'rate' (req/s as probed), 'pct' (a share shown as %), 'text', 'verdict'."""
    limit: float | None = None
    """The SLO limit this column's percentile is held to: cells above it are marked."""
    stats: tuple[str, str] | None = None
    """(latency field, percentile) of a percentile column: its cells state their interval, or that they have none."""


def _stat(field: str, pct: str) -> Callable[[RateLevel], float | None]:
    def read(level: RateLevel) -> float | None:
        stats: Stats | None = getattr(level, field)
        return getattr(stats, pct) if stats is not None else None

    return read


def _failed(level: RateLevel) -> str | None:
    if level.failed is None and level.completed is None:
        return None
    failed = level.failed or 0
    return f"{failed:,} of {failed + (level.completed or 0):,}"


def columns(run: BenchmarkRun) -> list[Column]:
    """The rate table's columns that some level of the run fills, in reading order: the rates, the verdict, what
    the objective counts, the latency percentiles, the output rate."""
    pct = percentile_of(run)
    limits = run.slo.limits if run.slo is not None else {}
    cols = [
        Column("Offered (req/s)", "Request rate the client was asked to send", lambda lv: lv.offered_rps, "rate"),
        Column("Achieved (req/s)", "Requests completed per second of the window", lambda lv: lv.achieved_rps, "rate"),
        Column(
            "Against the objective",
            "Whether every latency percentile the objective names stayed within its limit, with no failed request "
            "and at least 90 % of the offered rate achieved; else what missed",
            lambda lv: verdict(lv, run.slo),
            "verdict",
        ),
        Column(
            "Goodput (req/s)",
            "Completed requests per second that met every limit of the objective (vLLM's request_goodput)",
            lambda lv: lv.goodput_rps,
            "rate",
        ),
        Column(
            "Attainment",
            "Share of completed requests that met every limit of the objective",
            lambda lv: lv.attainment,
            "pct",
        ),
        Column("Failed", "Requests that failed, of those sent", _failed, "text"),
    ]
    for key in ("ttft", "tpot", "e2el"):
        label, field = LIMIT_LABELS[key].replace(" latency", ""), STATS_FIELD[key]
        for p in (50, pct):
            if p == 50 and key == "e2el" and "e2el" not in limits:
                continue  # E2E: the percentile the objective uses, p50 only when it limits E2E
            limit = limits.get(key) if p == pct else None
            held = f"; the objective holds it to {limit:,.0f} ms" if limit is not None else ""
            what = f"{p}th percentile of {LIMIT_LABELS[key]}{held}"
            stat = _stat(field, f"p{p}")
            cols.append(Column(f"{label} p{p} (ms)", what, stat, limit=limit, stats=(field, f"p{p}")))
    cols.append(Column("Output (tok/s)", "Output tokens per second over the window", lambda lv: lv.generation_tps))
    return [c for c in cols if any(c.get(lv) is not None for lv in run.rates)]


@dataclass(frozen=True)
class Cell:
    text: str
    cls: str = ""
    """'rc-miss' for a percentile over its limit; 'rc-meets' or 'rc-missed' for a verdict."""
    note: str = ""
    """A percentile's evidence: '[12–15]' (its 95 % interval), or 'unbounded' when too few requests bound it."""
    title: str = ""


@dataclass(frozen=True)
class Row:
    """One rate level in the table."""

    level: RateLevel
    name: str
    cells: list[Cell]
    verdict: str | None
    capacity: bool
    """The level the capacity was read from."""


def _cell(column: Column, level: RateLevel) -> Cell:
    value = column.get(level)
    if column.kind == "verdict":
        if value is None:
            return Cell("—")
        return Cell("✓ meets", "rc-meets") if value == "meets" else Cell(str(value), "rc-missed")
    if column.kind == "text":
        return Cell(str(value) if value is not None else "—")
    if column.kind == "rate":
        text = rate_text(value) if isinstance(value, int | float) else "—"
        if value is None and column.header.startswith("Offered"):
            text = "as fast as possible"
    elif column.kind == "pct":
        text = f"{value * 100:.1f}".removesuffix(".0") + " %" if isinstance(value, int | float) else "—"
    else:
        text = fmt_num(value)
    miss = column.limit is not None and isinstance(value, int | float) and value > column.limit
    note, title = evidence(column, level) if value is not None else ("", "")
    return Cell(text, "rc-miss" if miss else "", note, title)


def evidence(column: Column, level: RateLevel) -> tuple[str, str]:
    """(note, hover text) of a percentile cell: its 95 % interval and n, or why it has none."""
    if column.stats is None:
        return "", ""
    field, pct = column.stats
    stats: Stats | None = getattr(level, field)
    if stats is None or stats.ci is None or stats.n is None:
        return "", ""
    if pct in stats.ci:
        lo, hi = stats.ci[pct]
        return f"[{fmt_num(lo)}–{fmt_num(hi)}]", f"95 % interval from {stats.n:,} requests (order statistics)"
    return "unbounded", f"{stats.n:,} requests are too few to bound a {pct}: the figure is near their largest"


def rows(run: BenchmarkRun) -> list[Row]:
    """Every rate level of the run, by offered rate."""
    cols, at_capacity = columns(run), capacity_level(run)
    return [
        Row(lv, level_name(lv, run), [_cell(c, lv) for c in cols], verdict(lv, run.slo), lv is at_capacity)
        for lv in ordered(run.rates)
    ]


def _where(level: RateLevel, run: BenchmarkRun, x: float) -> str:
    said = f"{rate_text(x)} req/s achieved"
    if level.offered_rps is not None:
        said += f" (offered {rate_text(level.offered_rps)}, {level_name(level, run)})"
    return said


def latency_charts(run: BenchmarkRun, title: str) -> list[str]:
    """Latency against achieved request rate: p50 and the SLO's percentile of TTFT and TPOT (and E2E when the SLO
    limits it), one chart each, the limit drawn, the capacity marked, probes drawn apart from planned rates."""
    levels = [lv for lv in run.rates if lv.achieved_rps is not None]
    if len(levels) < 2:
        return []
    pct = percentile_of(run)
    limits = run.slo.limits if run.slo is not None else {}
    at_capacity = capacity_level(run)
    cap = run.capacity
    keys = ["ttft", "tpot"] + (["e2el"] if "e2el" in limits else [])
    out = []
    for key in keys:
        field, name = STATS_FIELD[key], LIMIT_LABELS[key]
        series = []
        for p in (50, pct):
            points, labels, kinds = [], {}, {}
            for lv in levels:
                value = _stat(field, f"p{p}")(lv)
                if value is None:
                    continue
                x = float(lv.achieved_rps or 0.0)
                points.append((x, float(value)))
                labels[x] = _where(lv, run, x)
                if lv.probe is not None:
                    kinds[x] = "probe"
            series.append(Series(f"{name} p{p}", points, labels=labels, kinds=kinds))
        if not any(s.points for s in series):
            continue
        rules = [Rule(limits[key], f"SLO: p{pct} ≤ {limits[key]:,.0f} ms")] if key in limits else []
        marks = []
        if at_capacity is not None and cap is not None and cap.rps is not None and at_capacity.achieved_rps is not None:
            marks.append(Mark(at_capacity.achieved_rps, f"capacity {rate_floor(cap.rps)} req/s"))
        legend = []
        if any(lv.probe is None for lv in levels):
            legend.append(Key("planned", "planned rate"))
        if any(lv.probe is not None for lv in levels):
            legend.append(Key("probe", "capacity-search probe"))
        if rules:
            legend.append(Key("rule", "SLO limit"))
        if marks:
            legend.append(Key("mark", "capacity"))
        out.append(
            chart(
                f"{title}: {name} against load (p50 and p{pct})",
                Axis("req/s achieved"),
                Axis("ms"),
                series,
                rules=rules,
                marks=marks,
                keys=legend,
            )
        )
    return [c for c in out if c]


@dataclass(frozen=True)
class OpenLoop:
    """Everything the page shows of a run's rate levels."""

    run: BenchmarkRun
    headline: Headline | None
    best_planned: tuple[RateLevel, RateLevel | None] | None
    columns: list[Column]
    rows: list[Row]
    charts: list[str]
    slo: str | None
    burstiness: str
    """'Poisson arrivals, burstiness 1' or how the arrivals were spread."""
    probes: int

    @property
    def unfinished(self) -> bool:
        """A capacity search ran probes but recorded no result (the run stopped during it)."""
        return self.run.capacity is None and self.probes > 0


def arrivals(rates: list[RateLevel]) -> str:
    """How requests arrived, in words: the levels' arrival process and burstiness (vLLM spaces requests with
    gamma-distributed gaps; burstiness 1 is a Poisson process)."""
    kinds = sorted({lv.arrivals for lv in rates if lv.arrivals is not None})
    bursts = sorted({lv.burstiness for lv in rates if lv.burstiness is not None})
    if kinds == ["constant"]:
        return "evenly spaced arrivals at a constant rate"
    if len(kinds) > 1:
        return "arrivals " + " or ".join(kinds) + ", as each level's name says"
    if bursts == [1.0] or (not bursts and kinds == ["poisson"]):
        return "Poisson arrivals" + (", burstiness 1" if bursts else "")
    if bursts:
        words = ", ".join(f"{v:g}" for v in bursts)
        return f"gamma-distributed gaps, burstiness {words}; 1 would be Poisson, below 1 is burstier, above 1 more even"
    return "arrival process not stated"


def open_loop(run: BenchmarkRun, title: str) -> OpenLoop | None:
    """The open-loop part of a run's section; None when the run has no rate level."""
    if not run.rates:
        return None
    return OpenLoop(
        run,
        headline(run),
        best_planned(run),
        columns(run),
        rows(run),
        latency_charts(run, title),
        run.slo.describe() if run.slo is not None else None,
        arrivals(run.rates),
        sum(1 for lv in run.rates if lv.probe is not None),
    )
