"""What one caller may see and do: the REST layer's one check of users (runtime.users).

Every handler reaches the Dispatcher through :class:`ScopedGateway`, made for the request's caller
(the front door, runtime.jobmanager.rest.gate, found who it is). A user sees, cancels, savepoints and
pushes to their own jobs only: another user's job is ``UnknownJob`` (404), exactly as a job that does
not exist; lists, counts and the event stream leave others' jobs out, and TaskManagers show others'
slots as taken, without their job's id or name. A submission is stamped with the caller's name, so no
one submits as someone else. An admin (the cluster token's holder, or a user added with ``--admin``)
sees and controls everything; routes that act on the whole cluster are theirs alone (``admin_only``
on a handler, checked by :meth:`ScopedGateway.require_admin`).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from runtime.errors import ClusterError
from runtime.ids import JobId, TriggerId
from runtime.jobgraph import JobGraph
from runtime.jobmanager.gateways import DispatcherGateway, EventSubscription, UnknownJob
from runtime.snapshots import (CheckpointConfigSnapshot, CheckpointDetailsSnapshot, CheckpointStatsSnapshot, ClusterOverview,
                                          FailureRecord, JobSnapshot, JobSummary, OperationStatus, PushAccepted,
                                          PushSourceSnapshot, ResultsPage, SlotSnapshot, TaskManagerSnapshot)
from runtime.states import JobStatus
from runtime.users import HIDDEN_JOB, HIDDEN_JOB_NAME, Caller


CALLER_ATTRIBUTE = "flinkbench_caller"


def attach(request: Any, caller: Caller) -> None:
    """Let the request carry the caller the front door found (tornado's request has no field for it)."""
    setattr(request, CALLER_ATTRIBUTE, caller)


def caller_of(request: Any) -> Caller:
    """The caller the front door found for ``request``; an open path's (no token) is nobody, and no admin."""
    return getattr(request, CALLER_ATTRIBUTE, None) or Caller("", False)


class Forbidden(ClusterError):
    """The caller may not do this (an admin's operation); answered 403."""


class ScopedGateway:
    """The Dispatcher's gateway as ``caller`` may use it (a DispatcherGateway)."""

    def __init__(self, inner: DispatcherGateway, caller: Caller):
        self.inner, self.caller = inner, caller

    # -- the checks ----------------------------------------------------------------------------
    def require_admin(self, what: str) -> None:
        if not self.caller.admin:
            raise Forbidden(f"{what} is for admins: user '{self.caller.name}' may not do it "
                            "(the cluster token, or a user added with --admin, may)")

    def owns(self, job_id: str) -> bool:
        """Whether the caller may see the job (an admin any); False also for a job that does not exist."""
        try:
            return self.caller.admin or self.inner.job_owner(job_id) == self.caller.name
        except UnknownJob:
            return False

    def _own(self, job_id: str) -> str:
        if not self.owns(job_id):
            raise UnknownJob(job_id)
        return job_id

    def _slot(self, slot: SlotSnapshot) -> SlotSnapshot:
        if slot.job_id is None or self.owns(slot.job_id):
            return slot
        return dataclasses.replace(slot, job_id=JobId(HIDDEN_JOB), job_name=HIDDEN_JOB_NAME, tasks=())

    def _task_manager(self, tm: TaskManagerSnapshot) -> TaskManagerSnapshot:
        return tm if self.caller.admin else dataclasses.replace(tm, slots=tuple(self._slot(s) for s in tm.slots))

    def event(self, event: dict) -> dict | None:
        """An event as the caller may see it: others' jobs' events left out (None), their slots shown taken."""
        job_id = event.get("job_id")
        if event.get("type") == "TaskManagerStatusReported" and not self.caller.admin:
            return {**event, "status": {**event["status"], "log_lines": []}}  # its log names everyone's jobs
        if self.caller.admin or job_id is None or self.owns(job_id):
            return event
        if event.get("type") in ("SlotAllocated", "SlotFreed"):
            return {**event, "job_id": HIDDEN_JOB, "job_name": HIDDEN_JOB_NAME}
        return None

    # -- the cluster -----------------------------------------------------------------------------
    def cluster_overview(self) -> ClusterOverview:
        overview = self.inner.cluster_overview()
        if self.caller.admin:
            return overview
        states = [j.state for j in self.list_jobs()]
        return dataclasses.replace(
            overview, jobs_running=sum(1 for s in states if not s.is_globally_terminal),
            jobs_finished=states.count(JobStatus.FINISHED), jobs_cancelled=states.count(JobStatus.CANCELED),
            jobs_failed=states.count(JobStatus.FAILED))

    def request_task_managers(self) -> list[TaskManagerSnapshot]:
        return [self._task_manager(tm) for tm in self.inner.request_task_managers()]

    def request_task_manager(self, tm_id: str) -> TaskManagerSnapshot:
        return self._task_manager(self.inner.request_task_manager(tm_id))

    def subscribe_events(self) -> EventSubscription:
        sub = self.inner.subscribe_events()
        return sub if self.caller.admin else ScopedSubscription(sub, self)

    def dispose_savepoint(self, path: str) -> TriggerId:
        self.require_admin("disposing of a savepoint by its path")
        return self.inner.dispose_savepoint(path)

    def disposal_status(self, trigger_id: str) -> OperationStatus | None:
        self.require_admin("a savepoint disposal")
        return self.inner.disposal_status(trigger_id)

    # -- jobs ----------------------------------------------------------------------------------
    def submit(self, payload: dict) -> JobId:
        return self.inner.submit({**payload, "user": self.caller.name})

    def list_jobs(self) -> list[JobSummary]:
        jobs = self.inner.list_jobs()
        return jobs if self.caller.admin else [j for j in jobs if j.user == self.caller.name]

    def job_owner(self, job_id: str) -> str:
        return self.inner.job_owner(self._own(job_id))

    def request_job(self, job_id: str) -> JobSnapshot:
        return self.inner.request_job(self._own(job_id))

    def job_status(self, job_id: str) -> JobStatus:
        return self.inner.job_status(self._own(job_id))

    def job_exceptions(self, job_id: str) -> list[FailureRecord]:
        return self.inner.job_exceptions(self._own(job_id))

    def checkpoint_stats(self, job_id: str) -> CheckpointStatsSnapshot:
        return self.inner.checkpoint_stats(self._own(job_id))

    def checkpoint_config(self, job_id: str) -> CheckpointConfigSnapshot:
        return self.inner.checkpoint_config(self._own(job_id))

    def checkpoint_details(self, job_id: str, checkpoint_id: int) -> CheckpointDetailsSnapshot:
        return self.inner.checkpoint_details(self._own(job_id), checkpoint_id)

    def job_graph(self, job_id: str) -> JobGraph | None:
        return self.inner.job_graph(self._own(job_id))

    def cancel_job(self, job_id: str) -> None:
        self.inner.cancel_job(self._own(job_id))

    def trigger_savepoint(self, job_id: str, target: str | None, cancel_job: bool) -> TriggerId:
        return self.inner.trigger_savepoint(self._own(job_id), target, cancel_job)

    def stop_with_savepoint(self, job_id: str, target: str | None, drain: bool) -> TriggerId:
        return self.inner.stop_with_savepoint(self._own(job_id), target, drain)

    def savepoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None:
        return self.inner.savepoint_status(self._own(job_id), trigger_id)

    def trigger_checkpoint(self, job_id: str, full: bool = False) -> TriggerId:
        return self.inner.trigger_checkpoint(self._own(job_id), full)

    def checkpoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None:
        return self.inner.checkpoint_status(self._own(job_id), trigger_id)

    def job_results(self, job_id: str, offset: int, limit: int) -> ResultsPage:
        return self.inner.job_results(self._own(job_id), offset, limit)

    def push_sources(self, job_id: str) -> list[PushSourceSnapshot]:
        return self.inner.push_sources(self._own(job_id))

    def push_rows(self, job_id: str, source: str, rows: Any, push_id: str | None = None) -> PushAccepted:
        return self.inner.push_rows(self._own(job_id), source, rows, push_id)

    def close_push_source(self, job_id: str, source: str) -> PushSourceSnapshot:
        return self.inner.close_push_source(self._own(job_id), source)


class ScopedSubscription:
    """The event stream as a user may read it (an EventSubscription)."""

    def __init__(self, inner: EventSubscription, scope: ScopedGateway):
        self.inner, self.scope = inner, scope
        self.seq = inner.seq

    async def next(self) -> dict | None:
        while True:
            event = await self.inner.next()
            if event is None:
                return None
            visible = self.scope.event(event)
            if visible is not None:
                return visible

    def close(self) -> None:
        self.inner.close()
