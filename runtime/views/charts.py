"""Charts over a job's live results: line, bar or area, one series per y column and ``by`` value.

Rows arrive as Arrow tables, as the results table gets them. A chart keeps the latest y values per
series and x: a row whose x its series already has *replaces* that point. That is what a window that
fires again (allowed lateness, an updated aggregate) means for its result, so a re-fired window moves
its point instead of adding a second one. :class:`ChartPoints` holds that rule without Bokeh;
:class:`ResultsChart` draws it, and like every Bokeh model must be changed on its document's thread.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from bokeh.layouts import column
from bokeh.models import ColumnDataSource, Div, HoverTool
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from runtime.views.results import bokeh_columns

CHART_KINDS = ("line", "bar", "area")
MAX_POINTS = 1000  # per series: the largest x values stay


@dataclass(frozen=True)
class ChartSpec:
    """What to draw: ``kind`` of chart, the ``x`` column, one or more ``y`` columns, an optional ``by``."""
    kind: str
    x: str
    y: tuple[str, ...]
    by: str | None = None

    def __post_init__(self):
        if self.kind not in CHART_KINDS:
            raise ValueError(f"chart kind must be one of {', '.join(CHART_KINDS)}, got {self.kind!r}")
        if not self.x or not self.y or not all(self.y):
            raise ValueError("a chart needs an x column and at least one y column")

    def check(self, schema: pa.Schema) -> None:
        """Raise ValueError naming every chart column the results do not have, and what they do have."""
        wanted = [self.x, *self.y, *([self.by] if self.by else [])]
        missing = [c for c in wanted if c not in schema.names]
        if missing:
            raise ValueError(f"the results have no column {', '.join(map(repr, missing))} for the chart; "
                             f"their columns are {', '.join(schema.names)}")
        not_numbers = [c for c in self.y if not _numeric(schema.field(c).type)]
        if not_numbers:
            raise ValueError(f"chart y columns must be numbers: {', '.join(map(repr, not_numbers))} are not")


def _numeric(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)


class ChartPoints:
    """The latest y per (series, x); x values as Bokeh plots them (times as epoch milliseconds)."""

    def __init__(self, spec: ChartSpec, max_points: int = MAX_POINTS):
        self.spec = spec
        self.max_points = max_points
        self._series: dict[str, dict] = {}  # label -> {x: y}
        self.x_is_text = False
        self.rows_seen = 0

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self.spec.check(table.schema)
        self.x_is_text = pa.types.is_string(table.schema.field(self.spec.x).type)
        cols = bokeh_columns(table.select([c for c in dict.fromkeys([self.spec.x, *self.spec.y, self.spec.by]) if c]))
        groups = cols[self.spec.by] if self.spec.by else [None] * table.num_rows
        for i, x in enumerate(cols[self.spec.x]):
            if x is None:
                continue
            for y in self.spec.y:
                points = self._series.setdefault(self.label(groups[i], y), {})
                points[x] = cols[y][i]  # a re-fired window replaces its point
                if len(points) > self.max_points:
                    del points[min(points)]
        self.rows_seen += table.num_rows

    def label(self, group, y: str) -> str:
        if self.spec.by is None:
            return y
        return f"{group}" if len(self.spec.y) == 1 else f"{group} {y}"

    def series(self) -> dict[str, tuple[list, list]]:
        """Each series' points sorted by x: label -> (xs, ys)."""
        out = {}
        for label in sorted(self._series, key=str):
            points = self._series[label]
            xs = sorted(points, key=lambda v: (str(v) if self.x_is_text else v))
            out[label] = (xs, [points[x] for x in xs])
        return out


class ResultsChart:
    """A live chart of a job's collected rows; the figure is made when the first rows tell the x type."""

    def __init__(self, spec: ChartSpec, height: int = 280):
        self.spec = spec
        self.points = ChartPoints(spec)
        self.height = height
        self.source = ColumnDataSource({}, name="chart-source")
        self.message = Div(text=f"<i>{spec.kind} chart of {', '.join(spec.y)} by {spec.x}: waiting for rows \u2026</i>",
                           name="chart-message")
        self.layout = column(self.message, sizing_mode="stretch_width", name="results-chart")
        self.figure = None
        self._shown: dict | None = None

    def append(self, table: pa.Table) -> None:
        """Add rows (on the document's thread); a bad --chart column is shown, not raised."""
        try:
            self.points.add(table)
        except ValueError as err:
            self.message.text = f"<span style='color:#c00'>chart: {err}</span>"
            return
        data = self.columns()
        if data == self._shown:
            return
        if self.figure is None and data["label"]:
            made = self.figure = self._make_figure(table)
            self.layout.children = [made]
        if self.figure is not None and self.points.x_is_text:
            self.figure.xaxis.major_label_overrides = {i: str(c) for i, c in enumerate(self._categories())}
        self.source.data = self._shown = data

    def columns(self) -> dict[str, list]:
        """What the glyph draws: one item per series for lines and areas, one per point for bars."""
        series = self.points.series()
        palette = {label: Category10_10[i % 10] for i, label in enumerate(series)}
        if self.spec.kind == "bar":
            return self._bar_columns(series, palette)
        xs, ys = [], []
        for x, y in series.values():
            x = [self._x(v) for v in x]
            if self.spec.kind == "area":
                xs.append(x + x[::-1])
                ys.append(list(y) + [0.0] * len(y))
            else:
                xs.append(x)
                ys.append(list(y))
        return {"xs": xs, "ys": ys, "label": list(series), "color": [palette[s] for s in series]}

    def _bar_columns(self, series: dict, palette: dict) -> dict[str, list]:
        xs_all = sorted({self._x(v) for xs, _ in series.values() for v in xs})
        step = min((b - a for a, b in zip(xs_all, xs_all[1:])), default=1.0) or 1.0
        width = 0.8 * step / max(1, len(series))
        cols: dict[str, list] = {"x": [], "top": [], "label": [], "color": [], "width": []}
        for k, (label, (xs, ys)) in enumerate(series.items()):
            for x, y in zip(xs, ys):
                cols["x"].append(self._x(x) + (k - (len(series) - 1) / 2) * width)
                cols["top"].append(y)
                cols["label"].append(label)
                cols["color"].append(palette[label])
                cols["width"].append(width)
        return cols

    def _x(self, value):
        return self._categories().index(value) if self.points.x_is_text else value

    def _categories(self) -> list:
        return sorted({v for xs, _ in self.points.series().values() for v in xs}, key=str)

    def _make_figure(self, table: pa.Table):
        kind = table.schema.field(self.spec.x).type
        timed = pa.types.is_timestamp(kind) or pa.types.is_date(kind)
        fig = figure(height=self.height, sizing_mode="stretch_width", toolbar_location=None, name="chart-figure",
                     x_axis_type="datetime" if timed else "linear", x_axis_label=self.spec.x,
                     y_axis_label=", ".join(self.spec.y), css_classes=["flinkbench-results-chart"])
        if self.spec.kind == "line":
            fig.multi_line(xs="xs", ys="ys", color="color", legend_field="label", line_width=2, source=self.source)
        elif self.spec.kind == "area":
            fig.patches(xs="xs", ys="ys", color="color", fill_alpha=0.35, legend_field="label", source=self.source)
        else:
            fig.vbar(x="x", top="top", width="width", color="color", legend_field="label", source=self.source)
            fig.add_tools(HoverTool(tooltips=[("series", "@label"), (self.spec.x, "@x"), ("value", "@top")]))
        fig.legend.location = "top_left"
        fig.legend.label_text_font_size = "8pt"
        return fig
