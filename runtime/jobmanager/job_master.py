"""JobMaster: runs one job. Requests slots, deploys subtasks, follows their states, restarts or fails.

One JobMaster per submitted job, created by the Dispatcher, living on the JobManager's loop. Its job
state moves only through ``_set_status`` (checked against runtime.states), and every change goes
out on the event stream.
"""
from __future__ import annotations

import asyncio
import logging
import time

from runtime import events
from runtime.checkpoint.coordinator import CheckpointCoordinator, CheckpointFailure, CompletedCheckpoint
from runtime.config import Configuration
from runtime.errors import last_line
from runtime.ha.services import JobEntries, LeadershipLost
from runtime.ids import ExecutionAttemptId, JobId, JobVertexId, TaskManagerId, TriggerId
from runtime.jobgraph import JobGraph
from runtime.jobmanager.collect import CollectBuffer
from runtime.jobmanager.execution_graph import Execution, ExecutionGraph, ExecutionJobVertex
from runtime.jobmanager.operations import OperationCache
from runtime.jobmanager.push import PushLogs
from runtime.jobmanager.gateways import AllocatedSlot, ResourceManagerGateway, TaskExecutorGateway, TaskManagerGone
from runtime.jobmanager.resource_manager import NoResourceAvailable
from runtime.jobmanager.restart import restart_strategy
from runtime.jobmanager.snapshots import FailureRecord, JobSnapshot, JobSummary, SubtaskSnapshot, VertexSnapshot
from runtime.messages import (AcknowledgeCheckpoint, CollectResult, DeclineCheckpoint, FetchPushedRows,
                              InputGateDescriptor, OutputDescriptor, ProducerLocation, PushedRows,
                              TaskDeploymentDescriptor, TaskMetrics, TaskStateChanged)
from runtime.states import ExecutionState, JobStatus, advance

log = logging.getLogger(__name__)

CANCEL_WAIT_S = 10.0
MAX_EXCEPTIONS = 100


class JobMaster:
    """Runs one job: asks the ResourceManager for slots, deploys subtasks through the gateways it hands
    out, follows their states and restarts or fails the job. Lives on the JobManager's loop."""

    def __init__(self, job_id: JobId, graph: JobGraph, conf: Configuration, rm: ResourceManagerGateway, bus,
                 working_dir: str, restore: CompletedCheckpoint | None = None, ha: JobEntries | None = None):
        self.job_id = job_id
        self.ha = ha  # this job's entries in the HA store (graph, latest checkpoint pointer)
        self.working_dir = working_dir
        self.graph = graph
        self.conf = conf
        self.resource_manager = rm
        self.bus = bus
        self.name = graph.name
        self.status = JobStatus.INITIALIZING
        self.status_times: dict[str, float] = {JobStatus.INITIALIZING.value: time.time()}
        self.start_time = time.time()
        self.end_time: float | None = None
        self.eg = ExecutionGraph(graph)
        self.restart_strategy = restart_strategy(conf)
        self.restarts = 0
        self.exceptions: list[FailureRecord] = []  # newest first
        self.results = CollectBuffer(persist_dir=ha.results_dir if ha is not None else None)
        self.push_sources = PushLogs(graph)  # rows clients push while the job runs
        self.slots: list[AllocatedSlot] = []
        self._changed = asyncio.Event()
        self._terminal = asyncio.get_running_loop().create_future()
        self._run_task: asyncio.Task | None = None
        self.checkpoints = CheckpointCoordinator(self, conf, bus, self._checkpoints_failing,
                                                 ha.publish_checkpoint if ha is not None else None, working_dir)
        self.savepoint_operations = OperationCache()
        self.checkpoint_operations = OperationCache()
        if restore is not None:
            self.checkpoints.start_from(restore)

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self._set_status(JobStatus.CREATED)
        self._run_task = asyncio.get_running_loop().create_task(self._schedule())

    async def wait(self) -> JobStatus:
        return await asyncio.shield(self._terminal)

    async def _schedule(self) -> None:
        """Get slots for every subtask, then deploy them all (streaming jobs run all tasks at once)."""
        try:
            self.slots = await self.resource_manager.request_slots(self.job_id, self.name, self.eg.max_parallelism,
                                                     self.conf.get("slot.request.timeout"))
        except NoResourceAvailable as err:
            if self.status in (JobStatus.CREATED, JobStatus.RESTARTING):
                self._record_exception(str(err), "NoResourceAvailableException", None, None)
                await self._fail_or_restart(str(err))
            return
        if self.status not in (JobStatus.CREATED, JobStatus.RESTARTING):
            self.resource_manager.free_slots(self.job_id)
            return
        self._assign_slots()
        self._set_status(JobStatus.RUNNING)
        restore = self.checkpoints.latest()
        if restore is not None:
            self.checkpoints.restore_from(restore)
        for vertex, execution in self.eg.executions():
            self._deploy(vertex, execution, restore)
        self.checkpoints.start()

    def _assign_slots(self) -> None:
        """Slot sharing: subtask i of every task goes to the job's slot i."""
        for slot in self.slots:
            names = [v.name for v in self.eg.vertices if slot.slot_index is not None and
                     self.slots.index(slot) < v.parallelism]
            self.resource_manager.assign_tasks(slot.allocation_id, names)
        for vertex, execution in self.eg.executions():
            execution.slot = self.slots[self._subtask_of(vertex, execution)]
            self._set_task_state(vertex, execution, ExecutionState.SCHEDULED)

    @staticmethod
    def _subtask_of(vertex: ExecutionJobVertex, execution: Execution) -> int:
        return next(s.subtask_index for s in vertex.subtasks if s.current is execution)

    def _deploy(self, vertex: ExecutionJobVertex, execution: Execution, restore: CompletedCheckpoint | None) -> None:
        self._set_task_state(vertex, execution, ExecutionState.DEPLOYING)
        descriptor = self._descriptor(vertex, execution)
        if restore is not None:
            descriptor.restore = restore.pointers_for({op.id for op in vertex.operators})
            descriptor.restore_checkpoint_id = restore.checkpoint_id
        try:
            execution.slot.gateway.submit_task(descriptor)
        except TaskManagerGone as err:
            self._task_failed(vertex, execution, str(err))

    def _descriptor(self, vertex: ExecutionJobVertex, execution: Execution) -> TaskDeploymentDescriptor:
        inputs = []
        for edge in vertex.inputs:
            upstream = self.eg.vertex(self.eg.op_to_vertex[edge.source])
            producers = [ProducerLocation(s.current.attempt_id, s.subtask_index, s.current.tm_id,
                                          s.current.host, s.current.data_port) for s in upstream.subtasks]
            inputs.append(InputGateDescriptor(upstream.id, edge.partitioning, producers))
        outputs = [OutputDescriptor(self.eg.op_to_vertex[e.target], e.partitioning, e.keys,
                                    self.eg.vertex(self.eg.op_to_vertex[e.target]).parallelism)
                   for e in vertex.outputs]
        return TaskDeploymentDescriptor(
            job_id=self.job_id, job_name=self.name, vertex_id=vertex.id, task_name=vertex.name,
            attempt_id=execution.attempt_id, attempt_number=execution.attempt_number,
            subtask_index=self._subtask_of(vertex, execution), parallelism=vertex.parallelism,
            max_parallelism=self.conf.get("pipeline.max-parallelism"), allocation_id=execution.allocation_id,
            operators=vertex.operators, inputs=inputs, outputs=outputs, config=self.conf.as_strings(),
            runtime_mode=self.conf.get("execution.runtime-mode"), checkpointing=self.checkpoints.periodic)

    # -- reports from TaskManagers ------------------------------------------------------------
    def update_task_execution_state(self, msg: TaskStateChanged) -> None:
        """A TaskManager reports an attempt's new state."""
        vertex, execution = self.eg.find(msg.attempt_id)
        if execution is None:
            return  # an attempt from before a restart: its news no longer matters
        try:
            target = ExecutionState(msg.state)
        except ValueError:
            log.warning("ignoring unknown task state %r from %s", msg.state, msg.attempt_id)
            return
        if execution.state == ExecutionState.CANCELING and target != ExecutionState.CANCELED:
            if target.is_terminal:  # ending otherwise while being cancelled ends it all the same
                self._set_task_state(vertex, execution, ExecutionState.CANCELED, msg.error)
            return  # progress of an attempt we already asked to stop
        if target == ExecutionState.FAILED:
            self._task_failed(vertex, execution, msg.error or "task failed without a message")
            return
        if target == ExecutionState.CANCELED and not execution.state.is_terminal:
            # Nobody asked: the TaskManager gave up the task (its slot was freed, it lost us for a moment).
            self._task_failed(vertex, execution, msg.error or f"task was cancelled on TaskManager "
                                                              f"{execution.tm_id} without a request")
            return
        if execution.state.is_terminal:
            return
        self._set_task_state(vertex, execution, target)
        if target == ExecutionState.FINISHED and self.eg.all_in(ExecutionState.FINISHED):
            self._finish(JobStatus.FINISHED)

    def report_task_metrics(self, msg: TaskMetrics) -> None:
        vertex, execution = self.eg.find(msg.attempt_id)
        if execution is None:
            return
        execution.metrics = msg
        self.bus.publish(events.TaskMetricsReported(self.job_id, vertex.id, vertex.name,
                                                    self._subtask_of(vertex, execution), msg))

    def deliver_results(self, msg: CollectResult) -> None:
        """Rows from a collect sink, kept for the client."""
        if self.eg.find(msg.attempt_id)[1] is not None:
            self.results.add(msg)

    def disconnect_task_manager(self, tm_id: TaskManagerId, reason: str) -> None:
        """The ResourceManager lost ``tm_id``: every attempt there failed."""
        for vertex, execution in list(self.eg.executions()):
            if execution.tm_id == tm_id and not execution.state.is_terminal:
                self._task_failed(vertex, execution, reason)

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

    # -- savepoints and manual checkpoints -----------------------------------------------------
    def trigger_savepoint(self, target: str | None, stop: bool, drain: bool = False) -> TriggerId:
        """Start a savepoint (and, with ``stop``, end the job after it; with ``drain``, fire every window
        first); poll the trigger id for its location."""
        try:
            future = self.checkpoints.trigger(is_savepoint=True, target=target, stop=stop, drain=drain)
        except CheckpointFailure as err:
            return self.savepoint_operations.failed(str(err))
        return self.savepoint_operations.track(future, lambda done: done.directory)

    def trigger_checkpoint(self) -> TriggerId:
        """A checkpoint now, besides the periodic ones; poll the trigger id for its checkpoint id."""
        try:
            future = self.checkpoints.trigger(is_savepoint=False)
        except CheckpointFailure as err:
            return self.checkpoint_operations.failed(str(err))
        return self.checkpoint_operations.track(future, lambda done: done.checkpoint_id)

    # -- failures, restarts, cancel -----------------------------------------------------------
    def _task_failed(self, vertex: ExecutionJobVertex, execution: Execution, error: str) -> None:
        if execution.state.is_terminal:
            return
        execution.error = error
        self._set_task_state(vertex, execution, ExecutionState.FAILED, error)
        if self.status in (JobStatus.CREATED, JobStatus.RUNNING):
            self._record_exception(error, _exception_name(error), vertex, execution)
            asyncio.get_running_loop().create_task(self._fail_or_restart(error))

    def _checkpoints_failing(self, cause: str) -> None:
        if self.status == JobStatus.RUNNING:
            self._record_exception(cause, "CheckpointException", None, None)
            asyncio.get_running_loop().create_task(self._fail_or_restart(cause))

    async def _fail_or_restart(self, cause: str) -> None:
        """Failover: decide at once (so a second failure of the same attempt joins this one), then act."""
        if self.status in (JobStatus.FAILING, JobStatus.RESTARTING, JobStatus.SUSPENDED) or self.status.is_globally_terminal:
            return
        self.checkpoints.stop()
        self.checkpoints.abort_all(f"job failover: {last_line(cause)}")
        decision = self.restart_strategy.on_failure()
        if not decision.restart:
            self._set_status(JobStatus.FAILING, cause)
            await self._cancel_executions()
            self._finish(JobStatus.FAILED, cause)
            return
        self._set_status(JobStatus.RESTARTING, cause)
        self.bus.publish(events.JobRestarting(self.job_id, self.eg.attempt + 1, cause, decision.delay_s))
        await self._cancel_executions()
        self.resource_manager.free_slots(self.job_id)
        await asyncio.sleep(decision.delay_s)
        if self.status != JobStatus.RESTARTING:
            return
        self.restarts += 1
        self.eg.attempt += 1
        self.eg.reset_attempts()
        self._set_status(JobStatus.CREATED)
        await self._schedule()

    async def cancel(self) -> None:
        """Cancel the job; returns once it is CANCELED (or already terminal)."""
        if self.status.is_globally_terminal or self.status == JobStatus.CANCELLING:
            await self.wait()
            return
        self._set_status(JobStatus.CANCELLING)
        self.checkpoints.stop()
        self.checkpoints.abort_all("job cancelled")
        self.resource_manager.cancel_requests(self.job_id)
        await self._cancel_executions()
        self._finish(JobStatus.CANCELED)

    async def _cancel_executions(self) -> None:
        """Ask every live attempt to cancel and wait (bounded) for them to stop."""
        for vertex, execution in self.eg.executions():
            if execution.state.is_terminal:
                continue
            if execution.slot is None or execution.state in (ExecutionState.CREATED, ExecutionState.SCHEDULED):
                self._set_task_state(vertex, execution, ExecutionState.CANCELED)
                continue
            try:
                execution.slot.gateway.cancel_task(execution.attempt_id)
            except TaskManagerGone:
                self._set_task_state(vertex, execution, ExecutionState.CANCELED)
                continue
            self._set_task_state(vertex, execution, ExecutionState.CANCELING)
        deadline = time.monotonic() + CANCEL_WAIT_S
        while not self.eg.all_in(ExecutionState.CANCELED, ExecutionState.FAILED, ExecutionState.FINISHED):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                break
        for vertex, execution in self.eg.executions():
            if not execution.state.is_terminal:
                self._set_task_state(vertex, execution, ExecutionState.CANCELED,
                                     "did not confirm cancellation in time")

    def suspend(self, reason: str) -> None:
        """Leadership lost: stop acting for the job at once (no deployments, checkpoints or HA writes)."""
        if not (self.status.is_globally_terminal or self.status == JobStatus.SUSPENDED):
            self._set_status(JobStatus.SUSPENDED, reason)
            self.checkpoints.stop()
            self.checkpoints.abort_all(reason)
            for pending in (self._run_task, self._terminal):  # the schedule, and whoever awaits the end
                if pending is not None:
                    pending.cancel()

    def _finish(self, status: JobStatus, cause: str | None = None) -> None:
        if self.status.is_globally_terminal or self.status == JobStatus.SUSPENDED:
            return
        self._set_status(status, cause)
        self.checkpoints.stop()
        self.checkpoints.abort_all(f"job {status.value}")
        self.checkpoints.sweep()
        self.end_time = time.time()
        self.results.finish()
        self.resource_manager.free_slots(self.job_id)
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

    # -- state bookkeeping --------------------------------------------------------------------
    def _set_status(self, status: JobStatus, cause: str | None = None) -> None:
        previous = self.status
        if previous == status:
            return
        self.status = advance(previous, status)
        self.status_times[status.value] = time.time()
        self.bus.publish(events.JobStatusChanged(self.job_id, self.name, status.value, previous.value,
                                                 self.eg.attempt, cause))
        self._changed.set()

    def _set_task_state(self, vertex: ExecutionJobVertex, execution: Execution, state: ExecutionState,
                        error: str | None = None) -> None:
        if not execution.transition(state):
            return
        self.bus.publish(events.TaskStatusChanged(
            self.job_id, vertex.id, vertex.name, self._subtask_of(vertex, execution), execution.attempt_id,
            execution.attempt_number, state.value, execution.tm_id, execution.slot_index, error))
        self._changed.set()

    def _record_exception(self, error: str, name: str, vertex, execution) -> None:
        task = f"{vertex.name} ({self._subtask_of(vertex, execution) + 1}/{vertex.parallelism})" if vertex else None
        entry = FailureRecord(name, error, time.time(), task, execution.host if execution else None,
                              execution.tm_id if execution else None, self.eg.attempt)
        self.exceptions.insert(0, entry)
        del self.exceptions[MAX_EXCEPTIONS:]

    # -- snapshots (the REST layer shows them in Flink's shapes) -------------------------------
    def summary(self) -> JobSummary:
        counts = {s: 0 for s in ExecutionState}
        for _, ex in self.eg.executions():
            counts[ex.state] += 1
        out_rate = sum(ex.metrics.records_out_per_s for v, ex in self.eg.executions() if not v.outputs and ex.metrics)
        return JobSummary(self.job_id, self.name, self.status, self.start_time, self.end_time,
                          max(self.status_times.values()), self.eg.max_parallelism, self.restarts, counts, out_rate,
                          self.conf.get("execution.runtime-mode") == "batch")

    def snapshot(self) -> JobSnapshot:
        vertices = tuple(VertexSnapshot(
            v.id, v.name, v.parallelism, self.max_parallelism, v.status(), tuple(op.name for op in v.operators),
            tuple(SubtaskSnapshot(sub.subtask_index, sub.current.state, sub.current.attempt_number,
                                  sub.current.attempt_id, sub.current.tm_id, sub.current.host, sub.current.slot_index,
                                  {ExecutionState(k): t for k, t in sub.current.state_times.items()},
                                  sub.current.metrics, sub.current.error) for sub in v.subtasks))
            for v in self.eg.vertices)
        return JobSnapshot(self.summary(), {JobStatus(k): t for k, t in self.status_times.items()}, vertices,
                           self.eg.plan(), self.max_parallelism, self.checkpoints is not None,
                           self.eg.job_graph.statement)


def _exception_name(error: str) -> str:
    """The exception class from the last line of a Python traceback, for Flink's ``exceptionName``."""
    head = last_line(error).split(":", 1)[0].strip()
    return head if head.replace(".", "").replace("_", "").isalnum() and " " not in head else "TaskFailure"

