"""The recipe page's "Agents" section: the newest agent refresh (its run files, one per reuse ratio) as a table of
levels, a chart of sessions against TTFT per turn, the hit rates measured beside intended, the capacity in sessions.
Only run files of one refresh, and within it one trace apart from its reuse ratio, are shown together: figures of
another trace are another workload (catalogue.models.workload: the trace's parameters and sha256 are in the key)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from catalogue.models.benchmark import BenchmarkRun
from catalogue.models.loading import Entry
from catalogue.models.slo import Slo
from catalogue.models.strict import Strict
from catalogue.models.workload import Workload
from catalogue.site.charts import Axis, Mark, Rule, Series, chart
from catalogue.stats.agents import AgentLevel, AgentRun, SessionCapacity


@dataclass(frozen=True)
class ReuseRow:
    """One reuse ratio of the section: its run file's figures."""

    reuse: float
    intended: float | None
    measured: float | None
    capacity: SessionCapacity | None
    levels: list[AgentLevel]
    workload: str
    run: BenchmarkRun


@dataclass(frozen=True)
class AgentsSection:
    """What the page shows: the refresh's date, its trace, each reuse ratio, the SLO, the chart."""

    date: str
    trace: str
    slo: str | None
    rows: list[ReuseRow]
    chart: str


def agent_runs(entry: Entry) -> list[BenchmarkRun]:
    """The run files of the newest refresh with agent figures that replayed its lowest reuse ratio's trace, reuse
    aside, by reuse ratio: a run file of another trace in the same refresh is left out, never shown beside it."""
    found = [r for r in entry.runs if r.agents is not None and r.agents.levels]
    if not found:
        return []
    newest = max(r.stamp for r in found)
    runs = sorted((r for r in found if r.stamp == newest), key=lambda r: _reuse(r.agents))
    return [r for r in runs if same_trace(r, runs[0])]


def _reuse(agents: AgentRun | None) -> float:
    return agents.trace.reuse if agents is not None and agents.trace is not None else 0.0


def same_trace(a: BenchmarkRun, b: BenchmarkRun) -> bool:
    """Whether two agent runs replayed one trace, its reuse ratio aside: the generator's parameters when both have
    them, else (an owner's trace file) the same file by its sha256."""
    ta, tb = (r.agents.trace if r.agents else None for r in (a, b))
    if ta is not None and tb is not None:
        return ta.with_reuse(0.0) == tb.with_reuse(0.0)
    wa, wb = a.workload, b.workload
    return ta is tb is None and wa is not None and wb is not None and wa.trace_sha256 == wb.trace_sha256


def pooled_hit_rate(levels: list[AgentLevel]) -> float | None:
    """vLLM's hits over its queries, summed over every level that read them."""
    read = [lv for lv in levels if lv.prefix_queries is not None]
    queries = sum(lv.prefix_queries or 0 for lv in read)
    return sum(lv.prefix_hits or 0 for lv in read) / queries if queries else (0.0 if read else None)


def capacity_text(cap: SessionCapacity | None) -> str:
    """'4 sessions (5 missed; decided 4–5)', or why there is none."""
    if cap is None:
        return "not searched"
    if cap.sessions is None:
        if cap.upper_sessions is None:
            text = "not found: no session count met or missed"
        elif cap.upper_sessions == 1:
            text = "below 1 session: even one missed"
        else:
            text = f"below {cap.upper_sessions} sessions: {cap.upper_sessions} missed, no lower count met"
        return text + (f"; stopped: {cap.stopped}" if cap.stopped else "")
    text = f"{cap.sessions} session{'s' if cap.sessions > 1 else ''}"
    if cap.upper_sessions is not None:
        text += f" ({cap.upper_sessions} missed"
    else:
        text += " (≥: none missed"
    lo, hi = cap.decided or (None, None)
    text += f"; decided at {cap.confidence:.0%}: {lo or '—'} to {hi or '—'})"
    return text + (f"; stopped: {cap.stopped}" if cap.stopped else "")


def ttft_chart(rows: list[ReuseRow], slo: Slo | None) -> str:
    """Sessions against the TTFT of first and of later turns at the SLO's percentile (p95 without one), a pair of
    lines per reuse ratio (a count measured twice: its later try), the SLO's TTFT limit and each capacity marked."""
    pct = slo.percentile if slo else 95
    series = []
    for row in rows:
        last = {lv.sessions: lv for lv in row.levels}  # levels are sorted by (sessions, probe)
        for part, label in (("ttft_first_ms", "first turns"), ("ttft_later_ms", "later turns")):
            points = [
                (float(n), value)
                for n, lv in sorted(last.items())
                if (s := getattr(lv, part)) and (value := getattr(s, f"p{pct}")) is not None
            ]
            series.append(Series(f"reuse {row.reuse:.0%}, {label}", points))
    rules = [Rule(slo.ttft, f"p{slo.percentile} TTFT limit")] if slo and slo.ttft else []
    shares: dict[int, list[str]] = {}  # one mark a session count: ratios with the same capacity share its line
    for row in rows:
        if row.capacity and row.capacity.sessions:
            shares.setdefault(row.capacity.sessions, []).append(f"{row.reuse:.0%}")
    marks = [Mark(float(n), f"capacity, reuse {', '.join(s)}") for n, s in shares.items()]
    return chart(
        f"Agent sessions: p{pct} TTFT per turn",
        Axis("concurrent sessions"),
        Axis(f"p{pct} TTFT (ms)"),
        series,
        rules=rules,
        marks=marks,
    )


def agents_section(entry: Entry) -> AgentsSection | None:
    """None when the recipe has no agent run."""
    runs = agent_runs(entry)
    if not runs:
        return None
    rows = []
    for run in runs:
        agents = run.agents
        assert agents is not None
        rows.append(
            ReuseRow(
                reuse=_reuse(agents),
                intended=agents.intended_hit_rate,
                measured=pooled_hit_rate(agents.levels),
                capacity=agents.capacity,
                levels=sorted(agents.levels, key=lambda lv: (lv.sessions, lv.probe or 0)),
                workload=run.workload.describe() if run.workload else "not stated",
                run=run,
            )
        )
    first = runs[0].agents
    trace = first.trace.model_copy(update={"reuse": 0.0}).describe() if first and first.trace else "an owner's trace"
    slo = runs[0].slo
    return AgentsSection(
        runs[0].recorded_at.date().isoformat(),
        trace.replace(", 0% shared", ""),
        slo.describe() if slo else None,
        rows,
        ttft_chart(rows, slo),
    )


def agents_index(entry: Entry) -> dict[str, object]:
    """The index's Agents column: the capacity in sessions at the newest refresh's highest reuse ratio (a number to
    sort by), its words, and the trace and objective it holds under (in the cell's title: compare like for like)."""
    section = agents_section(entry)
    row = next((r for r in reversed(section.rows) if r.capacity is not None), None) if section else None
    if section is None or row is None or row.capacity is None:
        return {"agents": None, "agents_text": None, "agents_title": None}
    cap = row.capacity
    if cap.sessions is None:
        text = f"< {cap.upper_sessions}" if cap.upper_sessions is not None else "—"
    else:
        text = f"≥ {cap.sessions}" if cap.upper_sessions is None else str(cap.sessions)
    title = f"{capacity_text(cap)}; {row.reuse:.0%} shared prefix; trace {section.trace}; within {section.slo}"
    return {"agents": cap.sessions or 0, "agents_text": text, "agents_title": title}


class ApiAgents(Strict):
    """The capacity in sessions the index shows: the newest agent run's highest shared-prefix share."""

    run: str = Field(description="Id of the run file it comes from: runs/<id>.json.")
    capacity: SessionCapacity = Field(description="The capacity in sessions, its bracket and decided interval.")
    reuse: float = Field(description="Share of each first turn's blocks common to every session.")
    hit_rate: float | None = Field(description="vLLM's prefix-cache hits ÷ queries over the run's levels.")
    intended_hit_rate: float | None = Field(description="What an unbounded prefix cache could serve of the trace.")
    workload: Workload = Field(description="The workload key: the trace's parameters and its sha256.")
    slo: Slo = Field(description="The objective every level was judged against.")


def api_agents(entry: Entry) -> ApiAgents | None:
    """The index's agent figure (agents_section), with its run, trace and objective."""
    section = agents_section(entry)
    row = next((r for r in reversed(section.rows) if r.capacity is not None), None) if section else None
    if row is None or row.capacity is None or row.run.slo is None or row.run.workload is None:
        return None
    return ApiAgents(
        run=row.run.file_stem, capacity=row.capacity, reuse=row.reuse, hit_rate=row.measured,
        intended_hit_rate=row.intended, workload=row.run.workload, slo=row.run.slo,
    )  # fmt: skip
