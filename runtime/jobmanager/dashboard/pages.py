"""The dashboard's cluster pages: overview, jobs, TaskManagers (list and one), JobManager.

Each page is a Bokeh layout with an async :meth:`Page.refresh` that the document calls every
``refresh_ms`` on the JobManager's loop. Pages read the JobManager's REST API (runtime.jobmanager.
dashboard.source) and write escaped HTML (runtime.jobmanager.dashboard.html); the overview also shows
the live views of runtime.views fed by the event bus.
"""
from __future__ import annotations

from collections.abc import Collection
import time
from dataclasses import dataclass
from typing import Any

from bokeh.layouts import column
from bokeh.models.widgets import Div

from runtime.jobmanager.dashboard import html as h
from runtime.jobmanager.dashboard.source import DashboardError, RestSource
from runtime.process_info import LogTail, rss_bytes
from runtime.views import text
from runtime.views.figures import ClusterViews
from runtime.views.model import ClusterModel

TERMINAL = ("FINISHED", "CANCELED", "FAILED")


@dataclass
class PageContext:
    doc: Any  # the tab's Bokeh Document
    source: RestSource
    model: ClusterModel
    token_file: str | None
    logs: LogTail
    args: dict[str, str]
    cli_commands: Collection[str]  # the ``flinkbench`` subcommands the action hints may name


class Page:
    """A page: a header (navigation and title), a body Div, and how to refresh them."""
    section = "overview"
    title = "Overview"
    refresh_ms = 1000

    def __init__(self, ctx: PageContext):
        self.ctx = ctx
        self.header = Div(text=h.nav(self.section, self.title), sizing_mode="stretch_width", name="page-header")
        self.body = Div(text="<p class='fb-muted'>loading \u2026</p>", sizing_mode="stretch_width", name="page-body")
        self.layout = column(self.header, self.body, sizing_mode="stretch_width", name=f"page-{self.section}")

    async def refresh(self) -> None:
        try:
            html = await self.render()
        except DashboardError as err:
            html = h.error(str(err))
        if self.body.text != html:
            self.body.text = html

    async def render(self) -> str:
        raise NotImplementedError

    def tick(self) -> None:
        """Redraw what comes from the live model (called more often than :meth:`refresh`)."""


def jobmanagers_table(answer: dict) -> str:
    """Every JobManager, with and without HA (a lone JobManager lists itself as the leader)."""
    leader = (answer.get("leader") or {}).get("url")
    rows = [(h.esc(jm.get("id")), h.esc(jm.get("url") or jm.get("address")), h.state(jm.get("role")),
             h.esc(jm.get("pid")), "this one" if (jm.get("url") or jm.get("address")) == answer.get("self") else "")
            for jm in answer.get("jobmanagers") or []]
    if not rows and leader:
        rows = [("-", h.esc(leader), h.state("leader"), "-", "")]
    return h.table(["id", "address", "role", "pid", ""], rows, name="jobmanagers")


def jobs_table(jobs: list[dict]) -> str:
    rows = [(h.link(j.get("name") or j["jid"], job=j["jid"]), f"<code>{h.esc(j['jid'])}</code>", h.state(j.get("state")),
             h.esc(text.clock((j.get("start-time") or 0) / 1000)), h.esc(text.seconds((j.get("duration") or 0) / 1000)),
             h.esc(j.get("parallelism")), h.esc(_task_summary(j.get("tasks") or {})), h.esc(j.get("restarts", 0)))
            for j in sorted(jobs, key=lambda j: -(j.get("start-time") or 0))]
    return h.table(["name", "id", "state", "started", "duration", "parallelism", "tasks", "restarts"], rows, name="jobs")


def _task_summary(tasks: dict) -> str:
    shown = [f"{n} {k.lower()}" for k, n in tasks.items() if n and k.lower() != "total"]
    return ", ".join(shown) or "-"


def taskmanagers_table(tms: list[dict]) -> str:
    rows = [(h.link(tm["id"], taskmanager=tm["id"]), h.esc(tm.get("host")), h.state(tm.get("state", "REGISTERED")),
             h.esc(f"{tm.get('freeSlots', '-')}/{tm.get('slotsNumber', '-')}"), h.esc(tm.get("sparkMaster") or "-"),
             h.esc(tm.get("pid")))
            for tm in tms]
    return h.table(["id", "host", "state", "free slots", "Spark master", "pid"], rows, name="taskmanagers")


class OverviewPage(Page):
    """Cluster figures, JobManagers, running jobs, TaskManagers, and the live views."""

    def __init__(self, ctx: PageContext):
        super().__init__(ctx)
        self.views = ClusterViews(None)
        self.views.refresh(ctx.model, force=True)
        self.layout.children.append(self.views.layout)

    def tick(self) -> None:
        self.views.refresh(self.ctx.model)

    async def render(self) -> str:
        src = self.ctx.source
        overview, jms, jobs, tms = (await src.get("/overview"), await src.get("/jobmanagers"),
                                    await src.get("/jobs/overview"), await src.get("/taskmanagers"))
        self.ctx.model.set_leadership(jms.get("leader") or {}, jms.get("jobmanagers") or [])
        jms["self"] = src.url
        running = [j for j in jobs.get("jobs") or [] if j.get("state") not in TERMINAL]
        figures = h.key_values([
            ("TaskManagers", h.esc(overview.get("taskmanagers"))),
            ("slots", h.esc(f"{overview.get('slots-available')} free of {overview.get('slots-total')}")),
            ("jobs running", h.esc(overview.get("jobs-running"))), ("jobs finished", h.esc(overview.get("jobs-finished"))),
            ("jobs cancelled", h.esc(overview.get("jobs-cancelled"))), ("jobs failed", h.esc(overview.get("jobs-failed"))),
            ("version", h.esc(overview.get("flinkbench-version") or overview.get("flink-version")))], name="cluster")
        return (f"{figures}<h3>JobManagers</h3>{jobmanagers_table(jms)}<h3>Running jobs</h3>{jobs_table(running)}"
                f"<h3>TaskManagers</h3>{taskmanagers_table(tms.get('taskmanagers') or [])}<h3>Live views</h3>")


class JobsPage(Page):
    section, title = "jobs", "Jobs"

    async def render(self) -> str:
        return jobs_table((await self.ctx.source.get("/jobs/overview")).get("jobs") or [])


class TaskManagersPage(Page):
    section, title = "taskmanagers", "TaskManagers"

    async def render(self) -> str:
        return taskmanagers_table((await self.ctx.source.get("/taskmanagers")).get("taskmanagers") or [])


class TaskManagerPage(Page):
    """One TaskManager: where it runs, its Spark session, its slots and what runs in them."""
    section = "taskmanagers"

    def __init__(self, ctx: PageContext):
        self.title = f"TaskManager {ctx.args.get('taskmanager', '')}"
        super().__init__(ctx)

    async def render(self) -> str:
        tm_id = self.ctx.args["taskmanager"]
        tm = await self.ctx.source.get(f"/taskmanagers/{tm_id}")
        heartbeat = tm.get("timeSinceLastHeartbeat")
        master = tm.get("sparkMaster") or "-"
        with self.ctx.model.lock:
            known = self.ctx.model.taskmanagers.get(tm_id)
            status = dict(known.status) if known else {}
        facts = h.key_values([
            ("state", h.state(tm.get("state", "REGISTERED")) + (f" ({h.esc(tm['reason'])})" if tm.get("reason") else "")),
            ("host", h.esc(tm.get("host"))), ("pid", h.esc(tm.get("pid"))), ("data port", h.esc(tm.get("dataPort"))),
            ("slots", h.esc(f"{tm.get('freeSlots')} free of {tm.get('slotsNumber')}")),
            ("Spark session master", h.esc(master)), ("Spark UI", _spark_ui(tm)),
            ("memory", _memory(status)),
            ("registered", h.esc(text.clock((tm.get("registeredAt") or 0) / 1000))),
            ("last heartbeat", h.esc(f"{time.time() - heartbeat / 1000:.1f} s ago" if heartbeat is not None else "-"))],
            name="taskmanager")
        slots = h.table(["slot", "job", "tasks", "allocation"], [
            (h.esc(s.get("index")), h.link(s.get("job-name") or s["job-id"], job=s["job-id"]) if s.get("job-id") else "free",
             h.esc("; ".join(s.get("tasks") or [])), h.esc(s.get("allocation-id") or "-"))
            for s in tm.get("slots") or []], name="slots")
        logs = status.get("log_lines")
        log_html = (f"<pre class='fb-log' data-name='log'>{h.esc(chr(10).join(logs))}</pre>" if logs else
                    "<p class='fb-muted' data-name='log'>No log lines reported yet (TaskManagers send them every few "
                    "seconds).</p>")
        return f"{facts}<h3>Slots</h3>{slots}<h3>Log</h3>{log_html}"


def _spark_ui(tm: dict) -> str:
    url = tm.get("sparkUiUrl") or tm.get("spark-ui-url")
    if url:
        return f"<a href='{h.esc(url)}' target='_blank'>{h.esc(url)}</a>"
    return "<span class='fb-muted'>not served (the TaskManagers' Spark sessions run with spark.ui.enabled=false)</span>"


def _memory(status: dict) -> str:
    """What the TaskManager last reported: resident memory of its process and Spark JVM, the driver heap set."""
    if not status.get("rss_bytes"):
        return "<span class='fb-muted'>not reported yet</span>"
    return h.esc(f"{text.size(status['rss_bytes'])} resident (process and Spark JVM); Spark driver heap "
                 f"{status.get('spark_driver_memory') or '-'}")


class JobManagerPage(Page):
    """This JobManager: its role, the leader, every JobManager, its configuration and log lines."""
    section, title = "jobmanager", "JobManager"

    async def render(self) -> str:
        src = self.ctx.source
        jms = await src.get("/jobmanagers")
        jms["self"] = src.url
        me: dict = next((jm for jm in jms.get("jobmanagers") or [] if (jm.get("url") or jm.get("address")) == src.url), {})
        leader = (jms.get("leader") or {}).get("url")
        facts = h.key_values([("address", h.esc(src.url)), ("role", h.state(jms.get("role") or me.get("role") or "leader")),
                              ("leader", h.esc(leader or "none elected")), ("pid", h.esc(me.get("pid"))),
                              ("memory", h.esc(f"{text.size(rss_bytes())} resident"))], name="jobmanager")
        try:
            config = await src.get("/jobmanager/config")
            entries = config.get("entries") if isinstance(config, dict) and "entries" in config else config.get("value", [])
        except DashboardError as err:
            entries, facts = [], facts + h.error(str(err))
        config_html = h.table(["key", "value"], [(h.esc(e.get("key")), h.esc(e.get("value"))) for e in entries or []],
                              name="configuration")
        logs = self.ctx.logs.lines()[-200:]
        log_html = f"<pre class='fb-log' data-name='log'>{h.esc(chr(10).join(logs) or '(nothing logged yet)')}</pre>"
        return (f"{facts}<h3>JobManagers</h3>{jobmanagers_table(jms)}<h3>Configuration</h3>{config_html}"
                f"<h3>Log</h3>{log_html}")
