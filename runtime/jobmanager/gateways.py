"""Gateways: the small typed interfaces through which one role of the JobManager calls another.

A role holds another only through its gateway, never through its fields, so each can be replaced by a
fake in a unit test and read on its own. Names follow Flink's (RestfulGateway, DispatcherGateway, ...).

- RestfulGateway / DispatcherGateway: what the REST layer (runtime.jobmanager.rest) may ask the
  Dispatcher. Everything it returns is a typed snapshot (runtime.jobmanager.snapshots); the REST layer
  turns those into Flink's JSON messages.
- LeaderRetriever: what the REST endpoint needs to know about leadership (serve, or refuse with 503
  naming the leader), like Flink's leader retrieval in front of its handlers.
"""
from __future__ import annotations

from typing import Any, Protocol

from runtime.ids import JobId, TriggerId
from runtime.jobmanager.snapshots import (CheckpointConfigSnapshot, CheckpointStatsSnapshot, ClusterOverview,
                                          FailureRecord, JobSnapshot, JobSummary, OperationStatus, PushAccepted,
                                          PushSourceSnapshot, ResultsPage, TaskManagerSnapshot)
from runtime.states import JobStatus


class UnknownJob(KeyError):
    """No job with this id on this Dispatcher."""

    def __init__(self, job_id: str):
        super().__init__(job_id)
        self.job_id = job_id

    def __str__(self) -> str:
        return f"Job {self.job_id} not found"


class UnknownTaskManager(KeyError):
    def __init__(self, tm_id: str):
        super().__init__(tm_id)
        self.tm_id = tm_id

    def __str__(self) -> str:
        return f"TaskManager {self.tm_id} not found"


class OperationRefused(ValueError):
    """An operation the job's state does not allow now (e.g. a savepoint of a job that is not RUNNING)."""


class EventSubscription(Protocol):
    async def next(self) -> dict | None: ...

    def close(self) -> None: ...


class RestfulGateway(Protocol):
    """Read and control jobs and the cluster; every method answers at once (long operations return a
    trigger id to poll). Job ids that do not exist raise UnknownJob."""

    def cluster_overview(self) -> ClusterOverview: ...

    def list_jobs(self) -> list[JobSummary]: ...

    def request_job(self, job_id: str) -> JobSnapshot: ...

    def job_status(self, job_id: str) -> JobStatus: ...

    def job_exceptions(self, job_id: str) -> list[FailureRecord]: ...

    def checkpoint_stats(self, job_id: str) -> CheckpointStatsSnapshot: ...

    def checkpoint_config(self, job_id: str) -> CheckpointConfigSnapshot: ...

    def task_managers(self) -> list[TaskManagerSnapshot]: ...

    def task_manager(self, tm_id: str) -> TaskManagerSnapshot: ...

    def cancel_job(self, job_id: str) -> None: ...

    def trigger_savepoint(self, job_id: str, target: str | None, cancel_job: bool) -> TriggerId: ...

    def stop_with_savepoint(self, job_id: str, target: str | None, drain: bool) -> TriggerId: ...

    def savepoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None: ...

    def trigger_checkpoint(self, job_id: str) -> TriggerId: ...

    def checkpoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None: ...

    def dispose_savepoint(self, path: str) -> TriggerId: ...

    def disposal_status(self, trigger_id: str) -> OperationStatus | None: ...

    def job_results(self, job_id: str, offset: int, limit: int) -> ResultsPage: ...

    def push_sources(self, job_id: str) -> list[PushSourceSnapshot]: ...

    def push_rows(self, job_id: str, source: str, rows: Any) -> PushAccepted: ...

    def close_push_source(self, job_id: str, source: str) -> PushSourceSnapshot: ...

    def subscribe_events(self) -> EventSubscription: ...


class DispatcherGateway(RestfulGateway, Protocol):
    """The RestfulGateway plus job submission."""

    def submit(self, payload: dict) -> JobId: ...


class LeaderRetriever(Protocol):
    """Leadership as the REST endpoint needs it: whether this JobManager leads, and who does."""

    @property
    def is_leader(self) -> bool: ...

    def leader_address(self) -> str | None: ...

    def not_leader_message(self) -> str: ...

    def leadership_view(self) -> dict: ...


