"""Bokeh figures for the four live views, bound to ColumnDataSources that a ClusterModel refreshes.

:class:`ClusterViews` builds one layout (a status line over four tabs: slots, tasks, checkpoints,
failover) for the whole cluster or for one job. Nothing here knows about Jupyter or the Bokeh
server: the notebook wraps ``views.layout`` in a widget, the dashboard adds it to a server document.

Bokeh documents may only be changed from their own thread or loop; :meth:`ClusterViews.refresh`
must be called there (the notebook's view updater thread, the dashboard's periodic callback).
"""
from __future__ import annotations

from bokeh.layouts import column
from bokeh.models import (ColumnDataSource, DataTable, Div, FactorRange, FixedTicker, HoverTool,
                          Range1d, TabPanel, Tabs)
from bokeh.palettes import RdYlGn11
from bokeh.plotting import figure
from bokeh.transform import linear_cmap

from runtime.views.columns import all_columns, graph_of
from runtime.views.graph import JobGraphView
from runtime.views.graph_figure import GraphFigure
from runtime.views.model import ClusterModel
from runtime.views.tables import redraw, table_of

ROW_PX = 34
SLOT_ROW_PX = 52  # room for a slot's task names on two lines
TABLE_ROW_PX = 26
BACKPRESSURE_PALETTE = RdYlGn11  # from green (no backpressure) to red (fully back-pressured)

_EMPTY = all_columns(ClusterModel())


def slot_view(source: ColumnDataSource) -> figure:
    """TaskManagers (rows) by slots (columns); each slot coloured by the job holding it."""
    fig = figure(y_range=FactorRange(), x_range=Range1d(-0.5, 1.5), height=140, sizing_mode="stretch_width",
                 toolbar_location=None, title="Slot allocation", x_axis_label="slot")
    fig.rect(x="slot", y="tm", width=0.94, height=0.82, source=source, fill_color="color", fill_alpha="alpha",
             line_color="#555555", legend_field="legend", name="slots")
    fig.text(x="slot", y="tm", text="label", source=source, text_align="center", text_baseline="middle",
             text_font_size="8pt", text_line_height=1.1)
    fig.add_tools(HoverTool(tooltips=[("TaskManager", "@tm_id"), ("slot", "@slot"), ("state", "@state"),
                                      ("job", "@job_name @job_id"), ("tasks", "@tasks")]))
    fig.xaxis.ticker = FixedTicker(ticks=[0, 1])
    fig.xgrid.visible = fig.ygrid.visible = False
    fig.legend.label_text_font_size = "8pt"
    fig.add_layout(fig.legend[0], "right")
    return fig


def bar_range_end(values: list) -> float:
    """The end of a bar chart's value axis: a little beyond the longest bar, in steps so that it moves seldom."""
    longest = max((v for v in values if v), default=0)
    if longest <= 0:
        return 1.0
    beyond = int(longest * 1.05)
    step = 10 ** max(0, len(str(beyond)) - 2)  # two significant digits
    return float((beyond // step + 1) * step)


def throughput_figure(rates: ColumnDataSource) -> figure:
    """Records per second into the job's first task and into its last, over time."""
    fig = figure(x_axis_type="datetime", height=170, sizing_mode="stretch_width", toolbar_location=None,
                 title="Throughput (records/s)")
    fig.line(x="time", y="source_rate", source=rates, color="#1f77b4", legend_label="into first task", line_width=2)
    fig.line(x="time", y="sink_rate", source=rates, color="#ff7f0e", legend_label="into last task", line_width=2)
    fig.legend.location = "top_left"
    fig.legend.label_text_font_size = "8pt"
    return fig


def task_view(tasks: ColumnDataSource, rates: ColumnDataSource):
    """Per-subtask records in (bar, coloured by backpressure), throughput over time, and the numbers."""
    # A fixed range moved from Python: an auto-range keeps the bounds it computed from the empty first data.
    bars = figure(y_range=FactorRange(), x_range=Range1d(0, 1), height=140, sizing_mode="stretch_width",
                  toolbar_location=None, title="Records in per subtask (colour: backpressure)", x_axis_label="records in")
    bars.hbar(y="label", right="records_in", height=0.7, source=tasks, name="tasks",
              fill_color=linear_cmap("backpressure", BACKPRESSURE_PALETTE, 0.0, 1.0), line_color=None)
    bars.add_tools(HoverTool(tooltips=[("task", "@task [@subtask]"), ("state", "@state"), ("records in", "@records_in"),
                                       ("records out", "@records_out"), ("in/s", "@in_rate"), ("out/s", "@out_rate"),
                                       ("backpressure", "@backpressure{0%}"), ("watermark", "@watermark"),
                                       ("TaskManager", "@tm_id slot @slot")]))
    throughput = throughput_figure(rates)
    table = table_of(tasks, [("label", "subtask"), ("state", "state"), ("attempt", "attempt"), ("tm_id", "TaskManager"),
                           ("slot", "slot"), ("records_in", "records in", "count"), ("records_out", "records out", "count"),
                           ("in_rate", "in/s", "rate"), ("out_rate", "out/s", "rate"),
                           ("backpressure", "backpressure", "percent"), ("watermark", "watermark"), ("error", "error")])
    return column(bars, throughput, table, sizing_mode="stretch_width"), bars


def checkpoint_figure(source: ColumnDataSource) -> figure:
    """Checkpoint spans on a time axis (colour: status), the restored one starred."""
    fig = figure(y_range=FactorRange(), x_axis_type="datetime", height=140, sizing_mode="stretch_width",
                 toolbar_location=None, title="Checkpoints (green completed, blue in progress, red failed; \u2605 restored)")
    fig.hbar(y="y", left="start", right="end", height=0.7, fill_color="color", line_color=None, source=source,
             name="checkpoints")
    fig.scatter(x="restored_time", y="y", marker="star", size=14, color="#000000", source=source)
    fig.add_tools(HoverTool(tooltips=[("checkpoint", "@kind @id"), ("status", "@status"), ("duration", "@duration s"),
                                      ("size", "@size bytes"), ("path", "@path"), ("reason", "@reason")]))
    return fig


def checkpoint_view(source: ColumnDataSource):
    """The checkpoint timeline and the details of each checkpoint."""
    fig = checkpoint_figure(source)
    table = table_of(source, [("id", "id"), ("kind", "kind"), ("job_name", "job"), ("status", "status"),
                            ("start", "triggered", "time"), ("duration", "duration s", "seconds"),
                            ("size", "size", "bytes"), ("restored", "restored"), ("path", "path"), ("reason", "reason")])
    return column(fig, table, sizing_mode="stretch_width"), fig


def failover_view(jobmanagers: ColumnDataSource, jobs: ColumnDataSource, restarts: ColumnDataSource):
    """JobManager leader and standbys; jobs with state, attempt, restarts; the restart log with causes."""
    return column(
        Div(text="<b>JobManagers</b>"),
        table_of(jobmanagers, [("url", "url"), ("role", "role"), ("pid", "pid")], height=90),
        Div(text="<b>Jobs</b>"),
        table_of(jobs, [("name", "job"), ("job_id", "id"), ("state", "state"), ("attempt", "attempt"),
                      ("restarts", "restarts"), ("last_cause", "last failure cause")], height=140),
        Div(text="<b>Restarts</b>"),
        table_of(restarts, [("time", "time", "time"), ("job_name", "job"), ("attempt", "attempt"),
                          ("delay", "delay s"), ("cause", "cause")], height=140),
        sizing_mode="stretch_width")


class ClusterViews:
    """The four views for the cluster (``job_id=None``) or one job, and how to refresh them.

    Only the tab on show is in the Bokeh document: the others hold a placeholder, so their plots and
    tables cost the page nothing while a job runs (every change to a document lays the page out again,
    and hidden tabs' tables made that cost a browser most of a core). Their sources still follow the
    model, so code that reads ``sources`` sees what every tab would show; a tab that the reader opens
    is put in at the next refresh, as it is then."""

    def __init__(self, job_id: str | None = None, title: str | None = None):
        self.job_id = job_id
        self.sources = {name: ColumnDataSource(data=_EMPTY[name], name=f"{name}-source")
                        for name in ("slots", "tasks", "rates", "checkpoints", "jobmanagers", "jobs", "restarts",
                                     "provider")}
        self.status = Div(text="", sizing_mode="stretch_width", styles={"font-size": "12px", "color": "#444"},
                          name="status")
        self.slot_fig = slot_view(self.sources["slots"])
        tasks, self.task_fig = task_view(self.sources["tasks"], self.sources["rates"])
        checkpoints, self.checkpoint_fig = checkpoint_view(self.sources["checkpoints"])
        failover = failover_view(self.sources["jobmanagers"], self.sources["jobs"], self.sources["restarts"])
        slots = column(self.slot_fig, Div(text="<b>Resource provider</b> (TaskManagers started and stopped)"),
                       table_of(self.sources["provider"], [("time", "time", "time"), ("decision", "decision"),
                                                         ("tm_id", "TaskManager"), ("reason", "reason")], height=140),
                       sizing_mode="stretch_width")
        self.graph = GraphFigure() if job_id else None
        self.job_graph: JobGraphView | None = None
        self.contents = {**({"Graph": self.graph.layout} if self.graph else {}), "Slots": slots, "Tasks": tasks,
                         "Checkpoints": checkpoints, "Failover": failover}
        # Two panels per tab, with the content and with a placeholder; the page redraws a tab when the list
        # of panels changes (not when a panel's child does).
        self._panels = {name: (TabPanel(child=content, title=name),
                               TabPanel(child=Div(text="", name=f"{name.lower()}-placeholder"), title=name))
                        for name, content in self.contents.items()}
        self.tabs = Tabs(tabs=[empty for _, empty in self._panels.values()], sizing_mode="stretch_width")
        header = [Div(text=f"<h3 style='margin:4px 0'>{title}</h3>")] if title else []
        self.layout = column(*header, self.status, self.tabs, sizing_mode="stretch_width")
        self.version = -1
        self._shown: dict[str, object] = {}
        tables = [t for content in self.contents.values() for t in content.select({"type": DataTable})]
        self._tables = {name: [t for t in tables if t.source is source] for name, source in self.sources.items()}

    def refresh(self, model: ClusterModel, force: bool = False) -> bool:
        """Copy the model's current columns into the sources and put the tab on show in the document;
        returns False when nothing changed."""
        if (not force and model.version == self.version and self._attached() == self.tabs.active
                and not self._has_live_checkpoint()):
            return False
        cols = all_columns(model, self.job_id)
        self.version = cols["version"]
        if self.graph is not None:
            with model.lock:
                self.job_graph = graph_of(model, self.job_id)
            self.graph.refresh(self.job_graph)
        for name, source in self.sources.items():
            if self._shown.get(name) != cols[name]:
                source.data = cols[name]
                self._shown[name] = cols[name]
                for table in self._tables[name]:
                    redraw(table)
        if self.status.text != cols["status"]:
            self.status.text = cols["status"]
        self._fit_axes(cols)
        self._attach(self.tabs.active)
        return True

    def on_tab_shown(self, wake) -> None:
        """Call ``wake()`` when the reader opens another tab, so that its content goes in at once."""
        self.tabs.on_change("active", lambda _attr, _old, _new: wake())

    def attach_all(self) -> None:
        """Put every tab's content in the document: for a view that will not change again (hidden tabs
        cost the page only while they change), so that each tab shows without a refresh."""
        self.tabs.tabs = [full for full, _ in self._panels.values()]

    def _attached(self) -> int | None:
        """The index of the tab whose content is in the document."""
        return next((i for i, panel in enumerate(self.tabs.tabs) if panel is self._panels[panel.title][0]), None)

    def _attach(self, active: int) -> None:
        wanted = [full if i == active else empty for i, (full, empty) in enumerate(self._panels.values())]
        if wanted != list(self.tabs.tabs):
            self.tabs.tabs = wanted

    def _fit_axes(self, cols: dict) -> None:
        """Size the plots to their rows and values."""
        fit_slots(self.slot_fig, cols["slots"])
        fit_rows(self.task_fig, list(reversed(cols["tasks"]["label"])))
        records_end = bar_range_end(cols["tasks"]["records_in"])
        if self.task_fig.x_range.end != records_end:
            self.task_fig.x_range.end = records_end
        fit_rows(self.checkpoint_fig, list(dict.fromkeys(reversed(cols["checkpoints"]["y"]))))

    def _has_live_checkpoint(self) -> bool:
        """An in-progress checkpoint's bar grows with the clock, so it needs redrawing without events."""
        return "IN_PROGRESS" in self._shown.get("checkpoints", {}).get("status", [])


def fit_rows(fig, factors: list[str], row_px: int = ROW_PX) -> None:
    """Give a figure of rows (TaskManagers, subtasks, checkpoints) these rows and the height they need."""
    if list(fig.y_range.factors) != factors:
        fig.y_range.factors = factors
        fig.height = max(120, 60 + row_px * len(factors))


def fit_slots(fig, slots: dict[str, list]) -> None:
    """A row per TaskManager, a column per slot index."""
    fit_rows(fig, list(dict.fromkeys(reversed(slots["tm"]))), SLOT_ROW_PX)
    count = max(slots["slot"], default=1) + 1
    if fig.x_range.end != count - 0.5:
        fig.x_range.end = count - 0.5
        fig.xaxis.ticker.ticks = list(range(count))
