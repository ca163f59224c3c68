"""The regression report as a Markdown table: what the refresh workflow puts in its pull request's body.

Every figure compared gets one of four outcomes (regressed, improved, within noise, not enough data), so a reader
sees what was judged, not only what fired. Cell text from a run (level names, figures) is escaped for Markdown."""

from __future__ import annotations

from catalogue.stats.regression import Report, Row

OUTCOME_MARK = {"regressed": "🔴 regressed", "improved": "🟢 improved", "within noise": "within noise"}


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: no pipe, no newline, no HTML."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def _figure(value: float | None, unit: str) -> str:
    return "—" if value is None else f"{value:,.1f}{' ' + unit if unit else ''}"


def _row(row: Row) -> str:
    ratio = f"{row.value / row.median:.2f}x" if row.value is not None and row.median else "—"
    outcome = OUTCOME_MARK.get(row.outcome, row.outcome)
    why = f" ({row.why})" if row.why and row.outcome != "within noise" else ""
    return (
        f"| {cell(row.level)} | {cell(row.metric.label)} | {_figure(row.median, row.metric.unit)} | "
        f"{_figure(row.value, row.metric.unit)} | {ratio} | {cell(outcome + why)} |"
    )


def markdown(recipe_id: str, found: Report) -> str:
    """A heading, the counts of each outcome, what differs, and the table of every figure."""
    head = f"#### Regression check: `{cell(recipe_id)}` run {cell(found.run.stamp)}"
    if found.baseline is None:
        return f"{head}\n\nNo earlier run of this workload, topology and hardware: nothing to compare with.\n"
    counts: dict[str, int] = {}
    for row in found.rows:
        counts[row.outcome] = counts.get(row.outcome, 0) + 1
    order = ("regressed", "improved", "within noise", "not enough data")
    summary = ", ".join(f"{counts[o]} {o}" for o in order if counts.get(o))
    against = f"the median of {len(found.window)} earlier runs (newest {found.baseline.stamp})"
    lines = [head, "", f"Against {cell(against)}: {summary}.", ""]
    if found.differences:
        lines += ["What differs: " + cell("; ".join(found.differences)), ""]
    lines += [
        "| Level | Figure | Baseline | This run | Ratio | Outcome |",
        "| --- | --- | ---: | ---: | ---: | --- |",
        *(_row(row) for row in found.rows),
        "",
    ]
    return "\n".join(lines)
