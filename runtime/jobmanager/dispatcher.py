"""Dispatcher: accepts jobs, gives each its own JobMaster, and answers for the cluster as a whole.

The REST layer (runtime.jobmanager.rest) talks to this class only, through its DispatcherGateway
(runtime.jobmanager.gateways): everything it answers is a typed snapshot, never a JobMaster or the
ResourceManager's tables. Runs on the JobManager's loop.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging

from runtime import events
from runtime.checkpoint import savepoints, storage
from runtime.checkpoint.checkpoint_files import load_checkpoint
from runtime.checkpoint.lifecycle_events import CompletedCheckpoint
from runtime.config import ConfigError, Configuration
from runtime.connectors.base import ConnectorError
from runtime.errors import CheckpointError, SubmissionError
from runtime.checkpoint.fencing import WriteFence, run_fenced
from runtime.ha.fence import LeaseHolder
from runtime.ha.services import HaServices, LeadershipLost, NoHaServices
from runtime.ids import JobId, LeaderSessionId, TriggerId
from runtime.jobgraph import JobGraph, JobGraphError, read_job_graph
from runtime.jobmanager.archive import JobArchivist, read_archives
from runtime.jobmanager.archived_jobs import ArchivedJobs
from runtime.jobmanager.gateways import (JobMasterGateway, OperationRefused, UnknownCheckpoint, UnknownJob,
                                         UnknownTaskManager)
from runtime.jobmanager.job_master import JobMaster
from runtime.jobmanager.operations import OperationCache
from runtime.jobmanager.push import SourceRefused
from runtime.jobmanager.resource_manager import ResourceManager
from runtime.snapshots import (CheckpointConfigSnapshot, CheckpointDetailsSnapshot, CheckpointStatsSnapshot,
                               ClusterOverview, FailureRecord, JobSnapshot, JobSummary, OperationStatus,
                               PushAccepted, PushSourceSnapshot, ResultsPage, TaskManagerSnapshot)
from runtime.states import JobStatus
from runtime.users import CLUSTER_ADMIN

log = logging.getLogger(__name__)


class Dispatcher:
    """Accepts jobs, gives each its own JobMaster and answers for the cluster as a whole; on the JobManager's loop."""
    def __init__(self, conf: Configuration, rm: ResourceManager, bus, working_dir: str = ".",
                 ha: HaServices | None = None, lease: LeaseHolder | None = None):
        self.working_dir = working_dir
        self.conf = conf
        self.rm = rm
        self.bus = bus
        self.ha = ha or NoHaServices()
        self.lease = lease  # the leader election: what fences ask before this JobManager writes for a job
        self.leader_session_id: LeaderSessionId | None = None  # set by the JobManager while it leads
        self.jobs: dict[JobId, JobMaster] = {}
        self._digests: dict[JobId, str] = {}  # what each job id was submitted with, to tell retries apart
        self.disposals = OperationCache()
        self.archivist = JobArchivist(conf.get("jobmanager.archive.fs.dir"), self._fence)
        self.archived = ArchivedJobs()  # jobs that ended before this JobManager started, from their archives
        rm.on_task_manager_lost(self._task_manager_lost)

    # -- submission and control ---------------------------------------------------------------
    def submit(self, payload: dict) -> JobId:
        """Accept a job graph (the JSON form of runtime.jobgraph.JobGraph), keep it in the HA store and
        start its JobMaster. A client names the job id (``job_id``, 32 hex digits) so that a retried
        submission of the same graph returns the job already running instead of starting a second."""
        job_id = _job_id_of(payload)
        if job_id in self.jobs:
            if self._digests.get(job_id) != _digest(payload) or self.jobs[job_id].user != _user_of(payload):
                raise SubmissionError(f"job id {job_id} is already in use by another job graph")
            return job_id  # a retry (after a timeout or a leader change): the same job
        master = self._job_master(job_id, payload)
        self.rm.admit(job_id, master.user, master.name, master.eg.max_parallelism)  # QuotaExceeded: refused here
        try:
            self.ha.put_job_graph(self.leader_session_id, job_id, {**payload, "job_id": job_id})
        except LeadershipLost as err:
            self.rm.end_reservation(job_id)
            raise SubmissionError(f"not accepted: {err}") from None
        self._digests[job_id] = _digest(payload)
        self._start(master, "submitted")
        return job_id

    async def load_archives(self) -> None:
        """Read the archives of jobs that ended (under any earlier leader), to list and serve them beside the
        jobs this Dispatcher runs; a store that cannot be read leaves the list empty, logged."""
        if not self.archivist.directory:
            return
        try:
            found = await asyncio.get_running_loop().run_in_executor(None, read_archives, [self.archivist.directory])
        except OSError as err:
            log.error("cannot read the job archives under %s: %s", self.archivist.directory, err)
            return
        self.archived = ArchivedJobs(found)
        log.info("%d archived jobs under %s", len(found), self.archivist.directory)

    def recover_jobs(self) -> None:
        """This JobManager just became the leader: resume every job the HA store still holds, each from
        its latest completed checkpoint (restored as a failover restart would), with the older retained
        ones to fall back to."""
        for job_id, payload in self.ha.job_graphs().items():
            if job_id in self.jobs:
                continue
            try:
                master = self._job_master(job_id, payload)
                retained = self._retained(job_id)
                self.rm.admit(job_id, master.user, master.name, master.eg.max_parallelism, check=False)
                self._digests[job_id] = _digest(payload)
            except (SubmissionError, CheckpointError, OSError) as err:  # it stays in the store for a later try
                log.error("cannot recover job %s: %s", job_id, err)
                continue
            for checkpoint in retained:
                master.resume_from(checkpoint)
            self._start(master, f"recovered from checkpoint {retained[-1].directory}" if retained else "recovered")

    def _retained(self, job_id: JobId) -> list[CompletedCheckpoint]:
        """The job's retained checkpoints the HA store names, oldest first, less those whose metadata
        cannot be read (logged: the job falls back to an older one). CheckpointError when it names some and
        none can be read (the job is not started over from nothing), OSError if the store does not answer."""
        found, named = [], self.ha.retained_checkpoints(job_id)
        for directory in named:
            try:
                found.append(load_checkpoint(directory))
            except CheckpointError as err:
                log.error("job %s: retained checkpoint %s cannot be read, so it is not restored: %s",
                          job_id, directory, err)
        if named and not found:
            raise CheckpointError(f"none of its retained checkpoints can be read: {', '.join(named)}")
        return found

    def suspend_jobs(self, reason: str) -> None:
        """Leadership lost: every unfinished JobMaster stops acting and is forgotten here; the HA store
        keeps the jobs for the next leader (this JobManager too, should it lead again)."""
        for job_id, master in list(self.jobs.items()):
            if not master.status.is_globally_terminal:
                master.suspend(reason)
                del self.jobs[job_id]
                self._digests.pop(job_id, None)

    def _job_master(self, job_id: JobId, payload: dict) -> JobMaster:
        """A JobMaster for a submission, not yet started. SubmissionError says what is wrong with it."""
        graph = self._parse_graph(payload)
        try:
            job_conf = self.conf.with_overrides(graph.config)
        except ConfigError as err:
            raise SubmissionError(f"job configuration: {err}") from None
        try:
            graph.validate(job_conf.get("parallelism.default"))
        except JobGraphError as err:
            raise SubmissionError(f"invalid job graph: {err}") from None
        max_p = job_conf.get("pipeline.max-parallelism")
        too_wide = [op.name for op in graph.operators if op.parallelism > max_p]
        if too_wide:
            raise SubmissionError(f"operators {too_wide} exceed pipeline.max-parallelism {max_p}")
        restore = None
        if graph.restore_from:
            try:
                restore = load_checkpoint(graph.restore_from)
                fit = savepoints.check(savepoints.describe(graph.restore_from), graph, max_p,
                                       job_conf.get("parallelism.default"), job_conf.get(savepoints.IGNORE_UNCLAIMED))
            except CheckpointError as err:
                raise SubmissionError(f"cannot restore from {graph.restore_from!r}: {err}") from None
            if not fit.compatible:
                raise SubmissionError("; ".join(fit.problems))
        try:
            return JobMaster(job_id, graph, job_conf, self.rm, self.bus, self.working_dir, restore,
                             self.ha.entries(self.leader_session_id, job_id, self.lease), _user_of(payload))
        except ConnectorError as err:  # a push source's schema that does not parse
            raise SubmissionError(f"invalid job graph: {err}") from None

    def _start(self, master: JobMaster, how: str) -> None:
        self.jobs[master.job_id] = master
        self.bus.publish(events.JobSubmitted(master.job_id, master.name))
        log.info("job %s (%s) %s", master.job_id, master.name, how)
        master.start()
        self.archivist.follow(master)

    @staticmethod
    def _parse_graph(payload: dict) -> JobGraph:
        if not isinstance(payload, dict) or "job_graph" not in payload:
            raise SubmissionError("request body must be a JSON object with a 'job_graph' field")
        return read_job_graph(payload["job_graph"])

    def job_graph(self, job_id: str) -> JobGraph | None:
        master = self._here(job_id)
        if master is not None:
            return master.graph
        return self.archived.jobs[job_id].job_graph if job_id in self.archived else None

    def _fence(self) -> WriteFence | None:
        """The fence of this JobManager's writes now: its leader session's (None while it does not lead here)."""
        return self.ha.fence(self.leader_session_id, self.lease) if self.lease and self.leader_session_id else None

    def job_master(self, job_id: JobId) -> JobMasterGateway | None:
        """The gateway of a job's JobMaster, where its TaskManagers' reports go; None for a job not here."""
        return self.jobs.get(job_id)

    def _here(self, job_id: str) -> JobMaster | None:
        """The JobMaster of a job this Dispatcher runs or ran; None for others (archived or unknown)."""
        return self.jobs.get(JobId(job_id))

    def job(self, job_id: str) -> JobMaster:
        """The JobMaster of a job this Dispatcher runs; a job known from its archive only cannot be acted on."""
        master = self._here(job_id)
        if master is None:
            raise self.archived.ended(job_id, "it is not running here") if job_id in self.archived else UnknownJob(job_id)
        return master

    async def cancel(self, job_id: str) -> None:
        await self.job(job_id).cancel()

    def _task_manager_lost(self, tm_id, reason: str) -> None:
        for master in self.jobs.values():
            if not master.status.is_globally_terminal:
                master.disconnect_task_manager(tm_id, reason)

    async def shutdown(self) -> None:
        for master in self.jobs.values():
            if not master.status.is_globally_terminal:
                await master.cancel()

    # -- RestfulGateway: what the REST layer may ask -------------------------------------------
    def cluster_overview(self) -> ClusterOverview:
        states = [m.status for m in self.jobs.values()]
        states += [a.job.summary.state for job_id, a in self.archived.jobs.items() if job_id not in self.jobs]
        running = sum(1 for s in states if not s.is_globally_terminal)
        tms = self.rm.snapshots()
        live = [tm for tm in tms if tm.lost_reason is None]
        return ClusterOverview(len(live), sum(tm.slots_number for tm in live), sum(tm.free_slots for tm in live),
                               running, states.count(JobStatus.FINISHED), states.count(JobStatus.CANCELED),
                               states.count(JobStatus.FAILED))

    def list_jobs(self) -> list[JobSummary]:
        """The jobs this Dispatcher runs or ran, then those it knows from their archives only."""
        return [m.summary() for m in self.jobs.values()] + [
            s for s in self.archived.list_jobs() if s.job_id not in self.jobs]

    def request_job(self, job_id: str) -> JobSnapshot:
        master = self._here(job_id)
        return master.snapshot() if master else self.archived.request_job(job_id)

    def job_owner(self, job_id: str) -> str:
        return self.job(job_id).user

    def job_status(self, job_id: str) -> JobStatus:
        master = self._here(job_id)
        return master.status if master else self.archived.job_status(job_id)

    def job_exceptions(self, job_id: str) -> list[FailureRecord]:
        master = self._here(job_id)
        return master.failure_history() if master else self.archived.job_exceptions(job_id)

    def checkpoint_stats(self, job_id: str) -> CheckpointStatsSnapshot:
        master = self._here(job_id)
        return master.checkpoint_stats() if master else self.archived.checkpoint_stats(job_id)

    def checkpoint_config(self, job_id: str) -> CheckpointConfigSnapshot:
        master = self._here(job_id)
        return master.checkpoint_config() if master else self.archived.checkpoint_config(job_id)

    def checkpoint_details(self, job_id: str, checkpoint_id: int) -> CheckpointDetailsSnapshot:
        master = self._here(job_id)
        if master is None:
            return self.archived.checkpoint_details(job_id, checkpoint_id)
        found = master.checkpoint_details(checkpoint_id)
        if found is None:
            raise UnknownCheckpoint(job_id, checkpoint_id)
        return found

    def request_task_managers(self) -> list[TaskManagerSnapshot]:
        return self.rm.snapshots()

    def request_task_manager(self, tm_id: str) -> TaskManagerSnapshot:
        found = self.rm.snapshot(tm_id)
        if found is None:
            raise UnknownTaskManager(tm_id)
        return found

    def cancel_job(self, job_id: str) -> None:
        """Start cancelling; the job reaches CANCELED on its own (poll its status)."""
        asyncio.get_running_loop().create_task(self.job(job_id).cancel())

    def trigger_savepoint(self, job_id: str, target: str | None, cancel_job: bool) -> TriggerId:
        return self._running(job_id, "savepoints").trigger_savepoint(target, stop=cancel_job)

    def stop_with_savepoint(self, job_id: str, target: str | None, drain: bool) -> TriggerId:
        return self._running(job_id, "stop-with-savepoint").trigger_savepoint(target, stop=True, drain=drain)

    def savepoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None:
        return self.job(job_id).savepoint_status(trigger_id)

    def trigger_checkpoint(self, job_id: str, full: bool = False) -> TriggerId:
        return self._running(job_id, "checkpoints").trigger_checkpoint(full)

    def checkpoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None:
        return self.job(job_id).checkpoint_status(trigger_id)

    def dispose_savepoint(self, path: str) -> TriggerId:
        """Delete a savepoint (or retained checkpoint) directory, after checking that it is one."""
        def dispose() -> None:
            load_checkpoint(path)  # raises unless the directory holds _metadata
            storage.remove(storage.normalise(path))
        return self.disposals.track(asyncio.get_running_loop().run_in_executor(None, run_fenced, self._fence(), dispose),
                                    lambda _: None)

    def disposal_status(self, trigger_id: str) -> OperationStatus | None:
        return self.disposals.status(trigger_id)

    def job_results(self, job_id: str, offset: int, limit: int) -> ResultsPage:
        master = self.job(job_id)
        buffer = master.results
        table, next_offset = buffer.read(offset, limit)
        done = master.status.is_globally_terminal and next_offset >= buffer.total_rows
        return ResultsPage(offset, next_offset, buffer.total_rows, buffer.dropped_rows, done, master.status,
                           table, buffer.schema)

    def push_sources(self, job_id: str) -> list[PushSourceSnapshot]:
        return self.job(job_id).push_sources.snapshots()

    def push_rows(self, job_id: str, source: str, rows, push_id: str | None = None) -> PushAccepted:
        """Append rows to a push source, all or none (PushError names what does not fit); a push the
        client named with ``push_id`` is taken once however often it is retried."""
        master = self.job(job_id)
        log = master.push_sources.find(source)
        if master.status.is_globally_terminal:
            raise OperationRefused(f"job {job_id} is {master.status.value}: its sources take no more rows")
        try:
            with master.fenced():
                first, end = log.append(rows, push_id)
        except SourceRefused as err:
            raise OperationRefused(str(err)) from None
        return PushAccepted(log.snapshot(), first, end)

    def close_push_source(self, job_id: str, source: str) -> PushSourceSnapshot:
        master = self.job(job_id)
        log = master.push_sources.find(source)
        with master.fenced():
            log.close()
        return log.snapshot()

    def subscribe_events(self):
        return self.bus.subscribe()

    def _running(self, job_id: str, what: str) -> JobMaster:
        master = self.job(job_id)
        if master.status != JobStatus.RUNNING:
            raise OperationRefused(f"job {job_id} is {master.status.value}; {what} need a RUNNING job")
        return master


def _job_id_of(payload) -> JobId:
    """The job id the client named (validated: it becomes part of paths in the HA store), or a new one."""
    named = payload.get("job_id") if isinstance(payload, dict) else None
    if named is None:
        return JobId.new()
    if not isinstance(named, str) or len(named) != 32 or any(c not in "0123456789abcdef" for c in named):
        raise SubmissionError(f"job_id must be 32 lowercase hex digits (Flink's JobID), got {named!r}")
    return JobId(named)


def _user_of(payload: dict) -> str:
    """Who submitted the job: the REST layer stamps the caller's name on every submission (runtime.users)."""
    user = payload.get("user") if isinstance(payload, dict) else None
    return user if isinstance(user, str) and user else CLUSTER_ADMIN


def _digest(payload: dict) -> str:
    graph = payload.get("job_graph") if isinstance(payload, dict) else None
    return hashlib.sha256(json.dumps(graph, sort_keys=True, default=str).encode()).hexdigest()
