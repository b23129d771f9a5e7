"""ClusterModel: the cluster as the event stream describes it, kept up to date one event at a time.

The JobManager's ``/events`` stream starts with a ``ClusterSnapshot`` and then sends every event
(runtime.events) as a tagged JSON object. :meth:`ClusterModel.reset` takes the snapshot,
:meth:`ClusterModel.apply` each later event; events the model does not know are ignored, so an
older model keeps working against a newer JobManager. REST answers (``GET /jobs/<id>``, Flink's
``/jobs/<id>/checkpoints``) can seed what a snapshot leaves out.

Writers and readers may be on different threads (a WebSocket reader, a view updater): every read
and write holds :attr:`ClusterModel.lock`. :attr:`version` grows with every change, so a view can
tell cheaply whether it has anything to redraw.
"""
from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from runtime import events
from runtime.views.graph import PlanVertex, plan_from_json
from runtime.views.records import (TERMINAL_JOB_STATES, TERMINAL_TASK_STATES, CheckpointInfo, JobInfo, RestartInfo,
                                   SlotInfo, SubtaskInfo, TaskManagerInfo)

log = logging.getLogger(__name__)

__all__ = ["ClusterModel", "TERMINAL_JOB_STATES", "TERMINAL_TASK_STATES"]

PROVIDER_DECISIONS_KEPT = 30


class ClusterModel:
    """The cluster as the event stream tells it: TaskManagers, slots, jobs, subtasks, checkpoints."""
    def __init__(self):
        self.lock = threading.RLock()
        self.version = 0
        self.last_seq = 0
        self.connection = {"state": "disconnected", "url": "", "message": "not connected"}
        self.taskmanagers: dict[str, TaskManagerInfo] = {}
        self.slots: dict[tuple[str, int], SlotInfo] = {}
        self.jobs: dict[str, JobInfo] = {}
        self.subtasks: dict[tuple[str, str, int], SubtaskInfo] = {}
        self.leader: dict = {}
        self.jobmanagers: list[dict] = []
        self.overview: dict = {}
        self.provider_decisions: collections.deque[dict] = collections.deque(maxlen=PROVIDER_DECISIONS_KEPT)
        self._listeners: list[Callable[[], None]] = []

    # -- change notification ------------------------------------------------------------------
    def add_listener(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` (on the writer's thread, outside the lock) after every change."""
        self._listeners.append(fn)

    def _changed(self) -> None:
        self.version += 1

    def _notify(self) -> None:
        for fn in list(self._listeners):
            try:
                fn()
            except Exception:  # a broken view must not stop the feed
                log.exception("view listener failed")

    def set_connection(self, state: str, url: str, message: str) -> None:
        with self.lock:
            self.connection = {"state": state, "url": url, "message": message}
            self._changed()
        self._notify()

    # -- feeding ------------------------------------------------------------------------------
    def reset(self, snapshot: dict) -> None:
        """Replace everything with a ``ClusterSnapshot`` (the first message of each connection)."""
        with self.lock:
            self.taskmanagers.clear()
            self.slots.clear()
            known_jobs = self.jobs
            self.jobs = {}
            self.last_seq = int(snapshot.get("seq") or 0)
            self.overview = {k: v for k, v in snapshot.items() if k not in ("taskmanagers", "jobs", "type")}
            self._apply_leadership(snapshot.get("leader") or {}, snapshot.get("jobmanagers") or [])
            for tm in snapshot.get("taskmanagers", []):
                self._add_taskmanager_from_rest(tm)
            provider = snapshot.get("resource-provider") or {}
            self.provider_decisions.clear()
            self.provider_decisions.extend(provider.get("decisions") or [])
            for tm_id in provider.get("starting") or []:
                _starting(self, tm_id, int(provider.get("slots-per-taskmanager") or 0), "")
            for entry in snapshot.get("jobs", []):
                job = self._job(entry.get("jid") or entry.get("id"))
                old = known_jobs.get(job.id)
                if old is not None:  # keep history a reconnect cannot resend
                    job.restart_log, job.checkpoints, job.rates = old.restart_log, old.checkpoints, old.rates
                    job.vertex_order, job.plan = old.vertex_order, old.plan
                self._apply_job_overview(job, entry)
            live = set(self.jobs)
            for key in [k for k in self.subtasks if k[0] not in live]:
                del self.subtasks[key]
            self._changed()
        self._notify()

    def apply(self, event: dict) -> bool:
        """Apply one event; returns False for events already covered by the snapshot or unknown types."""
        handler = _HANDLERS.get(event.get("type", ""))
        seq = event.get("seq")
        with self.lock:
            if seq is not None and seq <= self.last_seq:
                return False
            if seq is not None:
                self.last_seq = seq
            if handler is None:
                return False
            handler(self, event)
            self._changed()
        self._notify()
        return True

    def apply_safely(self, event: dict) -> None:
        """``apply`` for in-process listeners, where an exception would reach the publisher."""
        try:
            self.apply(event)
        except Exception:
            log.exception("view model could not apply event %s", event.get("type"))

    def seed_job(self, details: dict) -> None:
        """Fill a job's tasks from ``GET /jobs/<id>`` (for jobs that started before this model did)."""
        with self.lock:
            job = self._job(details["jid"])
            self._apply_job_overview(job, details)
            if details.get("plan"):
                job.plan = plan_from_json(details["plan"])
            for vertex in details.get("vertices", []):
                if vertex["id"] not in job.vertex_order:
                    job.vertex_order.append(vertex["id"])
                for sub in vertex.get("subtasks", []):
                    info = self._subtask(job.id, vertex["id"], vertex["name"], sub["subtask"])
                    info.state = sub.get("status", info.state)
                    info.attempt_number = sub.get("attempt", info.attempt_number)
                    info.tm_id, info.slot_index = sub.get("taskmanager-id"), sub.get("slot")
                    info.error = sub.get("failure-cause")
                    info.metrics = dict(sub.get("metrics") or {})
            self._changed()
        self._notify()

    def set_plan(self, job_id: str, plan: list[PlanVertex]) -> None:
        """The job's tasks and how they exchange data, from wherever the front can read them."""
        with self.lock:
            job = self._job(job_id)
            job.plan = list(plan)
            for vertex in job.plan:
                if vertex.id not in job.vertex_order:
                    job.vertex_order.append(vertex.id)
            self._changed()
        self._notify()

    def seed_checkpoints(self, job_id: str, stats: dict) -> None:
        """Fill a job's checkpoint history from Flink's ``GET /jobs/<id>/checkpoints`` shape."""
        with self.lock:
            job = self._job(job_id)
            for entry in stats.get("history", []):
                cp = job.checkpoints.setdefault(int(entry["id"]), CheckpointInfo(int(entry["id"])))
                cp.is_savepoint = bool(entry.get("is_savepoint", cp.is_savepoint))
                cp.status = entry.get("status", cp.status)
                cp.triggered_ts = (entry.get("trigger_timestamp") or 0) / 1000.0
                if entry.get("latest_ack_timestamp"):
                    cp.ended_ts = entry["latest_ack_timestamp"] / 1000.0
                if entry.get("end_to_end_duration") is not None:
                    cp.duration_s = entry["end_to_end_duration"] / 1000.0
                cp.size = entry.get("state_size", entry.get("checkpointed_size", cp.size))
                cp.path = entry.get("external_path") or cp.path
                cp.reason = entry.get("failure_message") or cp.reason
            restored = (stats.get("latest") or {}).get("restored")
            if restored:
                cp = job.checkpoints.setdefault(int(restored["id"]), CheckpointInfo(int(restored["id"]), status="COMPLETED"))
                cp.restored_ts = (restored.get("restore_timestamp") or time.time() * 1000) / 1000.0
                cp.path = restored.get("external_path") or cp.path
            self._changed()
        self._notify()

    # -- internal helpers (called with the lock held) -----------------------------------------
    def _job(self, job_id: str, name: str | None = None) -> JobInfo:
        job = self.jobs.get(job_id)
        if job is None:
            job = self.jobs[job_id] = JobInfo(job_id, name or "")
        elif name:
            job.name = name
        return job

    def _subtask(self, job_id: str, vertex_id: str, task_name: str, index: int) -> SubtaskInfo:
        key = (job_id, vertex_id, index)
        info = self.subtasks.get(key)
        if info is None:
            info = self.subtasks[key] = SubtaskInfo(job_id, vertex_id, task_name, index)
            job = self._job(job_id)
            if vertex_id not in job.vertex_order:
                job.vertex_order.append(vertex_id)
        return info

    def _apply_job_overview(self, job: JobInfo, entry: dict) -> None:
        job.name = entry.get("name", job.name)
        job.state = entry.get("state", job.state)
        job.restarts = max(job.restarts, int(entry.get("restarts") or 0))
        job.parallelism = entry.get("parallelism", job.parallelism)
        if entry.get("start-time", -1) > 0:
            job.start_ts = entry["start-time"] / 1000.0
        if entry.get("end-time", -1) > 0:
            job.end_ts = entry["end-time"] / 1000.0

    def _add_taskmanager_from_rest(self, tm: dict) -> None:
        info = TaskManagerInfo(tm["id"], tm.get("host", ""), int(tm.get("slotsNumber") or 0),
                               tm.get("state", "REGISTERED"), tm.get("reason"), tm.get("pid"))
        self.taskmanagers[info.id] = info
        for slot in tm.get("slots", []):
            self.slots[(info.id, slot["index"])] = SlotInfo(
                info.id, slot["index"], slot.get("job-id"), slot.get("job-name") or "",
                slot.get("allocation-id"), list(slot.get("tasks") or []))

    def _apply_leadership(self, leader: dict, jobmanagers: list[dict]) -> None:
        self.leader = dict(leader)
        self.jobmanagers = [dict(jm) for jm in jobmanagers]

    def _record_rates(self, job: JobInfo, ts: float) -> None:
        """One point per half second: input rate of the first task, input rate of the last."""
        if not job.vertex_order:
            return
        first, last = job.vertex_order[0], job.vertex_order[-1]
        src = snk = 0.0
        for (jid, vid, _), sub in self.subtasks.items():
            if jid != job.id or sub.state in TERMINAL_TASK_STATES:
                continue
            rate = float(sub.metrics.get("records_in_per_s") or 0.0)
            if vid == first:
                src += rate
            if vid == last:
                snk += rate
        bucket = int(ts * 2) / 2.0
        if job.rates and job.rates[-1][0] == bucket:
            job.rates[-1] = (bucket, src, snk)
        else:
            job.rates.append((bucket, src, snk))


# -- event handlers ---------------------------------------------------------------------------
def _tm_registered(m: ClusterModel, e: dict) -> None:
    tm_id = e["tm_id"]
    m.taskmanagers[tm_id] = TaskManagerInfo(tm_id, e.get("host", ""), int(e.get("slots") or 0), "REGISTERED",
                                            None, e.get("pid"))
    for index in range(int(e.get("slots") or 0)):
        m.slots.setdefault((tm_id, index), SlotInfo(tm_id, index))


def _tm_lost(m: ClusterModel, e: dict) -> None:
    info = m.taskmanagers.setdefault(e["tm_id"], TaskManagerInfo(e["tm_id"]))
    info.state, info.reason = "LOST", e.get("reason")


def _starting(m: ClusterModel, tm_id: str, slots: int, reason: str) -> None:
    if tm_id in m.taskmanagers and m.taskmanagers[tm_id].state != "STARTING":
        return  # registered already (the events of one moment may come in any order)
    m.taskmanagers[tm_id] = TaskManagerInfo(tm_id, "", slots, "STARTING", reason)
    for index in range(slots):
        m.slots.setdefault((tm_id, index), SlotInfo(tm_id, index))


def _provider_decision(m: ClusterModel, e: dict) -> None:
    """The local resource provider's decisions: kept for the views, and TaskManagers starting or gone."""
    m.provider_decisions.append({k: e.get(k) for k in ("decision", "tm_id", "reason", "ts", "slots")})
    tm_id, decision = e.get("tm_id"), e.get("decision")
    if not tm_id:
        return
    if decision in ("requested", "started"):
        _starting(m, tm_id, int(e.get("slots") or 0), e.get("reason") or "")
    elif decision in ("stopped", "given-up"):
        m.taskmanagers.pop(tm_id, None)
        for key in [k for k in m.slots if k[0] == tm_id]:
            del m.slots[key]


def _slot_allocated(m: ClusterModel, e: dict) -> None:
    slot = m.slots.setdefault((e["tm_id"], e["slot_index"]), SlotInfo(e["tm_id"], e["slot_index"]))
    slot.job_id, slot.job_name, slot.allocation_id, slot.tasks = e["job_id"], e.get("job_name", ""), e.get("allocation_id"), []
    m._job(e["job_id"], e.get("job_name"))


def _slot_freed(m: ClusterModel, e: dict) -> None:
    slot = m.slots.get((e["tm_id"], e["slot_index"]))
    if slot is not None and (slot.allocation_id in (None, e.get("allocation_id")) or slot.job_id == e.get("job_id")):
        slot.job_id, slot.job_name, slot.allocation_id, slot.tasks = None, "", None, []


def _job_submitted(m: ClusterModel, e: dict) -> None:
    job = m._job(e["job_id"], e.get("name"))
    job.start_ts = job.start_ts or e.get("ts")


def _job_status(m: ClusterModel, e: dict) -> None:
    job = m._job(e["job_id"], e.get("name"))
    job.state, job.attempt = e["status"], int(e.get("attempt") or 0)
    if e.get("cause"):
        job.cause = e["cause"]
    if job.start_ts is None:
        job.start_ts = e.get("ts")
    if job.terminal:
        job.end_ts = e.get("ts")


def _task_status(m: ClusterModel, e: dict) -> None:
    sub = m._subtask(e["job_id"], e["vertex_id"], e.get("task_name", ""), int(e["subtask_index"]))
    if e.get("attempt_number", 0) < sub.attempt_number:
        return  # late news about an attempt that has been replaced
    if e.get("attempt_number", 0) > sub.attempt_number:
        sub.metrics = {}
    sub.state, sub.attempt_number = e["state"], int(e.get("attempt_number") or 0)
    sub.task_name = e.get("task_name") or sub.task_name
    if e.get("tm_id") is not None:
        sub.tm_id, sub.slot_index = e["tm_id"], e.get("slot_index")
    sub.error = e.get("error") or (None if e["state"] != "FAILED" else sub.error)


def _task_metrics(m: ClusterModel, e: dict) -> None:
    sub = m._subtask(e["job_id"], e["vertex_id"], e.get("task_name", ""), int(e["subtask_index"]))
    metrics = {k: v for k, v in (e.get("metrics") or {}).items() if k not in ("type", "job_id", "attempt_id")}
    sub.metrics = metrics
    m._record_rates(m._job(e["job_id"]), float(e.get("ts") or time.time()))


def _job_restarting(m: ClusterModel, e: dict) -> None:
    job = m._job(e["job_id"])
    job.restarts += 1
    job.restart_log.append(RestartInfo(float(e.get("ts") or time.time()), int(e.get("attempt") or 0),
                                       e.get("cause") or "", float(e.get("delay_s") or 0.0)))


def _checkpoint(m: ClusterModel, e: dict) -> CheckpointInfo:
    job = m._job(e["job_id"])
    cid = int(e["checkpoint_id"])
    cp = job.checkpoints.get(cid)
    if cp is None:
        cp = job.checkpoints[cid] = CheckpointInfo(cid, bool(e.get("is_savepoint")), triggered_ts=float(e.get("ts") or 0))
    return cp


def _checkpoint_triggered(m: ClusterModel, e: dict) -> None:
    cp = _checkpoint(m, e)
    cp.status, cp.triggered_ts = "IN_PROGRESS", float(e.get("ts") or time.time())


def _checkpoint_completed(m: ClusterModel, e: dict) -> None:
    cp = _checkpoint(m, e)
    cp.status, cp.ended_ts = "COMPLETED", float(e.get("ts") or time.time())
    cp.duration_s, cp.size, cp.path = e.get("duration_s"), e.get("state_size"), e.get("external_path") or ""
    if cp.triggered_ts == cp.ended_ts and cp.duration_s:
        cp.triggered_ts = cp.ended_ts - float(cp.duration_s)


def _checkpoint_failed(m: ClusterModel, e: dict) -> None:
    cp = _checkpoint(m, e)
    cp.status, cp.ended_ts, cp.reason = "FAILED", float(e.get("ts") or time.time()), e.get("reason") or ""
    cp.duration_s = cp.ended_ts - cp.triggered_ts if cp.triggered_ts else None


def _checkpoint_restored(m: ClusterModel, e: dict) -> None:
    cp = _checkpoint(m, e)
    if cp.status == "IN_PROGRESS":
        cp.status = "COMPLETED"
    cp.restored_ts, cp.path = float(e.get("ts") or time.time()), e.get("external_path") or cp.path


def _leader_changed(m: ClusterModel, e: dict) -> None:
    m._apply_leadership({"url": e.get("leader_url"), "session-id": e.get("leader_session_id")},
                        e.get("jobmanagers") or m.jobmanagers)


# Keyed by the event classes of runtime.events, the one definition the panel's TypeScript types are
# generated from too (scripts/gen_event_types.py): both sides name every event the same way.
_HANDLERS: dict[str, Callable[[ClusterModel, dict], Any]] = {cls.__name__: handler for cls, handler in (
    (events.TaskManagerRegistered, _tm_registered),
    (events.TaskManagerLost, _tm_lost),
    (events.ResourceProviderDecision, _provider_decision),
    (events.SlotAllocated, _slot_allocated),
    (events.SlotFreed, _slot_freed),
    (events.JobSubmitted, _job_submitted),
    (events.JobStatusChanged, _job_status),
    (events.TaskStatusChanged, _task_status),
    (events.TaskMetricsReported, _task_metrics),
    (events.JobRestarting, _job_restarting),
    (events.CheckpointTriggered, _checkpoint_triggered),
    (events.CheckpointCompleted, _checkpoint_completed),
    (events.CheckpointFailed, _checkpoint_failed),
    (events.CheckpointRestored, _checkpoint_restored),
    (events.LeaderChanged, _leader_changed),
)}
