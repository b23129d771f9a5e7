"""The dashboard's job page: header and actions, then tabs for the graph, subtasks, checkpoints (history,
a duration/size chart, the restored one), exceptions (root cause with traces) and configuration.

The graph is the live one of runtime.views (fed by the event bus); the rest is read from the job's
REST resources. The open tab is part of the address (``&tab=checkpoints``), so every tab is a link.
"""
from __future__ import annotations

from bokeh.layouts import column
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, LinearAxis, Range1d, TabPanel, Tabs
from bokeh.models.widgets import Div
from bokeh.plotting import figure

from runtime.jobmanager.dashboard import html as h
from runtime.jobmanager.dashboard.actions import ActionPanel, job_actions
from runtime.jobmanager.dashboard.pages import TERMINAL, Page, PageContext
from runtime.jobmanager.dashboard.source import DashboardError
from runtime.views import text
from runtime.views.columns import graph_of
from runtime.views.graph import backpressure_ratio, busy_ratio, plan_from_json
from runtime.views.graph_figure import GraphFigure

TABS = ("graph", "subtasks", "checkpoints", "exceptions", "configuration")
CHECKPOINT_COLORS = {"COMPLETED": "#2ca02c", "FAILED": "#d62728", "IN_PROGRESS": "#1f77b4"}


class JobPage(Page):
    section = "jobs"
    refresh_ms = 1000

    def __init__(self, ctx: PageContext):
        self.job_id = ctx.args["job"]
        self.title = f"Job {self.job_id}"
        super().__init__(ctx)
        self.actions = ActionPanel(ctx.doc, ctx.source, job_actions(self.job_id), ctx.token_file,
                                   lambda trigger: f"/jobs/{self.job_id}/savepoints/{trigger}", ctx.cli_commands)
        self.graph = GraphFigure()
        self.divs = {name: Div(text="", sizing_mode="stretch_width", name=f"tab-{name}") for name in TABS[1:]}
        self.checkpoints = ColumnDataSource(checkpoint_chart_columns({}), name="checkpoint-chart-source")
        panels = [TabPanel(child=self.graph.layout, title="Graph"), TabPanel(child=self.divs["subtasks"], title="Subtasks"),
                  TabPanel(child=column(self._checkpoint_chart(), self.divs["checkpoints"], sizing_mode="stretch_width"),
                           title="Checkpoints"),
                  TabPanel(child=self.divs["exceptions"], title="Exceptions"),
                  TabPanel(child=self.divs["configuration"], title="Configuration")]
        tab = ctx.args.get("tab", "graph")
        self.tabs = Tabs(tabs=panels, active=TABS.index(tab) if tab in TABS else 0, sizing_mode="stretch_width",
                         name="job-tabs")
        self.tabs.js_on_change("active", CustomJS(args={"names": list(TABS)}, code="""
const url = new URL(window.location.href);
url.searchParams.set('tab', names[cb_obj.active]);
window.history.replaceState(null, '', url.toString());
"""))
        self.layout.children.extend([self.actions.layout, self.tabs])

    def _checkpoint_chart(self):
        fig = figure(height=200, sizing_mode="stretch_width", toolbar_location=None, name="checkpoint-chart",
                     title="Checkpoint duration (bars, s) and size (line, bytes); \u2605 the restored one",
                     x_axis_label="checkpoint id", y_axis_label="duration s")
        fig.vbar(x="id", top="duration", width=0.7, color="color", source=self.checkpoints)
        fig.extra_y_ranges = {"size": Range1d(0, 1)}
        fig.add_layout(LinearAxis(y_range_name="size", axis_label="size (bytes)"), "right")
        fig.line(x="id", y="size", y_range_name="size", source=self.checkpoints, color="#444", line_width=2)
        fig.scatter(x="id", y="size", y_range_name="size", source=self.checkpoints, color="#444", size=5)
        fig.scatter(x="id", y="restored_at", marker="star", size=16, color="#000", source=self.checkpoints)
        fig.add_tools(HoverTool(tooltips=[("checkpoint", "@id (@kind)"), ("status", "@status"),
                                          ("duration", "@duration s"), ("size", "@size_text")]))
        fig.y_range.start = 0
        self._size_range = fig.extra_y_ranges["size"]
        return fig

    def tick(self) -> None:
        with self.ctx.model.lock:
            graph = graph_of(self.ctx.model, self.job_id)
        self.graph.refresh(graph)

    async def render(self) -> str:
        src = self.ctx.source
        details = await src.get(f"/jobs/{self.job_id}")
        job = self.ctx.model.jobs.get(self.job_id)
        if job is None or not job.vertex_order:  # ended before the model began (an archived job): no events will come
            self.ctx.model.seed_job(details)
        elif not job.plan and details.get("plan"):
            self.ctx.model.set_plan(self.job_id, plan_from_json(details["plan"]))
        self.actions.show_buttons(details.get("state") not in TERMINAL)
        self.divs["subtasks"].text = subtasks_html(details)
        self.divs["checkpoints"].text = await self._checkpoints()
        self.divs["exceptions"].text = await self._exceptions()
        self.divs["configuration"].text = await self._configuration(details)
        return job_header(details)

    async def _checkpoints(self) -> str:
        try:
            stats = await self.ctx.source.get(f"/jobs/{self.job_id}/checkpoints")
        except DashboardError as err:
            return h.error(str(err))
        cols = checkpoint_chart_columns(stats)
        if cols != dict(self.checkpoints.data):
            self.checkpoints.data = cols
            self._size_range.end = max([s for s in cols["size"] if s == s] + [1]) * 1.15
        return checkpoints_html(stats)

    async def _exceptions(self) -> str:
        try:
            return exceptions_html(await self.ctx.source.get(f"/jobs/{self.job_id}/exceptions"))
        except DashboardError as err:
            return h.error(str(err))

    async def _configuration(self, details: dict) -> str:
        parts = [h.key_values([("job type", h.esc(details.get("job-type") or details.get("jobType"))),
                               ("parallelism", h.esc(details.get("parallelism"))),
                               ("max parallelism", h.esc(details.get("maxParallelism")))], name="job-configuration")]
        for title, path, name in (("Checkpointing", f"/jobs/{self.job_id}/checkpoints/config", "checkpoint-config"),
                                  ("Job configuration", f"/jobs/{self.job_id}/config", "job-config")):
            try:
                answer = await self.ctx.source.get(path)
            except DashboardError as err:
                if err.status != 404:
                    parts.append(f"<h3>{h.esc(title)}</h3>{h.error(str(err))}")
                continue
            parts.append(f"<h3>{h.esc(title)}</h3>" + h.key_values(_flatten(answer), name=name))
        return "".join(parts)


def _flatten(answer: dict, prefix: str = "") -> list[tuple[str, str]]:
    pairs = []
    for key, value in answer.items():
        if isinstance(value, dict):
            pairs += _flatten(value, f"{prefix}{key}.")
        else:
            pairs.append((f"{prefix}{key}", h.esc(value)))
    return pairs


def job_header(details: dict) -> str:
    """The job's name and figures; a SQL job's whole statement under them (its name is Flink's short one)."""
    start, end = (details.get("start-time") or 0) / 1000, (details.get("end-time") or -1)
    statement = (details.get("plan") or {}).get("statement")
    return h.key_values([
        ("name", h.esc(details.get("name"))), ("state", h.state(details.get("state"))),
        ("id", f"<code>{h.esc(details.get('jid'))}</code>"), ("started", h.esc(text.clock(start))),
        ("ended", h.esc(text.clock(end / 1000) if end and end > 0 else "-")),
        ("duration", h.esc(text.seconds((details.get("duration") or 0) / 1000))),
        ("restarts", h.esc(details.get("restarts", 0))),
        *([("statement", f"<pre class='fb-statement'>{h.esc(statement)}</pre>")] if statement else [])], name="job")


def subtasks_html(details: dict) -> str:
    """Every task's subtasks: state, TaskManager (linked) and slot, records, busy and backpressured time."""
    parts = []
    for vertex in details.get("vertices") or []:
        rows = []
        for s in vertex.get("subtasks") or []:
            m = s.get("metrics") or {}
            tm = s.get("taskmanager-id")
            rows.append((h.esc(s.get("subtask", 0) + 1), h.state(s.get("status")), h.esc(s.get("attempt")),
                         h.link(tm, taskmanager=tm) if tm else "-", h.esc("-" if s.get("slot") is None else s["slot"]),
                         h.esc(text.count(m.get("records_in"))), h.esc(text.count(m.get("records_out"))),
                         h.esc(text.rate(m.get("records_out_per_s"))), h.esc(text.percent(busy_ratio(m))),
                         h.esc(text.percent(backpressure_ratio(m))), h.esc(text.size(m.get("last_checkpoint_size"))),
                         h.link("stages", job=details.get("jid", ""), vertex=vertex.get("id", ""),
                                subtask=str(s.get("subtask", 0)))))
        parts.append(f"<h3>{h.esc(vertex.get('name'))} <span class='fb-muted'>\u00d7{h.esc(vertex.get('parallelism'))}"
                     f"</span> {h.state(vertex.get('status'))}</h3>" + h.table(
                         ["#", "state", "attempt", "TaskManager", "slot", "records in", "records out", "out/s", "busy",
                          "backpressured", "state size", "Spark"], rows, name=f"subtasks-{vertex.get('id')}"))
    return "".join(parts) or "<p class='fb-muted'>no tasks</p>"


def checkpoint_chart_columns(stats: dict) -> dict[str, list]:
    """One bar per checkpoint in Flink's ``/jobs/<id>/checkpoints`` history, oldest first; the restored one starred."""
    restored = ((stats.get("latest") or {}).get("restored") or {}).get("id")
    cols: dict[str, list] = {k: [] for k in ("id", "kind", "status", "duration", "size", "size_text", "color",
                                             "restored_at")}
    for c in sorted(stats.get("history") or [], key=lambda c: c["id"]):
        size = c.get("state_size", c.get("checkpointed_size"))
        duration = (c.get("end_to_end_duration") or 0) / 1000
        for key, value in (("id", c["id"]), ("kind", "savepoint" if c.get("is_savepoint") else "checkpoint"),
                           ("status", c.get("status")), ("duration", duration),
                           ("size", float(size) if size is not None else float("nan")), ("size_text", text.size(size)),
                           ("color", CHECKPOINT_COLORS.get(c.get("status"), "#888")),
                           ("restored_at", duration if c["id"] == restored else float("nan"))):
            cols[key].append(value)
    return cols


def checkpoints_html(stats: dict) -> str:
    counts = stats.get("counts") or {}
    restored = (stats.get("latest") or {}).get("restored")
    facts = h.key_values([(k, h.esc(counts.get(k, 0))) for k in ("completed", "in_progress", "failed", "restored")] +
                         [("restored from", h.esc(f"#{restored['id']} {restored.get('external_path') or ''}")
                           if restored else "<span class='fb-muted'>none</span>")], name="checkpoint-counts")
    rows = [(h.esc(c["id"]) + (" \u2605" if restored and c["id"] == restored.get("id") else ""),
             h.esc("savepoint" if c.get("is_savepoint") else "checkpoint"), h.state(c.get("status")),
             h.esc(text.clock((c.get("trigger_timestamp") or 0) / 1000)),
             h.esc(text.seconds((c.get("end_to_end_duration") or 0) / 1000)),
             h.esc(text.size(c.get("state_size", c.get("checkpointed_size")))),
             h.esc(text.size(c.get("checkpointed_size"))),
             h.esc(c.get("external_path") or c.get("failure_message") or ""))
            for c in sorted(stats.get("history") or [], key=lambda c: -c["id"])]
    return facts + h.table(["id", "kind", "status", "triggered", "duration", "size", "uploaded", "path or failure"],
                           rows, name="checkpoint-history")


def exceptions_html(answer: dict) -> str:
    """The root cause with its full trace, then every failure the job handled, newest first."""
    history = (answer.get("exceptionHistory") or {}).get("entries") or []
    root = answer.get("root-exception")
    if not root and not history:
        return "<p class='fb-muted' data-name='no-exceptions'>No exceptions: the job has not failed.</p>"
    parts = []
    if root:
        parts.append(f"<h3>Root cause</h3><pre class='fb-trace' data-name='root-exception'>{h.esc(root)}</pre>")
    for entry in history:
        where = " on ".join(x for x in (entry.get("taskName"), entry.get("taskManagerId") or entry.get("endpoint")) if x)
        parts.append(f"<details data-name='exception'><summary>{h.esc(text.clock((entry.get('timestamp') or 0) / 1000))} "
                     f"<b>{h.esc(entry.get('exceptionName'))}</b> {h.esc(where)}</summary>"
                     f"<pre class='fb-trace'>{h.esc(entry.get('stacktrace'))}</pre></details>")
    return "".join(parts)
