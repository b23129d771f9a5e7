"""Charts over live results without a browser: a re-fired window replaces its point; series per y and by;
bad options and columns named; the Bokeh columns for line, bar and area."""
from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from IPython.core.magic_arguments import parse_argstring

from kernel_magics.chart_options import chart_spec
from kernel_magics.errors import FlinkError
from kernel_magics.magics import cell_options
from runtime.views.charts import ChartPoints, ChartSpec, ResultsChart

BASE = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
MS = int(BASE.timestamp() * 1000)


def windows(*rows: tuple[int, str, int]) -> pa.Table:
    """(window start offset s, user, clicks) rows as a window aggregate emits them."""
    return pa.table({"window_start": pa.array([BASE + dt.timedelta(seconds=s) for s, _, _ in rows], pa.timestamp("us", "UTC")),
                     "user": [u for _, u, _ in rows], "clicks": pa.array([c for _, _, c in rows], pa.int64())})


def test_a_refired_window_replaces_its_point_instead_of_adding_one():
    points = ChartPoints(ChartSpec("line", "window_start", ("clicks",)))
    points.add(windows((0, "a", 2), (10, "a", 1)))
    points.add(windows((0, "a", 3)))  # the window [0, 10) fires again with a late row counted
    assert points.series() == {"clicks": ([MS, MS + 10_000], [3, 1])}
    assert points.rows_seen == 3


def test_one_series_per_by_value_and_y_column():
    points = ChartPoints(ChartSpec("bar", "window_start", ("clicks",), by="user"))
    points.add(windows((0, "a", 2), (0, "b", 5), (10, "a", 1)))
    assert points.series() == {"a": ([MS, MS + 10_000], [2, 1]), "b": ([MS], [5])}
    both = ChartPoints(ChartSpec("line", "window_start", ("clicks", "clicks2"), by="user"))
    both.add(windows((0, "a", 2)).append_column("clicks2", pa.array([7])))
    assert set(both.series()) == {"a clicks", "a clicks2"}


def test_only_the_newest_points_stay():
    points = ChartPoints(ChartSpec("line", "window_start", ("clicks",)), max_points=2)
    points.add(windows((0, "a", 1), (10, "a", 2), (20, "a", 3)))
    assert points.series()["clicks"][1] == [2, 3]


def test_columns_the_results_lack_or_that_are_not_numbers_are_named():
    with pytest.raises(ValueError, match="no column 'ends'.*window_start, user, clicks"):
        ChartPoints(ChartSpec("line", "ends", ("clicks",))).add(windows((0, "a", 1)))
    with pytest.raises(ValueError, match="must be numbers: 'user'"):
        ChartPoints(ChartSpec("line", "window_start", ("user",))).add(windows((0, "a", 1)))
    chart = ResultsChart(ChartSpec("line", "ends", ("clicks",)))
    chart.append(windows((0, "a", 1)))  # shown under the cell, not raised into the view updater
    assert "no column 'ends'" in chart.message.text


def test_line_area_and_bar_columns():
    line = ResultsChart(ChartSpec("line", "window_start", ("clicks",), by="user"))
    line.append(windows((0, "a", 2), (10, "a", 4), (0, "b", 1)))
    assert line.source.data["label"] == ["a", "b"] and line.source.data["ys"] == [[2, 4], [1]]
    assert line.figure is not None and line.layout.children == [line.figure]
    area = ResultsChart(ChartSpec("area", "window_start", ("clicks",)))
    area.append(windows((0, "a", 2), (10, "a", 4)))
    assert area.source.data["ys"] == [[2, 4, 0.0, 0.0]]
    bar = ResultsChart(ChartSpec("bar", "window_start", ("clicks",), by="user"))
    bar.append(windows((0, "a", 2), (0, "b", 3)))
    assert bar.source.data["top"] == [2, 3] and bar.source.data["x"][0] < bar.source.data["x"][1]


def test_the_cell_options_make_a_chart_spec_or_say_what_is_missing():
    args = parse_argstring(cell_options, "--chart line --x window_end --y clicks,total --by user")
    assert chart_spec(args) == ChartSpec("line", "window_end", ("clicks", "total"), "user")
    assert chart_spec(parse_argstring(cell_options, "--name j")) is None
    with pytest.raises(FlinkError, match="needs --x COL and --y"):
        chart_spec(parse_argstring(cell_options, "--chart bar --x window_end"))
    with pytest.raises(FlinkError, match="add --chart"):
        chart_spec(parse_argstring(cell_options, "--y clicks"))
