"""Dispatcher: accepts jobs, gives each its own JobMaster, and answers for the cluster as a whole.

The REST layer (runtime.jobmanager.rest) talks to this class only; it never reaches into a JobMaster's
execution graph itself. Runs on the JobManager's loop.
"""
from __future__ import annotations

import logging

from runtime import events
from runtime.checkpoint.coordinator import load_checkpoint
from runtime.codec import WireError, from_plain
from runtime.config import ConfigError, Configuration
from runtime.connectors.base import ConnectorError
from runtime.errors import CheckpointError, SubmissionError
from runtime.ha.services import HaServices, LeadershipLost, NoHaServices
from runtime.ids import JobId, LeaderSessionId
from runtime.jobgraph import JobGraph, JobGraphError
from runtime.jobmanager.job_master import JobMaster
from runtime.jobmanager.resource_manager import ResourceManager
from runtime.states import JobStatus
from runtime.version import version

log = logging.getLogger(__name__)


class UnknownJob(KeyError):
    def __init__(self, job_id: str):
        super().__init__(job_id)
        self.job_id = job_id

    def __str__(self) -> str:
        return f"Job {self.job_id} not found"


class Dispatcher:
    def __init__(self, conf: Configuration, rm: ResourceManager, bus, working_dir: str = ".",
                 ha: HaServices | None = None):
        self.working_dir = working_dir
        self.conf = conf
        self.rm = rm
        self.bus = bus
        self.ha = ha or NoHaServices()
        self.leader_session_id: LeaderSessionId | None = None  # set by the JobManager while it leads
        self.jobs: dict[JobId, JobMaster] = {}
        rm.on_task_manager_lost(self._task_manager_lost)

    # -- submission and control ---------------------------------------------------------------
    def submit(self, payload: dict) -> JobId:
        """Accept a job graph (the JSON form of runtime.jobgraph.JobGraph), keep it in the HA store and
        start its JobMaster."""
        job_id = JobId(payload["job_id"]) if isinstance(payload, dict) and payload.get("job_id") else JobId.new()
        if job_id in self.jobs:
            raise SubmissionError(f"job id {job_id} is already in use")
        master = self._job_master(job_id, payload)
        try:
            self.ha.put_job_graph(self.leader_session_id, job_id, {**payload, "job_id": job_id})
        except LeadershipLost as err:
            raise SubmissionError(f"not accepted: {err}") from None
        self._start(master, "submitted")
        return job_id

    def recover_jobs(self) -> None:
        """This JobManager just became the leader: resume every job the HA store still holds, each from
        its latest completed checkpoint (restored as a failover restart would)."""
        for job_id, payload in self.ha.job_graphs().items():
            if job_id in self.jobs:
                continue
            try:
                master = self._job_master(job_id, payload)
                pointer = self.ha.checkpoint_pointer(job_id)
                if pointer:
                    master.checkpoints.recover(load_checkpoint(pointer))
            except (SubmissionError, CheckpointError) as err:
                log.error("cannot recover job %s: %s", job_id, err)
                continue
            self._start(master, f"recovered from checkpoint {pointer}" if pointer else "recovered")

    def suspend_jobs(self, reason: str) -> None:
        """Leadership lost: every unfinished JobMaster stops acting and is forgotten here; the HA store
        keeps the jobs for the next leader (this JobManager too, should it lead again)."""
        for job_id, master in list(self.jobs.items()):
            if not master.status.is_globally_terminal:
                master.suspend(reason)
                del self.jobs[job_id]

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
            except CheckpointError as err:
                raise SubmissionError(f"cannot restore from {graph.restore_from!r}: {err}") from None
        try:
            return JobMaster(job_id, graph, job_conf, self.rm, self.bus, self.working_dir, restore,
                             self.ha.entries(self.leader_session_id, job_id))
        except ConnectorError as err:  # a push source's schema that does not parse
            raise SubmissionError(f"invalid job graph: {err}") from None

    def _start(self, master: JobMaster, how: str) -> None:
        self.jobs[master.job_id] = master
        self.bus.publish(events.JobSubmitted(master.job_id, master.name))
        log.info("job %s (%s) %s", master.job_id, master.name, how)
        master.start()

    @staticmethod
    def _parse_graph(payload: dict) -> JobGraph:
        if not isinstance(payload, dict) or "job_graph" not in payload:
            raise SubmissionError("request body must be a JSON object with a 'job_graph' field")
        try:
            graph = from_plain({"type": "JobGraph", **payload["job_graph"]}
                               if isinstance(payload["job_graph"], dict) else payload["job_graph"], JobGraph)
        except (WireError, TypeError) as err:
            raise SubmissionError(f"job_graph is malformed: {err}") from None
        return graph

    def job(self, job_id: str) -> JobMaster:
        master = self.jobs.get(job_id)  # type: ignore[call-overload]
        if master is None:
            raise UnknownJob(job_id)
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

    # -- views --------------------------------------------------------------------------------
    def overview(self) -> dict:
        counts = {s: 0 for s in JobStatus}
        for master in self.jobs.values():
            counts[master.status] += 1
        running = len(self.jobs) - counts[JobStatus.FINISHED] - counts[JobStatus.CANCELED] - counts[JobStatus.FAILED]
        return {
            "taskmanagers": len(self.rm.task_managers),
            "slots-total": self.rm.total_slots,
            "slots-available": self.rm.free_slot_count,
            "jobs-running": running,
            "jobs-finished": counts[JobStatus.FINISHED],
            "jobs-cancelled": counts[JobStatus.CANCELED],
            "jobs-failed": counts[JobStatus.FAILED],
            "flink-version": version(),
            "flinkbench-version": version(),
        }

    def jobs_overview(self) -> list[dict]:
        return [m.overview() for m in self.jobs.values()]

    def taskmanagers(self) -> list[dict]:
        live = [self.rm.describe(r) for r in self.rm.task_managers.values()]
        return live + [self.rm.describe_lost(info) for info in self.rm.lost.values()]

    def taskmanager(self, tm_id: str) -> dict:
        record = self.rm.task_managers.get(tm_id)  # type: ignore[call-overload]
        if record is not None:
            return self.rm.describe(record)
        if tm_id in self.rm.lost:
            return self.rm.describe_lost(self.rm.lost[tm_id])  # type: ignore[index]
        raise KeyError(tm_id)
