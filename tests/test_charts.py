"""Charts: the Pareto frontier, scaling, and that every label is escaped."""

from __future__ import annotations

import re

from catalogue.site.charts import MARK_LINE, Axis, Mark, Series, chart, line_chart, pareto_chart, pareto_frontier


def test_frontier_keeps_only_points_no_other_beats_on_both_axes():
    points = [(10, 50), (20, 40), (15, 30), (30, 10), (25, 9), (5, 50)]
    assert pareto_frontier(points) == [(10, 50), (20, 40), (30, 10)]


def test_pareto_chart_draws_each_point_and_the_frontier():
    svg = pareto_chart(
        "t", [Series("a", [(10, 50), (20, 40)], labels={10: "c=1", 20: "c=2"}), Series("b", [(15, 30), (30, 10)])]
    )
    assert svg.count('class="rc-pt"') == 4
    frontier = re.search(r'class="rc-frontier" d="M([^"]+)"', svg).group(1)
    assert len(frontier.split("L")) == 3
    assert 'data-tip="a: 50 tok/s per user at c=1"' in svg


def test_line_chart_spans_the_box_and_escapes_names():
    svg = line_chart("<t>", "tok/s", [Series("<script>", [(1, 10), (4, 40)], spread={4: 5})])
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "&lt;t&gt;" in svg
    xs = [float(m) for m in re.findall(r'class="rc-pt" style="left:([\d.]+)%', svg)]
    assert xs == [0, 100]
    assert 'class="rc-err"' in svg and "± 5" in svg


def test_no_points_no_chart():
    assert line_chart("t", "ms", [Series("a", [])]) == ""


def test_mark_labels_stand_one_under_another_from_left_to_right():
    marks = [Mark(6, "capacity, reuse 0%"), Mark(2, "capacity, reuse 50%, 90%")]
    html = chart("t", Axis("sessions"), Axis("ms"), [Series("a", [(1, 10), (12, 40)])], marks=marks)
    found = re.findall(r'class="rc-mark-label [^"]+" style="left:([\d.]+)%(?:;top:([\d.]+)em)?">([^<]+)<', html)
    assert [(text, top) for _, top, text in found] == [
        ("capacity, reuse 50%, 90%", ""),
        ("capacity, reuse 0%", f"{MARK_LINE:g}"),
    ]
    assert float(found[0][0]) < float(found[1][0])
