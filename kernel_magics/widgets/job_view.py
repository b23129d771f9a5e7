"""JobView: what appears under a ``%%flink`` cell (or ``%flink attach``): a header line, the live table
of the job's latest results, and the four views of runtime.views for this job.

Two threads keep it alive: a reader that pulls the job's collected rows from the JobManager
(``GET /jobs/<id>/results`` by offset, so reconnects lose nothing) and the kernel's ViewUpdater,
which alone touches the widgets. The reader only queues rows and wakes the updater.
"""
from __future__ import annotations

import html
import threading
import time
from typing import Any, Protocol

import ipywidgets
import pyarrow as pa
from bokeh.layouts import column

from runtime.client import TERMINAL_STATES, ClusterError, JobFailed
from runtime.job_client import JobClient
from runtime.errors import last_line
from runtime.views.columns import STATE_COLORS
from runtime.views.charts import ChartSpec, ResultsChart
from runtime.views.figures import ClusterViews
from runtime.views.graph import plan_from_json
from runtime.views.model import ClusterModel
from runtime.views.results import ResultsTable
from runtime.views.static_copy import CopyHeader, render

from kernel_magics.widgets.bokehjs import LiveBokeh, ensure_loaded
from kernel_magics.widgets.static_output import StaticOutput, summary_line
from kernel_magics.widgets.updater import ViewUpdater

READ_LIMIT = 10_000
POLL_S = 0.3
PUBLISH_EVERY_S = 1.0  # how often -o VAR is rebound while a job runs
LINGER_S = 2.0  # keep redrawing this long after the end, for the last events


class ViewHost(Protocol):
    """What a view needs of its kernel: the model the events feed, the thread that redraws, the user's namespace
    (a FlinkSession, or a replay's own model with the kernel's updater)."""
    model: ClusterModel
    updater: ViewUpdater
    shell: Any


class JobView:
    keeps_tables = True  # ``-o VAR`` is every collected Arrow table (a SQL view keeps its changelog instead)

    def __init__(self, session: ViewHost, job: JobClient, name: str, max_rows: int = 100, output_var: str | None = None,
                 start_offset: int = 0, chart: ChartSpec | None = None):
        self.session = session
        self.job = job
        self.job_id = job.job_id
        self.name = name
        self.output_var = output_var
        self.views = ClusterViews(job.job_id)
        self.results = ResultsTable(max_rows)
        self.header = ipywidgets.HTML()
        self.views.refresh(session.model, force=True)  # before the widget copies the document
        self.views.on_tab_shown(session.updater.poke)
        self.chart = ResultsChart(chart) if chart else None
        shown = [self.chart.layout] if self.chart else []
        self.bokeh = LiveBokeh(column(*shown, self.results.table, self.views.layout, sizing_mode="stretch_width"))
        self.widget = ipywidgets.VBox([self.header, self.bokeh.widget])
        self.finished = threading.Event()
        self.state = "SUBMITTED"
        self.failure: str | None = None
        self.reader_error: str | None = None
        self.rows_total = 0
        self._lock = threading.Lock()
        self._pending: list[pa.Table] = []
        self._tail: pa.Table | None = None
        self._kept: list[pa.Table] | None = [] if output_var and self.keeps_tables else None
        self.start_offset = start_offset
        self._offset = start_offset
        self._stop = threading.Event()
        self._finished_at: float | None = None
        self._published_at = 0.0
        self._reader = threading.Thread(target=self._read, name=f"flinkbench-results-{self.job_id[:8]}", daemon=True)
        self.copy = StaticOutput()
        self.source = ""  # where the events come from when not a cluster (a replay says so)
        self.ended_reason = "the job ended"

    def __repr__(self) -> str:
        return f"JobView({self.name!r}, {self.job_id}, {self.current_state()})"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        ensure_loaded()
        bundle = dict(self.widget._repr_mimebundle_())  # the widget, with words for fronts that cannot show it
        bundle["text/plain"] = f"the live view of job '{self.name}' (a widget, shown while its kernel runs)"
        display(bundle, raw=True)
        self.copy.show()

    # -- lifecycle (main thread) ---------------------------------------------------------------
    def start(self) -> JobView:
        """Draw the header, then hand the view to the updater and start reading results."""
        self.header.value = self._header_html()
        self._reader.start()
        self.session.updater.add(self)
        return self

    def stop(self) -> None:
        """Stop reading (the job itself keeps running)."""
        self._stop.set()

    def wait(self) -> str:
        """Block until the job ended and every result was read; KeyboardInterrupt passes through."""
        while not self.finished.wait(0.25):
            pass
        return self.state

    def cancel(self, timeout: float = 30.0) -> str:
        """Cancel the job from the notebook (``view.cancel()``); returns the state it reached."""
        self.job.cancel()
        self.finished.wait(timeout)
        return self.current_state()

    def raise_if_failed(self) -> None:
        if self.state == "FAILED":
            from kernel_magics.errors import render_job_failure

            raise render_job_failure(JobFailed(self.job_id, self.failure or "no cause recorded"), self.name)

    def current_state(self) -> str:
        with self.session.model.lock:
            job = self.session.model.jobs.get(self.job_id)
            modelled = job.state if job else None
        return self.state if self.state in TERMINAL_STATES or not modelled else modelled

    # -- results ------------------------------------------------------------------------------
    def dataframe(self):
        """Collected rows as pandas: all of them with ``-o``, else the ones the live table holds."""
        with self._lock:
            if self._kept is not None:
                tables = list(self._kept)
            else:
                tables = [self._tail] if self._tail is not None else []
        if not tables:
            schema = self.results.schema or pa.schema([])
            return schema.empty_table().to_pandas()
        return pa.concat_tables(tables, promote_options="default").to_pandas()

    def _load_plan(self) -> None:
        """The job's tasks and exchanges, for the graph: the event stream does not carry them."""
        try:
            plan = self.job.plan()
        except ClusterError as err:
            self.reader_error = f"cannot read the job's plan for its graph ({err})"
            return
        self.session.model.set_plan(self.job_id, plan_from_json(plan))

    def _read(self) -> None:
        """Reader thread: pull rows by offset until the job ends and all its rows are read."""
        backoff = POLL_S
        self._load_plan()
        while not self._stop.is_set():
            try:
                table, nxt, done, state = self.job.fetch(self._offset, READ_LIMIT)
            except ClusterError as err:
                if err.status == 404:
                    self.reader_error = f"the JobManager no longer knows this job: {err}"
                    break
                self.reader_error = f"cannot read results ({err}); retrying"
                self.session.updater.poke()
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            backoff, self.reader_error = POLL_S, None
            self._offset, self.state = nxt, state or self.state
            if table.num_rows or self.results.schema is None and table.num_columns:
                self._queue(table)
            self._publish()
            if done:
                break
            if not table.num_rows:
                self._stop.wait(POLL_S)
        if self.state == "FAILED":
            try:
                self.failure = self.job.exceptions().get("root-exception")
            except ClusterError as err:
                self.failure = f"(the remote traceback could not be fetched: {err})"
        self._publish(force=True)
        self._finished_at = time.monotonic()
        self.finished.set()
        self.session.updater.poke()

    def _queue(self, table: pa.Table) -> None:
        with self._lock:
            self._pending.append(table)
            self.rows_total += table.num_rows
            if self._kept is not None and table.num_rows:
                self._kept.append(table)
            if table.num_rows:
                tail = table if self._tail is None else pa.concat_tables([self._tail, table], promote_options="default")
                self._tail = tail.slice(max(0, tail.num_rows - self.results.max_rows))
        self.session.updater.poke()

    def _publish(self, force: bool = False) -> None:
        """Rebind ``-o VAR`` to the rows so far (at most once a second while running)."""
        if not self.output_var or not (force or time.monotonic() - self._published_at >= PUBLISH_EVERY_S):
            return
        self._published_at = time.monotonic()
        self.session.shell.user_ns[self.output_var] = self.dataframe()

    # -- drawing (updater thread) --------------------------------------------------------------
    def refresh(self) -> bool:
        self.bokeh.resync_if_needed()
        self.views.refresh(self.session.model)
        with self._lock:
            pending, self._pending = self._pending, []
        if pending:
            self._draw(pending)
        text = self._header_html()
        if self.header.value != text:
            self.header.value = text
        live = self._finished_at is None or time.monotonic() - self._finished_at < LINGER_S
        if not live:
            self.views.attach_all()  # the last pass: nothing redraws this view again
            self.leave_copy(self.ended_reason if self.current_state() in TERMINAL_STATES else "the view stopped")
        return live

    # -- the static copy ----------------------------------------------------------------------
    def leave_copy(self, reason: str) -> bool:
        """Put the view's static copy in the cell's output (once; any thread): for the saved notebook."""
        state = self.current_state()
        header = CopyHeader(self.name, self.job_id, state, self.rows_total, reason, time.time(),
                            failure=self.failure or "", source=self.source, **self._copy_extra())
        table, printed = self.copy_results()
        return self.copy.fill(lambda bokehjs: render(self.session.model, header, table, printed, bokehjs),
                              summary_line(self.name, state, self.rows_total))

    def copy_results(self) -> tuple[pa.Table | None, str]:
        """The rows the live table shows (or the text a view prints instead)."""
        return self.results.tail, ""

    def _copy_extra(self) -> dict:
        return {}

    def _draw(self, pending: list[pa.Table]) -> None:
        """Show the tables that arrived since the last refresh."""
        rows = pa.concat_tables(pending, promote_options="default")
        self.results.append(rows)
        if self.chart is not None:
            self.chart.append(rows)

    def _header_html(self) -> str:
        state = self.current_state()
        with self.session.model.lock:
            job = self.session.model.jobs.get(self.job_id)
            attempt, restarts = (job.attempt, job.restarts) if job else (0, 0)
            connection = dict(self.session.model.connection)
        shown = min(self.rows_total, self.results.max_rows)
        color = STATE_COLORS.get(state, "#555")
        parts = [f"<b>{html.escape(self.name)}</b>", f"job <code>{self.job_id}</code>",
                 f"<span style='color:{color};font-weight:bold'>{state}</span>",
                 f"attempt {attempt}, restarts {restarts}",
                 f"{self.rows_total:,} rows collected" + (f" (showing the last {shown})" if self.rows_total > shown else "")]
        lines = [" \u00b7 ".join(parts)]
        if self.source:
            lines.append(f"<span style='color:#666'>{html.escape(self.source)}</span>")
        graph = self.views.job_graph
        if graph is not None and graph.hint and state == "RUNNING":
            lines.append(f"<span class='flinkbench-bottleneck' style='color:#b8860b'>\u26a0 {html.escape(graph.hint)}</span>")
        if connection["state"] != "connected":
            lines.append(f"<span style='color:#c60'>{html.escape(connection['message'])}</span>")
        if self.reader_error:
            lines.append(f"<span style='color:#c60'>{html.escape(self.reader_error)}</span>")
        if self.failure:
            lines.append(f"<details open><summary style='color:#d62728'>job failed: "
                         f"{html.escape(last_line(self.failure))}</summary>"
                         f"<pre style='font-size:11px'>{html.escape(self.failure)}</pre></details>")
        return "<div style='font-size:13px'>" + "<br>".join(lines) + "</div>"
