"""A static copy of a job's live view: one piece of HTML that keeps what the view showed, for a saved
notebook read without a kernel or a cluster (nbconvert, nbviewer, GitHub).

The live view is a widget: without its kernel a saved notebook shows nothing of it. The copy is made
when the job ends (or its view stops) and holds two layers. Plain HTML, for readers that run no script
(GitHub): the results table, the job's tasks with their figures and its exchanges, the checkpoints, the
restarts and the TaskManagers lost. And where scripts run (nbconvert's HTML, nbviewer, JupyterLab), the
live view's Bokeh figures (job graph, throughput, checkpoint timeline, slots) drawn from JSON in the same
HTML. BokehJS itself travels inline (no network needed) in the copies that are asked to carry it; each
copy draws its figures once BokehJS is in the page, whichever copy brought it.

Sections carry ``data-section`` and the results table its columns and row count as attributes, so a test
can compare copies without depending on timing. Pure apart from Bokeh: the figures are new models, never
the live view's, so a copy can be made on any thread.
"""
from __future__ import annotations

import html
import json
import uuid
from dataclasses import dataclass

import pyarrow as pa
from bokeh.embed import json_item
from bokeh.models import ColumnDataSource
from bokeh.resources import Resources

from runtime.views import text
from runtime.views.columns import all_columns, graph_of
from runtime.views.figures import checkpoint_figure, fit_rows, fit_slots, slot_view, throughput_figure
from runtime.views.graph import JobGraphView, label_lines
from runtime.views.graph_figure import edge_columns, fit_graph, graph_figure, node_columns
from runtime.views.model import ClusterModel

SECTIONS = ("results", "graph", "throughput", "checkpoints", "failover")
DOT = " \u00b7 "
OTHER_JOB_COLOR = "#d9d9d9"
CELL = "style='border:1px solid #ddd;padding:2px 6px;text-align:left;font-size:12px'"


@dataclass(frozen=True)
class CopyHeader:
    """What the copy says about the job besides the model: its name, state and why the copy was made."""
    name: str
    job_id: str
    state: str
    rows_total: int = 0
    reason: str = "the job ended"
    made_at: float = 0.0
    statement: str = ""  # a SQL view's statement
    failure: str = ""
    source: str = ""  # where the events came from when not a cluster, e.g. a recording's name


def render(model: ClusterModel, header: CopyHeader, results: pa.Table | None, results_text: str = "",
           with_bokehjs: bool = False) -> str:
    """The copy's HTML. ``results`` are the rows the live table showed (``results_text`` instead for a view that
    prints them); ``with_bokehjs`` puts BokehJS in (one copy per page needs it)."""
    uid = f"flinkbench-static-{uuid.uuid4().hex[:12]}"
    with model.lock:
        cols = all_columns(model, header.job_id)
        cols["slots"] = _others_anonymous(cols["slots"], header.job_id)
        graph = graph_of(model, header.job_id)
        job = model.jobs.get(header.job_id)
        attempt, restarts = (job.attempt, job.restarts) if job else (0, 0)
    figures = _figures(uid, cols, graph)
    parts = [_header_html(header, attempt, restarts),
             _section("results", "Results", _results_html(results, results_text, header.rows_total)),
             _section("graph", "Job graph", _figure_div(uid, "graph") + _graph_html(graph)),
             _section("throughput", "Throughput", _figure_div(uid, "throughput")),
             _section("checkpoints", "Checkpoints", _figure_div(uid, "checkpoints") + _checkpoints_html(cols)),
             _section("failover", "Failover", _failover_html(cols) + _figure_div(uid, "slots"))]
    return (f"<div class='flinkbench-static' id='{uid}' data-job-id='{html.escape(header.job_id)}' "
            f"data-state='{html.escape(header.state)}' style='font-family:sans-serif;font-size:13px'>"
            + "".join(parts) + _scripts(uid, figures, with_bokehjs) + "</div>")


def _others_anonymous(slots: dict[str, list], job_id: str) -> dict[str, list]:
    """A copy keeps one job: slots other jobs hold at the time read as taken by another job, unnamed."""
    out = {key: list(values) for key, values in slots.items()}
    for i, holder in enumerate(out["job_id"]):
        if holder and holder != job_id:
            out["job_name"][i] = out["label"][i] = out["legend"][i] = "another job"
            out["tasks"][i], out["color"][i] = "", OTHER_JOB_COLOR
    return out


# -- plain HTML -------------------------------------------------------------------------------
def _header_html(header: CopyHeader, attempt: int, restarts: int) -> str:
    facts = [f"<b>{html.escape(header.name)}</b>", f"job <code>{html.escape(header.job_id)}</code>",
             f"<b class='flinkbench-static-state'>{html.escape(header.state)}</b>",
             f"attempt {attempt}, restarts {restarts}", f"{header.rows_total:,} rows collected"]
    made = f"a static copy of the live view, made when {html.escape(header.reason)}"
    made += f" ({text.clock(header.made_at)} UTC)" if header.made_at else ""
    made += f"; {html.escape(header.source)}" if header.source else ""
    out = f"<div>{DOT.join(facts)}</div><div style='color:#666;font-size:11px'>{made}</div>"
    if header.statement:
        out += f"<pre style='font-size:11px;margin:2px 0'>{html.escape(header.statement)}</pre>"
    if header.failure:
        out += f"<pre class='flinkbench-static-failure' style='color:#d62728;font-size:11px'>" \
               f"{html.escape(header.failure)}</pre>"
    return out


def _section(name: str, title: str, body: str) -> str:
    return (f"<section class='flinkbench-static-section' data-section='{name}'>"
            f"<h4 style='margin:10px 0 4px'>{title}</h4>{body}</section>")


def table_html(columns: list[str], rows: list[list], css_class: str = "") -> str:
    """A plain HTML table; its columns and row count are attributes too."""
    head = "".join(f"<th {CELL}>{html.escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td {CELL}>{html.escape(_cell(v))}</td>" for v in row) + "</tr>" for row in rows)
    return (f"<table class='{css_class}' data-columns='{html.escape(json.dumps(columns))}' data-rows='{len(rows)}' "
            f"style='border-collapse:collapse;margin:2px 0'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return str(round(value, 4))
    return str(value)


def _results_html(results: pa.Table | None, results_text: str, rows_total: int) -> str:
    if results_text:
        return f"<pre class='flinkbench-static-results' style='font-size:12px'>{html.escape(results_text)}</pre>"
    if results is None or not results.num_columns:
        return "<p class='flinkbench-static-results'>no rows collected</p>"
    rows = [list(r.values()) for r in results.to_pylist()]
    note = f"<p style='color:#666;font-size:11px'>the last {len(rows):,} of {rows_total:,} rows</p>" \
        if rows_total > len(rows) else ""
    return note + f"<div style='max-height:320px;overflow:auto'>" \
        f"{table_html(results.column_names, rows, 'flinkbench-static-results')}</div>"


def _graph_html(graph: JobGraphView | None) -> str:
    if graph is None:
        return "<p>the job's plan was not known</p>"
    tasks = [[n.name, n.parallelism, n.state, f"{n.records_in:,}", f"{n.records_out:,}", "; ".join(label_lines(n)[1:])]
             for n in graph.nodes]
    names = {n.id: n.name for n in graph.nodes}
    exchanges = [[names[e.source], names[e.target], e.label] for e in graph.edges]
    return (table_html(["task", "parallelism", "state", "records in", "records out", "figures"], tasks,
                       "flinkbench-static-tasks")
            + (table_html(["from", "to", "exchange"], exchanges, "flinkbench-static-exchanges") if exchanges else ""))


def _checkpoints_html(cols: dict) -> str:
    cp = cols["checkpoints"]
    rows = [[cp["id"][i], cp["kind"][i], cp["status"][i], text.clock(cp["start"][i] / 1000.0),
             text.seconds(cp["duration"][i]), text.size(cp["size"][i]), "\u2605 restored" if cp["restored"][i] else ""]
            for i in range(len(cp["id"]))]
    if not rows:
        return "<p>no checkpoints (checkpointing was off, or the job ended before the first)</p>"
    return table_html(["id", "kind", "status", "triggered (UTC)", "duration", "size", "restored"], rows,
                      "flinkbench-static-checkpoints")


def _failover_html(cols: dict) -> str:
    restarts = cols["restarts"]
    rows = [[text.clock(restarts["time"][i] / 1000.0), restarts["attempt"][i], restarts["delay"][i],
             restarts["cause"][i]] for i in range(len(restarts["time"]))]
    out = table_html(["time (UTC)", "attempt", "delay s", "cause"], rows, "flinkbench-static-restarts") if rows \
        else "<p class='flinkbench-static-restarts'>no restarts</p>"
    slots = cols["slots"]
    lost = sorted({slots["tm_id"][i] for i in range(len(slots["tm_id"])) if slots["state"][i] == "lost"})
    if lost:
        out += f"<p class='flinkbench-static-lost'>TaskManagers lost: {html.escape(', '.join(lost))}</p>"
    jms = cols["jobmanagers"]
    if jms["url"]:
        out += table_html(["JobManager", "role"], [list(r) for r in zip(jms["url"], jms["role"])],
                          "flinkbench-static-jobmanagers")
    return out


# -- Bokeh figures ----------------------------------------------------------------------------
def _figures(uid: str, cols: dict, graph: JobGraphView | None) -> list[dict]:
    """The figures as Bokeh's standalone JSON, each for the div of its section."""
    figs = {"throughput": throughput_figure(ColumnDataSource(cols["rates"])),
            "checkpoints": checkpoint_figure(ColumnDataSource(cols["checkpoints"])),
            "slots": slot_view(ColumnDataSource(cols["slots"]))}
    fit_rows(figs["checkpoints"], list(dict.fromkeys(reversed(cols["checkpoints"]["y"]))))
    fit_slots(figs["slots"], cols["slots"])
    if graph is not None:
        figs["graph"] = graph_figure(ColumnDataSource(node_columns(graph)), ColumnDataSource(edge_columns(graph)))
        fit_graph(figs["graph"], graph)
    return [dict(json_item(fig, f"{uid}-{name}")) for name, fig in figs.items()]


def _figure_div(uid: str, name: str) -> str:
    return f"<div id='{uid}-{name}' class='flinkbench-static-figure' data-figure='{name}'></div>"


def bokehjs() -> str:
    """BokehJS (its core bundle: the copies' figures need no widgets or tables), for inlining."""
    return "\n".join(Resources(mode="inline", components=["bokeh"]).js_raw)


def _scripts(uid: str, figures: list[dict], with_bokehjs: bool) -> str:
    """The figures' JSON and a script that draws them once BokehJS is there (at once, or at the page's load)."""
    items = json.dumps(figures).replace("</", "<\\/")
    library = f"<script type='text/plain' id='{uid}-bokehjs'>{bokehjs()}</script>" if with_bokehjs else ""
    return library + f"<script type='application/json' id='{uid}-items'>{items}</script>" + """<script>
(function () {
  var lib = document.getElementById("UID-bokehjs");
  if (lib && typeof window.Bokeh === "undefined") {
    var s = document.createElement("script"); s.text = lib.textContent; document.head.appendChild(s);
  }
  function draw() {
    if (typeof window.Bokeh === "undefined") { return false; }
    JSON.parse(document.getElementById("UID-items").textContent).forEach(function (item) {
      window.Bokeh.embed.embed_item(item, item.target_id);
    });
    return true;
  }
  if (!draw()) { window.addEventListener("load", draw); }
})();
</script>""".replace("UID", uid)
