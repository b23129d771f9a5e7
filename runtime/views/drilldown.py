"""One subtask's drill-down into its Spark work, as the notebook (``%flink drilldown``) and the dashboard (a
subtask's page) show it: its recent Spark stages slowest first, its stage time per plan, and beside them where the
subtask's time went (busy time, phase times), from ``GET .../subtasks/:subtaskindex/spark``. Pure: HTML text from
the REST answer; the side panel draws the same answer itself (extension/src/views/drilldown.tsx).
"""
from __future__ import annotations

import html

from runtime.views import text
from runtime.views.graph import JobGraphView

STAGE_HEADERS = ("stage", "jobs", "plan", "duration", "tasks", "run time", "CPU", "input", "shuffle read",
                 "shuffle write", "spilled", "status")


def pick(graph: JobGraphView, task: str | None = None, subtask: int | None = None) -> tuple[str, int]:
    """The task (vertex id) and subtask to open: those given (a task by id, name or the start of its name), else
    the busiest subtask of the task the bottleneck hint names, else of the first task."""
    if not graph.nodes:
        raise ValueError("the job has no tasks yet")
    if task is None:
        node = graph.node(graph.bottleneck) if graph.bottleneck else graph.nodes[0]
    else:
        found = [n for n in graph.nodes if task in (n.id, n.name)] or [n for n in graph.nodes if n.name.startswith(task)]
        if len(found) != 1:
            names = ", ".join(repr(n.name) for n in graph.nodes)
            raise ValueError(f"no single task {task!r} in the job (its tasks: {names})")
        node = found[0]
    index = subtask if subtask is not None else (node.busiest or 0)
    if not 0 <= index < node.parallelism:
        raise ValueError(f"task {node.name!r} has subtasks 1 to {node.parallelism}, not {index + 1}")
    return node.id, index


def _table(headers, rows, css: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    if not body:
        body = f"<tr><td colspan='{len(headers)}'>none yet</td></tr>"
    return f"<table class='{css}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _ms(value) -> str:
    return text.seconds(float(value or 0) / 1000.0)


def summary_html(info: dict, task_name: str, parallelism: int) -> str:
    """Which subtask, and how much of its busy time its Spark stages account for."""
    busy, stages = info.get("busy-time") or 0, info.get("stage-time") or 0
    share = f" ({text.percent(stages / busy)} of its busy time)" if busy else ""
    lines = [f"<b>{html.escape(task_name)} ({info['subtask'] + 1}/{parallelism})</b>, attempt {info['attempt']}, "
             f"{html.escape(info['status'])} on {html.escape(info.get('taskmanager-id') or '-')}",
             f"busy {_ms(busy)}; Spark stages {_ms(stages)}{share} in {info.get('stage-count') or 0} stages"]
    if info.get("parts"):
        lines.append("its busy time in parts: " + parts_text(info))
    if info.get("dominant-part") and info["dominant-part"] != "stages":
        lines.append(f"&#9888; {html.escape(PART_NAMES.get(info['dominant-part'], info['dominant-part']))} "
                     "takes most of its time")
    if info.get("dominant-plan"):
        lines.append(f"&#9888; Spark stage <code>{html.escape(info['dominant-plan'])}</code> takes "
                     f"{text.percent(info.get('dominant-share') or 0)} of its recent stage time")
    return "<p class='flinkbench-drilldown-summary'>" + "<br>".join(lines) + "</p>"


PART_NAMES = {"stages": "Spark stages", "driver": "Spark's driver outside any stage (optimizer, planning)",
              "transfer": "Arrow in and out of Spark", "taskmanager": "the TaskManager's own work"}


def parts_text(info: dict) -> str:
    """``Spark stages 1.2 s (10 %), Spark's driver ... 9.8 s (82 %), ...``: the parts of its busy time."""
    return ", ".join(f"{html.escape(PART_NAMES.get(p['part'], p['part']))} {_ms(p['time'])} ({text.percent(p['share'])})"
                     for p in info.get("parts") or [])


def stages_html(info: dict) -> str:
    rows = [(f"{s['stage-id']}.{s['attempt']}", html.escape(", ".join(map(str, s["job-ids"]))),
             f"<code>{html.escape(s['plan'])}</code>", _ms(s["duration"]), str(s["tasks"]), _ms(s["executor-run-time"]),
             _ms(s["executor-cpu-time"]), text.size(s["input-bytes"]), text.size(s["shuffle-read-bytes"]),
             text.size(s["shuffle-write-bytes"]), text.size(s["memory-spilled-bytes"] + s["disk-spilled-bytes"]),
             html.escape(s["status"])) for s in info.get("stages") or []]
    return _table(STAGE_HEADERS, rows, "flinkbench-drilldown-stages")


def plans_html(info: dict) -> str:
    rows = [(f"<code>{html.escape(p['plan'])}</code>", str(p["stages"]), _ms(p["duration"]), text.percent(p["share"]))
            for p in info.get("plans") or []]
    return _table(("plan", "stages", "time", "share"), rows, "flinkbench-drilldown-plans")


def phases_html(info: dict) -> str:
    phases = sorted((info.get("phases") or {}).items(), key=lambda kv: -kv[1])
    return _table(("phase", "time"), [(html.escape(k), text.seconds(v)) for k, v in phases], "flinkbench-drilldown-phases")


def drilldown_html(info: dict, task_name: str, parallelism: int, spark_ui: str | None = None) -> str:
    """The whole drill-down: summary, stages slowest first, time per plan and the subtask's phase times beside."""
    link = f" <a href='{html.escape(spark_ui)}' target='_blank'>Spark UI</a>" if spark_ui else ""
    return (f"<div class='flinkbench-drilldown'>{summary_html(info, task_name, parallelism)}"
            f"<h4>Spark stages, slowest first{link}</h4>{stages_html(info)}"
            "<div style='display:flex;gap:24px;flex-wrap:wrap'>"
            f"<div><h4>Stage time per plan</h4>{plans_html(info)}</div>"
            f"<div><h4>The subtask's phase times</h4>{phases_html(info)}</div></div></div>")
