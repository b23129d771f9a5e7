"""Jobs that ended, served from their archives (runtime.jobmanager.archive) through the gateway the REST
layer reads, so the history server and a restarted Dispatcher answer for them in the same shapes as for
live jobs.

:class:`ArchivedJobs` is a read-only RestfulGateway over archives: lists, details, exceptions, checkpoints
and their details; anything that would change a job is refused (409), and so are its collected rows and
push sources, which are not archived. The history server serves it as it is; the Dispatcher answers from
it for the jobs it does not run (Flink's Dispatcher does the same with its store of finished jobs).
"""
from __future__ import annotations

from typing import Any

from runtime.ids import JobId, TriggerId
from runtime.jobgraph import JobGraph
from runtime.jobmanager.archive import ArchivedJob
from runtime.jobmanager.gateways import OperationRefused, UnknownCheckpoint, UnknownJob, UnknownTaskManager
from runtime.snapshots import (CheckpointConfigSnapshot, CheckpointDetailsSnapshot, CheckpointStatsSnapshot,
                               ClusterOverview, FailureRecord, JobSnapshot, JobSummary, OperationStatus,
                               PushAccepted, PushSourceSnapshot, ResultsPage, TaskManagerSnapshot)
from runtime.states import JobStatus


class _Ended:
    """An event subscription with nothing to tell: archived jobs do not change."""
    seq = 0

    async def next(self) -> dict | None:
        return None

    def close(self) -> None:
        pass


class ArchivedJobs:
    """A read-only RestfulGateway over the archives it holds (replaced wholesale as archives are read)."""

    def __init__(self, jobs: dict[str, ArchivedJob] | None = None):
        self.jobs: dict[str, ArchivedJob] = dict(jobs or {})

    def __contains__(self, job_id: object) -> bool:
        return job_id in self.jobs

    def archived(self, job_id: str) -> ArchivedJob:
        found = self.jobs.get(job_id)
        if found is None:
            raise UnknownJob(job_id)
        return found

    def ended(self, job_id: str, what: str) -> OperationRefused:
        """The refusal of something an ended job cannot do (UnknownJob for a job not archived here)."""
        state = self.archived(job_id).job.summary.state.value
        return OperationRefused(f"job {job_id} ended {state}; {what} (it is known here from its archive only)")

    # -- reading ------------------------------------------------------------------------------
    def cluster_overview(self) -> ClusterOverview:
        states = [a.job.summary.state for a in self.jobs.values()]
        return ClusterOverview(0, 0, 0, 0, states.count(JobStatus.FINISHED), states.count(JobStatus.CANCELED),
                               states.count(JobStatus.FAILED))

    def list_jobs(self) -> list[JobSummary]:
        return sorted((a.job.summary for a in self.jobs.values()), key=lambda s: s.start_time, reverse=True)

    def request_job(self, job_id: str) -> JobSnapshot:
        return self.archived(job_id).job

    def job_status(self, job_id: str) -> JobStatus:
        return self.archived(job_id).job.summary.state

    def job_exceptions(self, job_id: str) -> list[FailureRecord]:
        return list(self.archived(job_id).exceptions)

    def checkpoint_stats(self, job_id: str) -> CheckpointStatsSnapshot:
        return self.archived(job_id).checkpoints

    def checkpoint_config(self, job_id: str) -> CheckpointConfigSnapshot:
        return self.archived(job_id).checkpoint_config

    def checkpoint_details(self, job_id: str, checkpoint_id: int) -> CheckpointDetailsSnapshot:
        found = self.archived(job_id).details(checkpoint_id)
        if found is None:
            raise UnknownCheckpoint(job_id, checkpoint_id)
        return found

    def request_task_managers(self) -> list[TaskManagerSnapshot]:
        return []

    def request_task_manager(self, tm_id: str) -> TaskManagerSnapshot:
        raise UnknownTaskManager(tm_id)

    def savepoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None:
        self.archived(job_id)
        return None

    def checkpoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None:
        self.archived(job_id)
        return None

    def disposal_status(self, trigger_id: str) -> OperationStatus | None:
        return None

    def subscribe_events(self) -> _Ended:
        return _Ended()

    # -- what an archive cannot do ------------------------------------------------------------
    def cancel_job(self, job_id: str) -> None:
        raise self.ended(job_id, "there is nothing to cancel")

    def trigger_savepoint(self, job_id: str, target: str | None, cancel_job: bool) -> TriggerId:
        raise self.ended(job_id, "savepoints need a RUNNING job")

    def stop_with_savepoint(self, job_id: str, target: str | None, drain: bool) -> TriggerId:
        raise self.ended(job_id, "stop-with-savepoint needs a RUNNING job")

    def trigger_checkpoint(self, job_id: str, full: bool = False) -> TriggerId:
        raise self.ended(job_id, "checkpoints need a RUNNING job")

    def dispose_savepoint(self, path: str) -> TriggerId:
        raise OperationRefused("the history server reads archives only; dispose of savepoints through a JobManager")

    def job_results(self, job_id: str, offset: int, limit: int) -> ResultsPage:
        raise self.ended(job_id, "its collected rows were not archived")

    def push_sources(self, job_id: str) -> list[PushSourceSnapshot]:
        raise self.ended(job_id, "its push sources were not archived")

    def push_rows(self, job_id: str, source: str, rows: Any, push_id: str | None = None) -> PushAccepted:
        raise self.ended(job_id, "its sources take no more rows")

    def close_push_source(self, job_id: str, source: str) -> PushSourceSnapshot:
        raise self.ended(job_id, "its sources are closed")

    def job_graph(self, job_id: str) -> JobGraph | None:
        return self.jobs[job_id].job_graph if job_id in self.jobs else None

    def submit(self, payload: dict) -> JobId:
        raise OperationRefused("the history server runs no jobs; submit to a JobManager")
