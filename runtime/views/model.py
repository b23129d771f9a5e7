"""ClusterModel: the cluster as the event stream describes it, kept up to date one event at a time.

The JobManager's ``/events`` stream starts with a ``ClusterSnapshot`` and then sends every event
(runtime.events) as a tagged JSON object. :meth:`ClusterModel.reset` takes the snapshot,
:meth:`ClusterModel.apply` each later event; events the model does not know are ignored, so an
older model keeps working against a newer JobManager. REST answers (``GET /jobs/<id>``, Flink's
``/jobs/<id>/checkpoints``) can seed what a snapshot leaves out.

Writers and readers may be on different threads (a WebSocket reader, a view updater): every read
and write holds :attr:`ClusterModel.lock`. :attr:`version` grows with every change, so a view can
tell cheaply whether it has anything to redraw.

Taps see every message the model takes (the snapshot and each event, as it came), which is how a job's
event stream is recorded (runtime.views.recording); :attr:`clock` is what "now" is for the views, the
wall clock unless a replay (runtime.views.replay) runs the model on the recording's time.
"""
from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable

from runtime.views.graph import PlanVertex, plan_from_json
from runtime.views.handlers import HANDLERS, starting
from runtime.views.records import (TERMINAL_JOB_STATES, TERMINAL_TASK_STATES, CheckpointInfo, JobInfo, SlotInfo,
                                   SubtaskInfo, TaskManagerInfo)

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
        self._taps: list[Callable[[dict], None]] = []
        self.clock: Callable[[], float] = time.time

    # -- change notification ------------------------------------------------------------------
    def add_listener(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` (on the writer's thread, outside the lock) after every change."""
        self._listeners.append(fn)

    def add_tap(self, fn: Callable[[dict], None]) -> None:
        """Call ``fn(message)`` (on the writer's thread, outside the lock) with each snapshot and event applied."""
        self._taps.append(fn)

    def remove_tap(self, fn: Callable[[dict], None]) -> None:
        if fn in self._taps:
            self._taps.remove(fn)

    def _tap(self, message: dict) -> None:
        for fn in list(self._taps):
            try:
                fn(message)
            except Exception:  # a broken recorder must not stop the feed
                log.exception("model tap failed")

    def _changed(self) -> None:
        self.version += 1

    def _notify(self) -> None:
        for fn in list(self._listeners):
            try:
                fn()
            except Exception:  # a broken view must not stop the feed
                log.exception("view listener failed")

    def set_connection(self, state: str, url: str, message: str, label: str = "") -> None:
        """``label`` names the source in the views' status line instead of the JobManager's URL (a replay)."""
        with self.lock:
            self.connection = {"state": state, "url": url, "message": message, "label": label}
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
            self.apply_leadership(snapshot.get("leader") or {}, snapshot.get("jobmanagers") or [])
            for tm in snapshot.get("taskmanagers", []):
                self._add_taskmanager_from_rest(tm)
            provider = snapshot.get("resource-provider") or {}
            self.provider_decisions.clear()
            self.provider_decisions.extend(provider.get("decisions") or [])
            for tm_id in provider.get("starting") or []:
                starting(self, tm_id, int(provider.get("slots-per-taskmanager") or 0), "")
            for entry in snapshot.get("jobs", []):
                job = self.job_info(entry.get("jid") or entry.get("id"))
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
        self._tap(snapshot)

    def apply(self, event: dict) -> bool:
        """Apply one event; returns False for events already covered by the snapshot or unknown types."""
        handler = HANDLERS.get(event.get("type", ""))
        seq = event.get("seq")
        with self.lock:
            if seq is not None and seq <= self.last_seq:
                return False
            if seq is not None:
                self.last_seq = seq
            if handler is None:
                known = False
            else:
                handler(self, event)
                self._changed()
                known = True
        if known:
            self._notify()
        self._tap(event)  # a type this model does not know may be one a newer model does
        return known

    def apply_safely(self, event: dict) -> None:
        """``apply`` for in-process listeners, where an exception would reach the publisher."""
        try:
            self.apply(event)
        except Exception:
            log.exception("view model could not apply event %s", event.get("type"))

    def seed_job(self, details: dict) -> None:
        """Fill a job's tasks from ``GET /jobs/<id>`` (for jobs that started before this model did)."""
        with self.lock:
            job = self.job_info(details["jid"])
            self._apply_job_overview(job, details)
            if details.get("plan"):
                job.plan = plan_from_json(details["plan"])
            for vertex in details.get("vertices", []):
                if vertex["id"] not in job.vertex_order:
                    job.vertex_order.append(vertex["id"])
                for sub in vertex.get("subtasks", []):
                    info = self.subtask_info(job.id, vertex["id"], vertex["name"], sub["subtask"])
                    info.state = sub.get("status", info.state)
                    info.attempt_number = sub.get("attempt", info.attempt_number)
                    info.tm_id, info.slot_index = sub.get("taskmanager-id"), sub.get("slot")
                    info.error = sub.get("failure-cause")
                    info.metrics = dict(sub.get("metrics") or {})
            self._changed()
        self._notify()

    def set_leadership(self, leader: dict, jobmanagers: list[dict]) -> None:
        """Leadership as ``GET /jobmanagers`` reads now (a lone JobManager sends no LeaderChanged)."""
        with self.lock:
            if self.leader == dict(leader) and self.jobmanagers == [dict(jm) for jm in jobmanagers]:
                return
            self.apply_leadership(leader, jobmanagers)
            self._changed()
        self._notify()

    def set_plan(self, job_id: str, plan: list[PlanVertex]) -> None:
        """The job's tasks and how they exchange data, from wherever the front can read them."""
        with self.lock:
            job = self.job_info(job_id)
            job.plan = list(plan)
            for vertex in job.plan:
                if vertex.id not in job.vertex_order:
                    job.vertex_order.append(vertex.id)
            self._changed()
        self._notify()

    def seed_checkpoints(self, job_id: str, stats: dict) -> None:
        """Fill a job's checkpoint history from Flink's ``GET /jobs/<id>/checkpoints`` shape."""
        with self.lock:
            job = self.job_info(job_id)
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

    # -- helpers, the event handlers' too (called with the lock held) ------------------------
    def job_info(self, job_id: str, name: str | None = None) -> JobInfo:
        job = self.jobs.get(job_id)
        if job is None:
            job = self.jobs[job_id] = JobInfo(job_id, name or "")
        elif name:
            job.name = name
        return job

    def subtask_info(self, job_id: str, vertex_id: str, task_name: str, index: int) -> SubtaskInfo:
        key = (job_id, vertex_id, index)
        info = self.subtasks.get(key)
        if info is None:
            info = self.subtasks[key] = SubtaskInfo(job_id, vertex_id, task_name, index)
            job = self.job_info(job_id)
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

    def apply_leadership(self, leader: dict, jobmanagers: list[dict]) -> None:
        self.leader = dict(leader)
        self.jobmanagers = [dict(jm) for jm in jobmanagers]

    def record_rates(self, job: JobInfo, ts: float) -> None:
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
