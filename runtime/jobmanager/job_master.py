"""JobMaster: runs one job. Requests slots, deploys subtasks, follows their states, restarts or fails.

One JobMaster per submitted job, created by the Dispatcher, living on the JobManager's loop. What to
do about what happens is decided by the job's failover state machine (runtime.jobmanager.failover):
the JobMaster turns reports, timers and requests into its events and executes the actions it returns,
through the ResourceManager's gateway and the TaskExecutorGateway of each allocated slot. Every
change goes out on the event stream.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import time

from runtime import events
from runtime.checkpoint import trace
from runtime.checkpoint.fencing import fenced_by
from runtime.checkpoint.coordinator import CheckpointCoordinator, CheckpointFailure, CompletedCheckpoint
from runtime.checkpoint.stats import CheckpointConfigSnapshot, CheckpointDetailsSnapshot, CheckpointStatsSnapshot
from runtime.config import Configuration
from runtime.ha.services import JobEntries, LeadershipLost
from runtime.ids import ExecutionAttemptId, JobId, JobVertexId, TaskManagerId, TriggerId
from runtime.jobgraph import JobGraph
from runtime.jobmanager.collect import CollectBuffer
from runtime.jobmanager import failover_events as ev
from runtime.jobmanager.execution_graph import ExecutionGraph
from runtime.errors import last_line
from runtime.jobmanager.failover import JobFailover, exception_name
from runtime.jobmanager.operations import OperationCache
from runtime.jobmanager.push import PushLogs
from runtime.gateways import TaskExecutorGateway, TaskManagerGone
from runtime.jobmanager.gateways import ResourceManagerGateway
from runtime.jobmanager.resource_manager import NoResourceAvailable
from runtime.jobmanager.restart import restart_strategy
from runtime.snapshots import (FailureRecord, JobSnapshot, JobSummary, OperationStatus)
from runtime.messages import (AcknowledgeCheckpoint, CollectResult, DeclineCheckpoint, FetchPushedRows, PushedRows,
                              TaskMetrics, TaskStateChanged)
from runtime.states import ExecutionState, JobStatus
from runtime.users import CLUSTER_ADMIN

log = logging.getLogger(__name__)
MAX_EXCEPTIONS = 100
# Statuses that end the current attempts: whatever they write from then on is stale (runtime.checkpoint.trace).
SUPERSEDING = (JobStatus.RESTARTING, JobStatus.FAILING, JobStatus.CANCELLING, JobStatus.SUSPENDED)


class JobMaster:
    """Runs one job: asks the ResourceManager for slots, deploys subtasks through the gateways it hands
    out, follows their states and restarts or fails the job. Lives on the JobManager's loop."""

    def __init__(self, job_id: JobId, graph: JobGraph, conf: Configuration, rm: ResourceManagerGateway, bus,
                 working_dir: str, restore: CompletedCheckpoint | None = None, ha: JobEntries | None = None,
                 user: str = CLUSTER_ADMIN):
        self.job_id = job_id
        self.graph = graph  # what it was submitted with
        self.user = user  # who submitted it: what the REST layer shows them and counts against their quota
        self.ha = ha  # this job's entries in the HA store (graph, latest checkpoint pointer)
        self.conf = conf
        self.resource_manager = rm
        self.bus = bus
        self.name = graph.name
        self.status_times: dict[str, float] = {JobStatus.INITIALIZING.value: time.time()}
        self.start_time = time.time()
        self.end_time: float | None = None
        self.eg = ExecutionGraph(graph)
        self.failover = JobFailover(self.eg, restart_strategy(conf))
        self.exceptions: list[FailureRecord] = []  # newest first
        # What it writes on the loop (collected and pushed rows) asks the lease; the rest, in threads, the store too.
        self._loop_fence = ha.fence.lease_only() if ha is not None else None
        self.results = CollectBuffer(data_dir=ha.data_dir if ha else None, on_unkept=self._checkpoints_failing)
        with self.fenced():  # a log new to the HA storage is started there (its epoch written)
            self.push_sources = PushLogs(graph, ha.data_dir if ha else None, lambda: self.checkpoints.completed,
                                         ha.fence if ha is not None else None)
        self._terminal = asyncio.get_running_loop().create_future()
        self._events: collections.deque[ev.Event] = collections.deque()
        self._handling = False
        self._tasks: set[asyncio.Task] = set()  # slot requests in flight
        self._timers: list[asyncio.TimerHandle] = []
        self.checkpoints = CheckpointCoordinator(self, conf, bus, self._checkpoints_failing, ha, working_dir,
                                                 lambda cause: self._handle(ev.Unrecoverable(cause)))
        self.savepoint_operations = OperationCache()
        self.checkpoint_operations = OperationCache()
        if restore is not None:
            self.checkpoints.start_from(restore)

    # -- lifecycle ----------------------------------------------------------------------------
    @property
    def status(self) -> JobStatus:
        return self.failover.status

    @property
    def restarts(self) -> int:
        return self.failover.restarts

    def start(self) -> None:
        self._handle(ev.JobStarted())

    async def wait(self) -> JobStatus:
        return await asyncio.shield(self._terminal)

    async def cancel(self) -> None:
        """Cancel the job; returns once it is CANCELED (or already ended otherwise)."""
        self._handle(ev.CancelRequested())
        await self.wait()

    def resume_from(self, checkpoint: CompletedCheckpoint) -> None:
        """A new leader resumes the job: its first deployment restores ``checkpoint`` (from the HA store)."""
        self.checkpoints.recover(checkpoint)

    def suspend(self, reason: str) -> None:
        """This JobManager lost the leadership: stop acting for the job at once (no deployments,
        checkpoints or HA writes) without ending it; the leader resumes it from the HA store."""
        self._handle(ev.Suspended(reason))

    # -- the failover state machine decides, this class executes ------------------------------
    def _handle(self, event: ev.Event) -> None:
        """Feed ``event`` to the state machine and execute its actions in order. Events raised while
        executing (a gateway finding its TaskManager gone) are queued behind the current ones."""
        self._events.append(event)
        if self._handling:
            return
        self._handling = True
        try:
            while self._events:
                for action in self.failover.handle(self._events.popleft(), time.monotonic()):
                    self._execute(action)
        finally:
            self._handling = False

    def _execute(self, action: ev.Action) -> None:
        if isinstance(action, ev.TaskStateChanged):
            self._publish_task_state(action)
        elif isinstance(action, ev.JobStatusChanged):
            if action.status in SUPERSEDING:
                trace.record("superseded", job=self.job_id, attempts=self.all_attempts(), status=action.status.value)
            self.status_times[action.status.value] = time.time()
            self.bus.publish(events.JobStatusChanged(self.job_id, self.name, action.status.value,
                                                     action.previous.value, self.eg.attempt, action.cause))
        elif isinstance(action, ev.RequestSlots):
            self._tasks.add(request := asyncio.get_running_loop().create_task(self._request_slots(action)))
            request.add_done_callback(self._tasks.discard)
        elif isinstance(action, ev.DeployTasks):
            self._deploy(action.attempts)
        elif isinstance(action, ev.CancelTask):
            self._cancel_task(action.attempt_id)
        elif isinstance(action, (ev.StartCheckpointing, ev.PauseCheckpointing, ev.StopCheckpointing)):
            self._steer_checkpoints(action)
        elif isinstance(action, (ev.ScheduleRestart, ev.ScheduleCancelTimeout)):
            after = ev.RestartDelayPassed if isinstance(action, ev.ScheduleRestart) else ev.CancelTimedOut
            self._timers.append(asyncio.get_running_loop().call_later(action.delay_s, self._handle, after(action.round)))
        else:
            self._execute_bookkeeping(action)

    def _execute_bookkeeping(self, action: ev.Action) -> None:
        if isinstance(action, ev.AssignTasks):
            self.resource_manager.assign_tasks(action.allocation_id, list(action.task_names))
        elif isinstance(action, ev.FreeSlots):
            self.resource_manager.free_slots(self.job_id)
        elif isinstance(action, ev.CancelSlotRequest):
            self.resource_manager.cancel_requests(self.job_id)
        elif isinstance(action, ev.RecordFailure):
            vertex, execution = self.eg.find(action.attempt_id) if action.attempt_id else (None, None)
            self._record_exception(action.error, action.exception_name, vertex, execution)
        elif isinstance(action, ev.JobRestarting):
            self.bus.publish(events.JobRestarting(self.job_id, action.attempt, action.cause, action.delay_s))
        elif isinstance(action, ev.JobTerminated):
            self._finish(action.status)
        elif isinstance(action, ev.JobSuspended):
            self._stand_down()

    async def _request_slots(self, action: ev.RequestSlots) -> None:
        try:
            slots = await self.resource_manager.request_slots(self.job_id, self.name, action.count,
                                                              self.conf.get("slot.request.timeout"))
        except NoResourceAvailable as err:
            self._handle(ev.SlotsUnavailable(action.round, str(err)))
            return
        self._handle(ev.SlotsGranted(action.round, slots))

    def _deploy(self, attempts: tuple[ExecutionAttemptId, ...]) -> None:
        """Deploy a round's attempts, each with its share of the latest checkpoint (if there is one)."""
        restore = self.checkpoints.latest()
        if restore is not None:
            self.checkpoints.restore_from(restore)
        for attempt in attempts:
            vertex, execution = self.eg.find(attempt)
            if vertex is None or execution is None or execution.slot is None:
                continue
            descriptor = self.eg.deployment(vertex, execution, self.job_id, self.conf, self.checkpoints.periodic)
            if restore is not None:
                descriptor.restore = restore.pointers_for({op.id for op in vertex.operators})
                descriptor.restore_checkpoint_id = restore.checkpoint_id
            try:
                execution.slot.gateway.submit_task(descriptor)
            except TaskManagerGone as err:
                self._handle(ev.TaskReported(attempt, ExecutionState.FAILED, str(err)))

    def _cancel_task(self, attempt: ExecutionAttemptId) -> None:
        gateway = self.task_gateway(attempt)
        try:
            if gateway is None:
                raise TaskManagerGone("the attempt has no TaskManager")
            gateway.cancel_task(attempt)
        except TaskManagerGone as err:  # nothing left to cancel there
            self._handle(ev.TaskReported(attempt, ExecutionState.CANCELED, str(err)))

    def _steer_checkpoints(self, action: ev.StartCheckpointing | ev.PauseCheckpointing | ev.StopCheckpointing) -> None:
        if isinstance(action, ev.StartCheckpointing):
            self.checkpoints.start()
            return
        self.checkpoints.stop()
        if isinstance(action, ev.StopCheckpointing):
            self.checkpoints.abort_all(action.reason)

    def _publish_task_state(self, action: ev.TaskStateChanged) -> None:
        vertex, ex = self.eg.find(action.attempt_id)
        if vertex is None or ex is None:
            return
        self.bus.publish(events.TaskStatusChanged(
            self.job_id, vertex.id, vertex.name, ex.subtask_index, ex.attempt_id, ex.attempt_number,
            action.state.value, ex.tm_id, ex.slot_index, action.error))

    # -- reports from TaskManagers (the JobMasterGateway) -------------------------------------
    def update_task_execution_state(self, msg: TaskStateChanged) -> None:
        """A TaskManager reports an attempt's new state; one of this round that could not read the
        checkpoint it restores counts against that checkpoint (runtime.checkpoint.task_state.RestoreFailed)."""
        if (msg.state == ExecutionState.FAILED and exception_name(msg.error or "").endswith("RestoreFailed")
                and self.eg.find(msg.attempt_id)[1] is not None):
            self.checkpoints.restore_failed(self.eg.attempt, last_line(msg.error))
        self._handle(ev.TaskReported(msg.attempt_id, msg.state, msg.error))

    def report_task_metrics(self, msg: TaskMetrics) -> None:
        vertex, execution = self.eg.find(msg.attempt_id)
        if execution is None:
            return
        self.bus.publish(events.TaskMetricsReported(self.job_id, vertex.id, vertex.name,
                                                    execution.subtask_index, execution.note_metrics(msg)))

    def deliver_results(self, msg: CollectResult) -> None:
        """Rows from a collect sink, kept for the client."""
        if self.eg.find(msg.attempt_id)[1] is not None:
            with self.fenced():
                self.results.add(msg)

    def fenced(self):
        """A context in which what this JobMaster writes on the loop (collected rows, pushed rows) asks its
        lease first: a JobManager woken from a pause longer than its lease writes nothing."""
        return fenced_by(self._loop_fence)

    def disconnect_task_manager(self, tm_id: TaskManagerId, reason: str) -> None:
        """The ResourceManager lost ``tm_id``: every attempt there failed."""
        self._handle(ev.TaskManagerLost(tm_id, reason))

    def acknowledge_checkpoint(self, msg: AcknowledgeCheckpoint) -> None:
        self.checkpoints.on_ack(msg)

    def decline_checkpoint(self, msg: DeclineCheckpoint) -> None:
        self.checkpoints.on_decline(msg)

    def fetch_pushed_rows(self, msg: FetchPushedRows) -> PushedRows:
        """A push source subtask's next rows (it waits for the answer)."""
        return self.push_sources.fetch(msg)

    # -- what the checkpoint coordinator needs (its CheckpointContext) -------------------------
    @property
    def max_parallelism(self) -> int:
        return self.conf.get("pipeline.max-parallelism")

    def all_running(self) -> bool:
        return self.status == JobStatus.RUNNING and self.eg.all_in(ExecutionState.RUNNING)

    def participants(self) -> dict[ExecutionAttemptId, tuple[JobVertexId, int, list[str]]]:
        return {sub.current.attempt_id: (v.id, sub.subtask_index, [op.id for op in v.operators])
                for v in self.eg.vertices for sub in v.subtasks}

    def source_attempts(self) -> list[ExecutionAttemptId]:
        return [sub.current.attempt_id for v in self.eg.vertices if v.head.kind == "source" for sub in v.subtasks]

    def all_attempts(self) -> list[ExecutionAttemptId]:
        return [ex.attempt_id for _, ex in self.eg.executions()]

    def task_gateway(self, attempt_id: ExecutionAttemptId) -> TaskExecutorGateway | None:
        _, execution = self.eg.find(attempt_id)
        return execution.slot.gateway if execution is not None and execution.slot is not None else None

    # -- savepoints ---------------------------------------------------------------------------
    def trigger_savepoint(self, target: str | None, stop: bool, drain: bool = False) -> TriggerId:
        """Start a savepoint (and, with ``stop``, end the job after it; with ``drain``, fire every window
        first); poll the trigger id for its location."""
        try:
            future = self.checkpoints.trigger(is_savepoint=True, target=target, stop=stop, drain=drain)
        except CheckpointFailure as err:
            return self.savepoint_operations.failed(str(err))
        if stop:
            self._stopping_with(self.checkpoints.last_triggered, future)
        return self.savepoint_operations.track(future, lambda done: done.directory)

    def checkpoint_stats(self) -> CheckpointStatsSnapshot:
        return self.checkpoints.stats()

    def checkpoint_config(self) -> CheckpointConfigSnapshot:
        return self.checkpoints.config()

    def checkpoint_details(self, checkpoint_id: int) -> CheckpointDetailsSnapshot | None:
        return self.checkpoints.checkpoint_details(checkpoint_id)

    def savepoint_status(self, trigger_id: str) -> OperationStatus | None:
        return self.savepoint_operations.status(trigger_id)

    def checkpoint_status(self, trigger_id: str) -> OperationStatus | None:
        return self.checkpoint_operations.status(trigger_id)

    def failure_history(self) -> list[FailureRecord]:
        """The job's exceptions, newest first (Flink's exception history)."""
        return list(self.exceptions)

    def trigger_checkpoint(self, full: bool = False) -> TriggerId:
        """A checkpoint now, besides the periodic ones; poll the trigger id for its checkpoint id. ``full``:
        with incremental checkpoints, one that refers to no earlier checkpoint's files."""
        try:
            future = self.checkpoints.trigger(is_savepoint=False, full=full)
        except CheckpointFailure as err:
            return self.checkpoint_operations.failed(str(err))
        return self.checkpoint_operations.track(future, lambda done: done.checkpoint_id)

    def _stopping_with(self, checkpoint_id: int, savepoint: asyncio.Future) -> None:
        """A stop-with-savepoint is in flight: the failover machine follows it to its end."""
        self._handle(ev.StopRequested(checkpoint_id))

        def settled(fut: asyncio.Future) -> None:
            failed = fut.cancelled() or fut.exception() is not None
            self._handle(ev.CheckpointFailed(checkpoint_id) if failed else ev.CheckpointCompleted(checkpoint_id))
        savepoint.add_done_callback(settled)

    # -- the end ---------------------------------------------------------------------------------
    def _checkpoints_failing(self, cause: str) -> None:
        self._handle(ev.CheckpointsFailing(cause))

    def _stand_down(self) -> None:
        """Suspended: no timer fires, no slot request completes and no checkpoint file is written or
        deleted for this JobMaster any more."""
        self.checkpoints.suspend()
        for timer in self._timers:
            timer.cancel()
        for task in self._tasks:
            task.cancel()
        self._terminal.cancel()  # whoever awaits the job's end here: it ends under another leader

    def _finish(self, status: JobStatus) -> None:
        """The job ended: stop its checkpoints and timers, give back its slots and forget it in the HA store."""
        for timer in self._timers:
            timer.cancel()
        self.checkpoints.stop()
        self.checkpoints.abort_all(f"job {status.value}")
        self.checkpoints.sweep()
        self.end_time = time.time()
        self.results.finish()
        self.resource_manager.free_slots(self.job_id)
        self.resource_manager.end_reservation(self.job_id)
        self._clean_ha_entries()
        if not self._terminal.done():
            self._terminal.set_result(status)

    def _clean_ha_entries(self) -> None:
        """A terminal job is not resumed by a later leader: drop its graph and checkpoint pointer."""
        if self.ha is None:
            return
        try:
            self.ha.clean()
        except (LeadershipLost, OSError) as err:
            log.warning("job %s: cannot remove its HA entries: %s", self.job_id, err)

    def _record_exception(self, error: str, name: str, vertex, execution) -> None:
        task = f"{vertex.name} ({execution.subtask_index + 1}/{vertex.parallelism})" if vertex else None
        entry = FailureRecord(name, error, time.time(), task, execution.host if execution else None,
                              execution.tm_id if execution else None, self.eg.attempt)
        self.exceptions.insert(0, entry)
        del self.exceptions[MAX_EXCEPTIONS:]

    # -- snapshots (the REST layer shows them in Flink's shapes) -------------------------------
    def summary(self) -> JobSummary:
        return JobSummary(self.job_id, self.name, self.status, self.start_time, self.end_time,
                          max(self.status_times.values()), self.eg.max_parallelism, self.restarts,
                          self.eg.state_counts(), self.eg.output_rate(), self.conf.get("execution.runtime-mode") == "batch",
                          self.user)

    def snapshot(self) -> JobSnapshot:
        return JobSnapshot(self.summary(), {JobStatus(k): t for k, t in self.status_times.items()},
                           self.eg.vertex_snapshots(self.max_parallelism), self.eg.plan(), self.max_parallelism,
                           self.checkpoints is not None, self.eg.job_graph.statement, self.failover.strategy.name,
                           {k: str(v) for k, v in self.eg.job_graph.config.items()})
