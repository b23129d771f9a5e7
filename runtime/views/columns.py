"""Column data for each view, computed from a ClusterModel: plain dicts of equal-length lists.

These are what the Bokeh ColumnDataSources hold, so tests (and the REST comparison in the notebook
test) can check a view's data without rendering anything. Call with ``model.lock`` held, or use
:func:`all_columns`, which takes it.
"""
from __future__ import annotations

import hashlib
import time

from runtime.errors import last_line
from runtime.views.graph import JobGraphView, SubtaskFigures, job_graph
from runtime.views.model import TERMINAL_TASK_STATES, ClusterModel

NAN = float("nan")
FREE_COLOR = "#f2f2f2"
LOST_COLOR = "#b0b0b0"
STARTING_COLOR = "#dfe8f1"
JOB_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
               "#bcbd22", "#7f7f7f")
STATE_COLORS = {
    "CREATED": "#c7c7c7", "SCHEDULED": "#aec7e8", "DEPLOYING": "#9edae5", "INITIALIZING": "#9edae5",
    "RUNNING": "#2ca02c", "FINISHED": "#1f77b4", "CANCELING": "#ffbb78", "CANCELED": "#ff7f0e",
    "FAILED": "#d62728", "IN_PROGRESS": "#aec7e8", "COMPLETED": "#2ca02c",
}


def job_color(job_id: str | None) -> str:
    """A colour per job that stays the same across views, processes and reconnects."""
    if not job_id:
        return FREE_COLOR
    return JOB_PALETTE[int(hashlib.sha1(job_id.encode()).hexdigest()[:8], 16) % len(JOB_PALETTE)]


def short_task(name: str, width: int = 28) -> str:
    return name if len(name) <= width else name[: width - 1] + "\u2026"


def tm_label(tm_id: str, state: str) -> str:
    if state in ("LOST", "STARTING"):
        return f"{tm_id} ({state.lower()})"
    return tm_id


# -- slot allocation --------------------------------------------------------------------------
def slot_columns(model: ClusterModel, job_id: str | None = None) -> dict[str, list]:
    """One row per TaskManager slot: who holds it, with what tasks; lost TaskManagers greyed, the ones the
    resource provider is starting shown with their slots to come."""
    live_tasks: dict[tuple[str, int], list[str]] = {}
    for sub in model.subtasks.values():
        if sub.state in TERMINAL_TASK_STATES or sub.tm_id is None or sub.slot_index is None:
            continue
        names = live_tasks.setdefault((sub.tm_id, sub.slot_index), [])
        label = f"{sub.task_name} ({sub.subtask_index + 1})"
        if label not in names:
            names.append(label)
    cols: dict[str, list] = {k: [] for k in ("tm", "tm_id", "slot", "state", "job_id", "job_name", "tasks",
                                            "label", "color", "alpha", "legend")}
    for tm in sorted(model.taskmanagers.values(), key=lambda t: (t.state == "LOST", t.id)):
        count = max(tm.slots, 1 + max((i for (t, i) in model.slots if t == tm.id), default=-1), 1)
        for index in range(count):
            slot = model.slots.get((tm.id, index))
            holder = slot.job_id if slot and tm.state != "LOST" else None
            tasks = live_tasks.get((tm.id, index)) or (list(slot.tasks) if slot and holder else [])
            if tm.state == "LOST":
                state, color, label = "lost", LOST_COLOR, "lost"
            elif tm.state == "STARTING":  # the local provider is starting it: slots to come
                state, color, label = "starting", STARTING_COLOR, "starting"
            elif holder:
                state, color = "allocated", job_color(holder)
                label = "\n".join(short_task(t.split(" -> ")[0]) for t in tasks[:2]) if tasks else \
                    short_task(slot.job_name or holder[:8])
            else:
                state, color, label = "free", FREE_COLOR, "free"
            cols["tm"].append(tm_label(tm.id, tm.state))
            cols["tm_id"].append(tm.id)
            cols["slot"].append(index)
            cols["state"].append(state)
            cols["job_id"].append(holder or "")
            cols["job_name"].append(slot.job_name if slot and holder else "")
            cols["tasks"].append("; ".join(tasks))
            cols["label"].append(label)
            cols["color"].append(color)
            cols["alpha"].append(1.0 if job_id is None or holder == job_id or not holder else 0.35)
            cols["legend"].append((slot.job_name or holder[:8]) if holder else state)
    return cols


# -- task progress ----------------------------------------------------------------------------
def task_columns(model: ClusterModel, job_id: str | None = None) -> dict[str, list]:
    """One row per subtask: state, placement, records in/out, rates, backpressure, watermark."""
    cols: dict[str, list] = {k: [] for k in (
        "label", "job_id", "job_name", "task", "subtask", "state", "attempt", "tm_id", "slot", "records_in",
        "records_out", "in_rate", "out_rate", "backpressure", "watermark", "color", "error")}
    order = {}
    for jid, job in model.jobs.items():
        for pos, vid in enumerate(job.vertex_order):
            order[(jid, vid)] = pos
    jobs = [job_id] if job_id else [j for j in model.jobs if not model.jobs[j].terminal] or list(model.jobs)[-1:]
    subs = [s for s in model.subtasks.values() if s.job_id in jobs]
    subs.sort(key=lambda s: (jobs.index(s.job_id), order.get((s.job_id, s.vertex_id), 0), s.subtask_index))
    for sub in subs:
        m = sub.metrics
        job = model.jobs.get(sub.job_id)
        prefix = "" if job_id else f"{(job.name if job else sub.job_id)[:16]}: "
        cols["label"].append(f"{prefix}{short_task(sub.task_name, 40)} [{sub.subtask_index + 1}]")
        cols["job_id"].append(sub.job_id)
        cols["job_name"].append(job.name if job else "")
        cols["task"].append(sub.task_name)
        cols["subtask"].append(sub.subtask_index)
        cols["state"].append(sub.state)
        cols["attempt"].append(sub.attempt_number)
        cols["tm_id"].append(sub.tm_id or "")
        cols["slot"].append(-1 if sub.slot_index is None else sub.slot_index)
        cols["records_in"].append(int(m.get("records_in") or 0))
        cols["records_out"].append(int(m.get("records_out") or 0))
        cols["in_rate"].append(round(float(m.get("records_in_per_s") or 0.0), 1))
        cols["out_rate"].append(round(float(m.get("records_out_per_s") or 0.0), 1))
        cols["backpressure"].append(round(float(m.get("backpressure_ratio") or 0.0), 3))
        cols["watermark"].append(format_watermark(m.get("watermark")))
        cols["color"].append(STATE_COLORS.get(sub.state, "#c7c7c7"))
        cols["error"].append(last_line(sub.error))
    return cols


def format_watermark(value) -> str:
    if value is None:
        return "-"
    try:
        return time.strftime("%H:%M:%S", time.gmtime(float(value))) + f".{int(float(value) * 1000) % 1000:03d}"
    except (TypeError, ValueError, OverflowError, OSError):
        return str(value)


def rate_columns(model: ClusterModel, job_id: str | None = None) -> dict[str, list]:
    """Throughput over time: input rate of the first task and of the last (records/s)."""
    if job_id:
        job = model.jobs.get(job_id)
        points = list(job.rates) if job else []
    else:  # cluster-wide: sum the jobs' points per time bucket
        merged: dict[float, list[float]] = {}
        for job in model.jobs.values():
            for ts, src, snk in job.rates:
                acc = merged.setdefault(ts, [0.0, 0.0])
                acc[0] += src
                acc[1] += snk
        points = [(ts, v[0], v[1]) for ts, v in sorted(merged.items())][-600:]
    return {"time": [p[0] * 1000.0 for p in points], "source_rate": [p[1] for p in points],
            "sink_rate": [p[2] for p in points]}


# -- the job graph ----------------------------------------------------------------------------
def graph_of(model: ClusterModel, job_id: str, now: float | None = None) -> JobGraphView | None:
    """The job's graph with its subtasks' latest figures; None until the job's plan is known."""
    job = model.jobs.get(job_id)
    if job is None or not job.plan:
        return None
    subtasks: dict[str, list[SubtaskFigures]] = {}
    for (jid, vid, index), sub in model.subtasks.items():
        if jid == job_id:
            subtasks.setdefault(vid, []).append(SubtaskFigures(index, sub.state, sub.attempt_number, sub.tm_id,
                                                               sub.slot_index, sub.metrics))
    return job_graph(job_id, job.plan, subtasks, model.clock() if now is None else now)


# -- checkpoints ------------------------------------------------------------------------------
def checkpoint_columns(model: ClusterModel, job_id: str | None = None, now: float | None = None) -> dict[str, list]:
    """One row per checkpoint or savepoint, with its span on the timeline; the restored one marked."""
    now = time.time() if now is None else now
    cols: dict[str, list] = {k: [] for k in (
        "job_id", "job_name", "id", "kind", "status", "start", "end", "duration", "size", "path", "reason",
        "restored", "restored_time", "color", "y")}
    jobs = [model.jobs[job_id]] if job_id in model.jobs else ([] if job_id else list(model.jobs.values()))
    for job in jobs:
        for cp in sorted(job.checkpoints.values(), key=lambda c: c.id):
            end = cp.ended_ts or now
            cols["job_id"].append(job.id)
            cols["job_name"].append(job.name)
            cols["id"].append(cp.id)
            cols["kind"].append("savepoint" if cp.is_savepoint else "checkpoint")
            cols["status"].append(cp.status)
            cols["start"].append(cp.triggered_ts * 1000.0)
            cols["end"].append(max(end, cp.triggered_ts + 0.05) * 1000.0)
            cols["duration"].append(round(cp.duration_s, 3) if cp.duration_s is not None else None)
            cols["size"].append(cp.size if cp.size is not None else None)
            cols["path"].append(cp.path)
            cols["reason"].append(cp.reason)
            cols["restored"].append(cp.restored_ts is not None)
            cols["restored_time"].append(cp.restored_ts * 1000.0 if cp.restored_ts else NAN)  # NaN: not drawn
            cols["color"].append(STATE_COLORS.get(cp.status, "#c7c7c7"))
            cols["y"].append(f"{job.name[:12]} #{cp.id}" if job_id is None else f"#{cp.id}")
    return cols


# -- failover ---------------------------------------------------------------------------------
def jobmanager_columns(model: ClusterModel) -> dict[str, list]:
    leader_url = model.leader.get("url")
    cols: dict[str, list] = {"url": [], "role": [], "pid": []}
    jms = model.jobmanagers or ([{"url": leader_url, "role": "leader"}] if leader_url else [])
    for jm in jms:
        cols["url"].append(jm.get("url", ""))
        cols["role"].append("leader" if jm.get("url") == leader_url else jm.get("role", "standby"))
        cols["pid"].append(jm.get("pid"))
    return cols


def job_columns(model: ClusterModel, job_id: str | None = None) -> dict[str, list]:
    """Jobs with their state, attempt, restarts and the latest cause."""
    cols: dict[str, list] = {k: [] for k in ("job_id", "name", "state", "attempt", "restarts", "last_cause", "color")}
    for job in model.jobs.values():
        if job_id and job.id != job_id:
            continue
        cause = job.restart_log[-1].cause if job.restart_log else (job.cause or "")
        cols["job_id"].append(job.id)
        cols["name"].append(job.name)
        cols["state"].append(job.state)
        cols["attempt"].append(job.attempt)
        cols["restarts"].append(job.restarts)
        cols["last_cause"].append(last_line(cause))
        cols["color"].append(STATE_COLORS.get(job.state, "#c7c7c7"))
    return cols


def restart_columns(model: ClusterModel, job_id: str | None = None) -> dict[str, list]:
    cols: dict[str, list] = {k: [] for k in ("time", "job_id", "job_name", "attempt", "cause", "delay")}
    rows = []
    for job in model.jobs.values():
        if job_id and job.id != job_id:
            continue
        rows += [(r, job) for r in job.restart_log]
    for r, job in sorted(rows, key=lambda x: x[0].ts):
        cols["time"].append(r.ts * 1000.0)
        cols["job_id"].append(job.id)
        cols["job_name"].append(job.name)
        cols["attempt"].append(r.attempt)
        cols["cause"].append(last_line(r.cause))
        cols["delay"].append(r.delay_s)
    return cols


def provider_columns(model: ClusterModel) -> dict[str, list]:
    """The resource provider's recent decisions, newest first (requested, started, idle, stopped, ...)."""
    cols: dict[str, list] = {k: [] for k in ("time", "decision", "tm_id", "reason")}
    for d in reversed(model.provider_decisions):
        cols["time"].append(float(d.get("ts") or 0) * 1000.0)
        cols["decision"].append(d.get("decision") or "")
        cols["tm_id"].append(d.get("tm_id") or "")
        cols["reason"].append(d.get("reason") or "")
    return cols


def status_text(model: ClusterModel) -> str:
    """One line on the connection and the cluster, for the views' header."""
    conn = model.connection
    if conn["state"] != "connected":
        return conn["message"]
    live = [t for t in model.taskmanagers.values() if t.state == "REGISTERED"]
    lost = sum(1 for t in model.taskmanagers.values() if t.state == "LOST")
    starting = sum(1 for t in model.taskmanagers.values() if t.state == "STARTING")
    total = sum(t.slots for t in live)
    used = sum(1 for (tm, _), s in model.slots.items() if s.job_id and model.taskmanagers.get(tm) in live)
    running = sum(1 for j in model.jobs.values() if not j.terminal)
    notes = ", ".join(n for n in (f"{starting} starting" if starting else "", f"{lost} lost" if lost else "") if n)
    parts = [conn.get("label") or f"JobManager {conn['url']}", f"{len(live)} TaskManagers" + (f" ({notes})" if notes else ""),
             f"{total - used}/{total} slots free", f"{running} jobs running"]
    return " \u00b7 ".join(parts)


def all_columns(model: ClusterModel, job_id: str | None = None) -> dict[str, dict[str, list]]:
    """Every view's columns at one instant (under the model's lock)."""
    with model.lock:
        return {
            "slots": slot_columns(model, job_id),
            "tasks": task_columns(model, job_id),
            "rates": rate_columns(model, job_id),
            "checkpoints": checkpoint_columns(model, job_id, model.clock()),
            "jobmanagers": jobmanager_columns(model),
            "jobs": job_columns(model, job_id),
            "restarts": restart_columns(model, job_id),
            "provider": provider_columns(model),
            "status": status_text(model),
            "version": model.version,
        }
