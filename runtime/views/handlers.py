"""How each event of the stream changes a ClusterModel (runtime.views.model): one small function per
event class of runtime.events, called with the model's lock held. The handlers see the model as the
:class:`ClusterModel` protocol below (its tables and the few helpers that keep them consistent)."""
from __future__ import annotations

import collections
import time
from collections.abc import Callable
from typing import Any, Protocol

from runtime import events
from runtime.users import HIDDEN_JOB
from runtime.views.records import CheckpointInfo, JobInfo, RestartInfo, SlotInfo, SubtaskInfo, TaskManagerInfo


class ClusterModel(Protocol):
    """What the handlers change (runtime.views.model.ClusterModel is the one implementation)."""

    taskmanagers: dict[str, TaskManagerInfo]
    slots: dict[tuple[str, int], SlotInfo]
    jobmanagers: list[dict]
    provider_decisions: collections.deque[dict]

    def job_info(self, job_id: str, name: str | None = None) -> JobInfo:
        """The job's record, made on first mention."""
        ...

    def subtask_info(self, job_id: str, vertex_id: str, task_name: str, index: int) -> SubtaskInfo:
        """The subtask's record, made on first mention."""
        ...

    def apply_leadership(self, leader: dict, jobmanagers: list[dict]) -> None: ...

    def record_rates(self, job: JobInfo, ts: float) -> None: ...


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


def _tm_deregistered(m: ClusterModel, e: dict) -> None:
    """Left on purpose: gone from the cluster, not shown as lost."""
    _forget_taskmanager(m, e["tm_id"])


def _forget_taskmanager(m: ClusterModel, tm_id: str) -> None:
    m.taskmanagers.pop(tm_id, None)
    for key in [k for k in m.slots if k[0] == tm_id]:
        del m.slots[key]


def starting(m: ClusterModel, tm_id: str, slots: int, reason: str) -> None:
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
        starting(m, tm_id, int(e.get("slots") or 0), e.get("reason") or "")
    elif decision in ("stopped", "given-up"):
        _forget_taskmanager(m, tm_id)


def _tm_status(m: ClusterModel, e: dict) -> None:
    info = m.taskmanagers.get(e["tm_id"])
    if info is not None:
        info.status = {k: v for k, v in (e.get("status") or {}).items() if k not in ("type", "tm_id")}


def _slot_allocated(m: ClusterModel, e: dict) -> None:
    slot = m.slots.setdefault((e["tm_id"], e["slot_index"]), SlotInfo(e["tm_id"], e["slot_index"]))
    slot.job_id, slot.job_name, slot.allocation_id, slot.tasks = e["job_id"], e.get("job_name", ""), e.get("allocation_id"), []
    if e["job_id"] != HIDDEN_JOB:  # another user's slot: taken, and no job of this reader's
        m.job_info(e["job_id"], e.get("job_name"))


def _slot_freed(m: ClusterModel, e: dict) -> None:
    slot = m.slots.get((e["tm_id"], e["slot_index"]))
    if slot is not None and (slot.allocation_id in (None, e.get("allocation_id")) or slot.job_id == e.get("job_id")):
        slot.job_id, slot.job_name, slot.allocation_id, slot.tasks = None, "", None, []


def _job_submitted(m: ClusterModel, e: dict) -> None:
    job = m.job_info(e["job_id"], e.get("name"))
    job.start_ts = job.start_ts or e.get("ts")


def _job_status(m: ClusterModel, e: dict) -> None:
    job = m.job_info(e["job_id"], e.get("name"))
    job.state, job.attempt = e["status"], int(e.get("attempt") or 0)
    if e.get("cause"):
        job.cause = e["cause"]
    if job.start_ts is None:
        job.start_ts = e.get("ts")
    if job.terminal:
        job.end_ts = e.get("ts")


def _task_status(m: ClusterModel, e: dict) -> None:
    sub = m.subtask_info(e["job_id"], e["vertex_id"], e.get("task_name", ""), int(e["subtask_index"]))
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
    sub = m.subtask_info(e["job_id"], e["vertex_id"], e.get("task_name", ""), int(e["subtask_index"]))
    metrics = {k: v for k, v in (e.get("metrics") or {}).items() if k not in ("type", "job_id", "attempt_id")}
    sub.metrics = metrics
    m.record_rates(m.job_info(e["job_id"]), float(e.get("ts") or time.time()))


def _job_restarting(m: ClusterModel, e: dict) -> None:
    job = m.job_info(e["job_id"])
    job.restarts += 1
    job.restart_log.append(RestartInfo(float(e.get("ts") or time.time()), int(e.get("attempt") or 0),
                                       e.get("cause") or "", float(e.get("delay_s") or 0.0)))


def _checkpoint(m: ClusterModel, e: dict) -> CheckpointInfo:
    job = m.job_info(e["job_id"])
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
    m.apply_leadership({"url": e.get("leader_url"), "session-id": e.get("leader_session_id")},
                        e.get("jobmanagers") or m.jobmanagers)


# Keyed by the event classes of runtime.events, the one definition the panel's TypeScript types are
# generated from too (scripts/gen_event_types.py): both sides name every event the same way.
HANDLERS: dict[str, Callable[[ClusterModel, dict], Any]] = {cls.__name__: handler for cls, handler in (
    (events.TaskManagerRegistered, _tm_registered),
    (events.TaskManagerLost, _tm_lost),
    (events.TaskManagerDeregistered, _tm_deregistered),
    (events.TaskManagerStatusReported, _tm_status),
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
