"""A recipe's headline figures as the index, its model's page and its own page show them: one list, made from the
recipe's index row (catalogue.site.index_page.index_row), each figure with its workload, its date and the
methodology page that says how it was measured."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catalogue.site.templating import fmt_num
from catalogue.site.urls import link, methodology


@dataclass(frozen=True)
class Figure:
    """One headline figure of a recipe."""

    key: str
    """Which figure: single, best, per_node or capacity (the index row's key)."""
    label: str
    """What it is, in words."""
    value: str
    """The figure with its unit, as the pages print it: '52.3 tok/s'."""
    note: str
    """Where it was reached ('at c=64'), or its objective; '' when nothing."""
    workload: str
    """The workload the figure comes from, in words."""
    date: str | None
    """When its run was measured (ISO date); None when the source does not say."""
    topic: tuple[str, str]
    """(methodology page, anchor) that says how it was measured."""

    def how(self, from_path: str) -> str:
        """A relative link from the page at `from_path` to the methodology section of this figure."""
        return link(from_path, methodology(self.topic[0]), self.topic[1])


def figures(row: dict[str, Any]) -> list[Figure]:
    """The headline figures a row has, in the order the pages show them (none for a launch-only recipe)."""
    out = []
    workload, date = row["workload"], row["measured_on"]
    if row["single"] is not None:
        out.append(
            Figure(
                "single",
                "One user (c=1)",
                f"{fmt_num(row['single'])} tok/s",
                "output tokens/s with one request in flight",
                workload,
                date,
                ("index", "columns"),
            )
        )
    if row["best"] is not None:
        out.append(
            Figure(
                "best",
                "Best throughput",
                f"{fmt_num(row['best'])} tok/s",
                f"at c={row['best_c']}" + (f", {fmt_num(row['per_node'])} tok/s per Spark" if row["nodes"] > 1 else ""),
                workload,
                date,
                ("index", "columns"),
            )
        )
    if row["capacity_text"] is not None:
        out.append(
            Figure(
                "capacity",
                "Capacity",
                f"{row['capacity_text']} req/s",
                f"within {row['capacity_slo']}",
                row["capacity_workload"] or workload,
                row["capacity_date"],
                ("capacity", ""),
            )
        )
    return out
