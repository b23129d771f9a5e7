"""The job graph drawn with Bokeh, for the notebook's job view and the dashboard's job page.

Each task is a box at the position runtime.views.layout gave it (the figure's units are page pixels,
y pointing down, so the picture matches the side panel's SVG), filled on Flink's busy/backpressure
scale, with its name, parallelism, records in/out per second, busy and backpressured time and the
watermark's lag written inside; each exchange an arrow with its kind. Hovering a task lists its
subtasks; clicking one shows them in the table below (a browser-side filter, so it works the same in
a notebook and on the Bokeh server). The bottleneck hint sits above the picture.

Like every Bokeh model, :meth:`GraphFigure.refresh` must run on its document's thread.
"""
from __future__ import annotations

import html

from bokeh.layouts import column
from bokeh.models import (CDSView, ColumnDataSource, CustomJS, DataTable, Div, GroupFilter, HoverTool, NumberFormatter,
                          Range1d, TableColumn, TapTool, VeeHead, Arrow)
from bokeh.plotting import figure

from runtime.views import text
from runtime.views.tables import redraw
from runtime.views.graph import JobGraphView, label_lines, node_title

NODE_FIELDS = ("id", "x", "y", "w", "h", "left", "top", "fill", "border", "label", "title", "state", "parallelism",
               "in_rate", "out_rate", "busy", "backpressure", "watermark_lag", "state_size", "subtasks_html")
EDGE_FIELDS = ("source", "target", "x0", "y0", "x1", "y1", "label_x", "label_y", "label")
SUBTASK_FIELDS = ("node_id", "task", "subtask", "state", "taskmanager", "slot", "records_in", "records_out", "busy",
                  "backpressure", "state_size", "last_checkpoint")
WAITING = "<i>waiting for the job's plan \u2026</i>"


def _lines(node) -> str:
    return "\n".join(label_lines(node))


def _subtasks_html(node) -> str:
    rows = "".join(f"<tr><td>{s['subtask'] + 1}</td><td>{html.escape(s['state'])}</td>"
                   f"<td>{html.escape(s['taskmanager'] or '-')}</td><td>{'-' if s['slot'] is None else s['slot']}</td>"
                   f"<td>{text.count(s['records_in'])}</td><td>{text.count(s['records_out'])}</td>"
                   f"<td>{text.size(s['state_size'])}</td><td>{text.seconds(s['last_checkpoint_duration_s'])}</td></tr>"
                   for s in node.subtasks)
    return ("<table style='font-size:11px'><tr><th>#</th><th>state</th><th>TaskManager</th><th>slot</th><th>in</th>"
            f"<th>out</th><th>state size</th><th>last checkpoint</th></tr>{rows}</table>")


def node_columns(graph: JobGraphView | None) -> dict[str, list]:
    """One row per task: its box (centre, size, top left), colours and the text written in and around it."""
    cols: dict[str, list] = {k: [] for k in NODE_FIELDS}
    for n in graph.nodes if graph else []:
        title = node_title(n)
        values = (n.id, n.x + n.width / 2, n.y + n.height / 2, n.width, n.height, n.x + 8, n.y + 6, n.fill, n.border,
                  _lines(n), title, n.state, n.parallelism, text.rate(n.in_rate), text.rate(n.out_rate),
                  text.percent(n.busy), text.percent(n.backpressure),
                  text.seconds(n.watermark_lag_s) if n.watermark_lag_s is not None else "-",
                  text.size(n.state_size), _subtasks_html(n))
        for key, value in zip(NODE_FIELDS, values):
            cols[key].append(value)
    return cols


def edge_columns(graph: JobGraphView | None) -> dict[str, list]:
    cols: dict[str, list] = {k: [] for k in EDGE_FIELDS}
    for e in graph.edges if graph else []:
        (x0, y0), (x1, y1) = e.points
        for key, value in zip(EDGE_FIELDS, (e.source, e.target, x0, y0, x1, y1, (x0 + x1) / 2, (y0 + y1) / 2 - 4,
                                            e.label)):
            cols[key].append(value)
    return cols


def subtask_columns(graph: JobGraphView | None) -> dict[str, list]:
    cols: dict[str, list] = {k: [] for k in SUBTASK_FIELDS}
    for n in graph.nodes if graph else []:
        for s in n.subtasks:
            duration = s["last_checkpoint_duration_s"]
            values = (n.id, n.name, s["subtask"] + 1, s["state"], s["taskmanager"], "-" if s["slot"] is None else s["slot"],
                      s["records_in"], s["records_out"], s["busy"], s["backpressure"], text.size(s["state_size"]),
                      f"#{s['last_checkpoint_id']} in {text.seconds(duration)}" if duration is not None else "-")
            for key, value in zip(SUBTASK_FIELDS, values):
                cols[key].append(value)
    return cols


def graph_text_html(graph: JobGraphView | None) -> str:
    """The graph as text (collapsed under the picture): every task with its figures, every exchange.

    For readers that cannot see the canvas, and for tests that check what is drawn: the same numbers."""
    if graph is None:
        return ""
    nodes = "".join(
        f"<li data-node-id='{html.escape(n.id)}' data-name='{html.escape(n.name)}' data-state='{n.state}' "
        f"data-busy='{n.busy:.3f}' data-backpressure='{n.backpressure:.3f}' data-fill='{n.fill}' "
        f"data-x='{n.x:.0f}' data-y='{n.y:.0f}' data-width='{n.width:.0f}' data-height='{n.height:.0f}'>"
        f"{html.escape(n.name)} \u00d7{n.parallelism}: {_lines(n).replace(chr(10), ', ')}</li>" for n in graph.nodes)
    edges = "".join(f"<li data-edge='{html.escape(e.source)}->{html.escape(e.target)}' data-kind='{e.ship_strategy}'>"
                    f"{html.escape(graph.node(e.source).name)} \u2192 {html.escape(graph.node(e.target).name)}: "
                    f"{html.escape(e.label)}</li>" for e in graph.edges)
    bottleneck = f" data-bottleneck='{html.escape(graph.bottleneck)}'" if graph.bottleneck else ""
    return (f"<details class='flinkbench-graph-text' data-job-id='{html.escape(graph.job_id)}'{bottleneck}>"
            f"<summary style='font-size:11px;color:#666'>graph as text</summary><ul class='graph-nodes'>{nodes}</ul>"
            f"<ul class='graph-edges'>{edges}</ul></details>")


def hint_html(graph: JobGraphView | None) -> str:
    if graph is None:
        return WAITING
    if not graph.hint:
        return "<span style='color:#666'>No bottleneck: no running task is busy without being backpressured.</span>"
    return f"<b style='color:#b8860b'>\u26a0 {html.escape(graph.hint)}</b>"


def graph_figure(nodes: ColumnDataSource, edges: ColumnDataSource):
    """Tasks as boxes with their figures written in, exchanges as arrows with their kind (page pixels, y down)."""
    fig = figure(width=400, height=150, x_range=Range1d(0, 400), y_range=Range1d(150, 0), toolbar_location=None,
                 tools="", min_border=0, outline_line_color=None, name="graph-figure",
                 css_classes=["flinkbench-graph-figure"])
    fig.axis.visible = False
    fig.grid.visible = False
    fig.add_layout(Arrow(end=VeeHead(size=9, fill_color="#555", line_color="#555"), x_start="x0", y_start="y0",
                         x_end="x1", y_end="y1", source=edges, line_color="#777", line_width=1.5))
    fig.text(x="label_x", y="label_y", text="label", source=edges, text_align="center",
             text_baseline="bottom", text_font_size="10px", text_color="#444", name="graph-edge-labels")
    boxes = fig.rect(x="x", y="y", width="w", height="h", source=nodes, fill_color="fill",
                     line_color="border", line_width=2, name="graph-boxes",
                     selection_line_width=4, nonselection_fill_alpha=0.85)
    fig.text(x="left", y="top", text="title", source=nodes, text_font_size="12px", text_font_style="bold",
             text_color="#ffffff", text_baseline="top")
    fig.text(x="left", y="top", y_offset=18, text="label", source=nodes, text_font_size="11px",
             text_color="#ffffff", text_baseline="top", text_line_height=1.3)
    fig.add_tools(HoverTool(renderers=[boxes], tooltips="<b>@title</b> (@state)<br>in @in_rate, out @out_rate"
                            "<br>busy @busy, backpressured @backpressure<br>watermark lag @watermark_lag, "
                            "state @state_size<br>@subtasks_html{safe}"), TapTool(renderers=[boxes]))
    return fig


def fit_graph(fig, graph: JobGraphView) -> None:
    """Size the figure to the graph's layout (one unit a page pixel)."""
    width, height = int(graph.width), int(graph.height)
    if fig.width != width or fig.height != height:
        fig.width, fig.height = width, height
        fig.x_range.end = width
        fig.y_range.start = height


class GraphFigure:
    """The graph of one job and its subtask table, refreshed from :class:`JobGraphView` values."""

    def __init__(self):
        self.nodes = ColumnDataSource(node_columns(None), name="graph-nodes")
        self.edges = ColumnDataSource(edge_columns(None), name="graph-edges")
        self.subtasks = ColumnDataSource(subtask_columns(None), name="graph-subtasks")
        self.hint = Div(text=WAITING, name="graph-hint", sizing_mode="stretch_width")
        self.fig = graph_figure(self.nodes, self.edges)
        self.selected = GroupFilter(column_name="node_id", group="")
        self.table_title = Div(text="<b>Subtasks</b> (click a task)", name="graph-subtasks-title")
        self.table = self._table()
        self.text = Div(text="", name="graph-text", sizing_mode="stretch_width")
        self._watch_taps()
        self.layout = column(self.hint, self.fig, self.text, self.table_title, self.table, sizing_mode="stretch_width",
                             name="job-graph")
        self._shown: tuple | None = None

    def _table(self) -> DataTable:
        percent = NumberFormatter(format="0%")
        columns = [TableColumn(field="task", title="task"), TableColumn(field="subtask", title="#"),
                   TableColumn(field="state", title="state"), TableColumn(field="taskmanager", title="TaskManager"),
                   TableColumn(field="slot", title="slot"),
                   TableColumn(field="records_in", title="records in", formatter=NumberFormatter(format="0,0")),
                   TableColumn(field="records_out", title="records out", formatter=NumberFormatter(format="0,0")),
                   TableColumn(field="busy", title="busy", formatter=percent),
                   TableColumn(field="backpressure", title="backpressured", formatter=NumberFormatter(format="0%")),
                   TableColumn(field="state_size", title="state size"),
                   TableColumn(field="last_checkpoint", title="last checkpoint")]
        return DataTable(source=self.subtasks, view=CDSView(filter=self.selected), columns=columns, height=130,
                         index_position=None, sizing_mode="stretch_width", name="graph-subtask-table")

    def _watch_taps(self) -> None:
        """A click on a task shows its subtasks; in the browser, so no round trip is needed."""
        self.nodes.selected.js_on_change("indices", CustomJS(
            args={"nodes": self.nodes, "selected": self.selected, "title": self.table_title, "table": self.table},
            code="""
const i = nodes.selected.indices[0];
if (i === undefined) { return; }
selected.group = nodes.data.id[i];
title.text = '<b>Subtasks of ' + nodes.data.title[i] + '</b>';
table.view.tags = [Date.now()];
"""))

    def refresh(self, graph: JobGraphView | None) -> bool:
        """Show ``graph`` (None: no plan yet); returns False when nothing visible changed."""
        nodes, edges, subtasks = node_columns(graph), edge_columns(graph), subtask_columns(graph)
        shown = (nodes, edges, subtasks, hint_html(graph), graph_text_html(graph))
        if shown == self._shown:
            return False
        self._shown = shown
        self.nodes.data, self.edges.data, self.subtasks.data = nodes, edges, subtasks
        self.hint.text, self.text.text = shown[3], shown[4]
        redraw(self.table)
        if graph is not None:
            fit_graph(self.fig, graph)
            if self.selected.group not in nodes["id"]:
                self.selected.group = graph.bottleneck or (nodes["id"][0] if nodes["id"] else "")
                name = graph.node(self.selected.group).name if self.selected.group else ""
                self.table_title.text = f"<b>Subtasks of {html.escape(name)}</b> (click a task for another)"
        return True
