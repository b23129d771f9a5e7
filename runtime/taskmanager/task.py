"""One subtask attempt running in a TaskManager slot.

A task runs its operator chain (runtime.taskmanager.chain) bundle by bundle: a source task reads a
bounded offset range into a Spark plan; a task fed by other tasks reads Arrow batches from its input
gate. What comes out goes to a sink or to result partitions that other tasks read.

Event time: a chain with a watermark operator makes watermarks from the event times its bundles
carry; other tasks take the minimum over their input channels. An advancing watermark fires windows
and event-time timers and is passed downstream. Processing-time timers (keyed process functions, which
always sit behind a hash exchange, so only in tasks with inputs) fire while the task waits for input.

Checkpoints (Flink's aligned barriers): a source task snapshots its offsets at a bundle boundary and
sends a barrier on every output; a task with inputs holds back each channel that delivered the
barrier until all have, then snapshots and forwards it. State goes to checkpoint storage on a
separate thread so processing goes on during the upload; then the task acknowledges. With incremental
checkpoints the task remembers what its last completed checkpoint holds and uploads only the key
groups that changed since (runtime.taskmanager.snapshot_uploads, runtime.checkpoint.incremental).

A task sees its TaskManager only through :class:`~runtime.taskmanager.services.TaskServices` (send,
request, thread pools, data port and input gates, the Spark session, configuration). Its coroutine runs
on the TaskManager's loop; Spark calls run in the thread pool via :meth:`Task.run_blocking`. States go to
the JobManager as TaskStateChanged; a failure carries the Python traceback.

A task's life (the JobMaster's view of the same states is runtime.states)::

    deployed --run()--> INITIALIZING: chain built, result partitions registered, Spark session awaited,
       |                connectors opened, state restored (tdd.restore), input gate connected
       |                             |
       |                             v
       |                          RUNNING: source loop or input loop; barriers -> snapshot, forward,
       |                             |     upload in the background, acknowledge (or decline);
       |                             |     notify complete / aborted -> sink commits / aborts
       |        end of input, or the stop-with-savepoint barrier (then its savepoint completed)
       |                             v
       |                          pending uploads acknowledged --> FINISHED
       |
       +--cancel() (CancelTask, FreeSlot, lost JobManager) at any step --> CANCELED
       +--an exception at any step (operator, connector, Spark, lost input) --> FAILED, with its traceback

"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any
from collections.abc import Callable

import pyarrow as pa

from runtime.connectors.base import ConnectorContext
from runtime.connectors.registry import sink_writer, source_reader
from runtime.errors import ConnectorError, format_traceback
from runtime.keygroups import KEY_GROUP_COLUMN, KeyGroupRange
from runtime.data_messages import CheckpointBarrier, EndOfPartition, Watermark
from runtime.messages import TaskDeploymentDescriptor, TaskStateChanged, TriggerCheckpoint
from runtime.spark_stages import DRIVER_PHASE
from runtime.states import ExecutionState
from runtime.checkpoint.task_state import read_restored, take_snapshot
from runtime.taskmanager.chain import OperatorChain, OperatorError
from runtime.taskmanager.input_loop import InputLoop
from runtime.taskmanager.metrics import TaskMetricsTracker
from runtime.taskmanager.network import ResultPartition
from runtime.taskmanager.partitioning import split_for_output
from runtime.taskmanager.services import TaskServices
from runtime.taskmanager.snapshot_uploads import SnapshotUploads
from runtime.taskmanager.source_loop import BundleSizing, SourceLoop
from runtime.taskmanager.spark import SparkRunner
from runtime.taskmanager.watermarks import to_wire
from runtime.taskmanager.window_operator import BEFORE_TIME, END_OF_TIME

log = logging.getLogger(__name__)

METRICS_INTERVAL_S = 1.0


class Task:
    """One deployed subtask attempt: sets up its chain, connectors and exchange, runs its source loop
    or its input loop, snapshots on barriers and reports its state; runs on the TaskManager's loop."""

    def __init__(self, tdd: TaskDeploymentDescriptor, services: TaskServices):
        self.tdd = tdd
        self.services = services
        self.metrics = TaskMetricsTracker()
        self.partitions: list[ResultPartition] = []
        self.input_loop: InputLoop | None = None
        self.reader = None
        self.sink = None
        self.chain: OperatorChain | None = None
        self.output_watermark = BEFORE_TIME
        self.source_loop = SourceLoop(self, BundleSizing.from_conf(services.conf))
        self.stopped_at: int | None = None  # the stop-with-savepoint checkpoint this task ended with
        self.uploads = SnapshotUploads(tdd, services, self.metrics, lambda: self._cancelled)
        self._stop_outcome: asyncio.Future | None = None
        self._runner: asyncio.Task | None = None
        self._cancelled = False

    @property
    def attempt_id(self):
        return self.tdd.attempt_id

    @property
    def spark(self) -> SparkRunner:
        return self.services.spark

    @property
    def is_source(self) -> bool:
        return self.tdd.operators[0].kind == "source"

    # -- lifecycle ----------------------------------------------------------------------------
    async def run(self) -> None:
        self._runner = asyncio.current_task()
        reporter = asyncio.get_running_loop().create_task(self._report_metrics())
        try:
            self._report(ExecutionState.INITIALIZING)
            await self._prepare()
            self.metrics.start()
            self._report(ExecutionState.RUNNING)
            if self.is_source:
                await self.source_loop.run()
            elif self.input_loop is not None:
                await self.input_loop.run()
            if self.stopped_at is None:
                await self._finish_outputs()
            else:
                await self._await_stop_savepoint()
            # FINISHED only once every snapshot is written and acknowledged (as in Flink): one written
            # after its job ended would be left for nobody to delete.
            await self.uploads.all_written()
            self._send_metrics()
            self._report(ExecutionState.FINISHED)
        except asyncio.CancelledError:
            self._report(ExecutionState.CANCELED)
        except Exception as err:  # noqa: BLE001 - every failure is reported, none kills the TaskManager
            if self._cancelled:
                self._report(ExecutionState.CANCELED)
            else:
                log.warning("task %s failed: %s", self.tdd.task_name, err)
                self.spark.task_failed()
                self._report(ExecutionState.FAILED, _describe_failure(err))
        finally:
            reporter.cancel()
            await self._close()

    def cancel(self) -> None:
        self._cancelled = True
        if self._runner and not self._runner.done():
            self._runner.cancel()

    async def run_blocking(self, fn: Callable, *args) -> Any:
        """``fn(*args)`` on the TaskManager's pool; the time it waits there for a thread counts as schedule_wait."""
        queued = time.monotonic()

        def timed():
            self.metrics.phases.add("schedule_wait", time.monotonic() - queued)
            self.services.spark_work.enter(self.tdd)
            return fn(*args)

        return await self.services.run_blocking(timed)

    # -- setup --------------------------------------------------------------------------------
    async def _prepare(self) -> None:
        ops = self.tdd.operators
        # the job's shipped Python files and packages, on the path before its functions load
        environment = await self.run_blocking(self.services.python_environments.prepare, self.tdd.python_dependencies)
        self.chain = OperatorChain.build(ops, self.tdd.outputs, self.tdd.max_parallelism, environment)
        self.chain.phases = self.metrics.phases
        # Partitions first: consumers may ask for them while this TaskManager's Spark is still starting.
        for out in self.tdd.outputs:  # one partition per consuming vertex
            partition = ResultPartition(self.attempt_id, out.num_consumers,
                                        self.services.conf.get("taskmanager.network.credits"), out.downstream_vertex)
            self.services.register_partition(partition)
            self.partitions.append(partition)
        await self.services.spark_ready()
        if self.is_source:
            self.reader = source_reader(self._context(ops[0]))
        if ops[-1].kind == "sink":
            self.sink = sink_writer(self._context(ops[-1]))
        if self.tdd.restore:
            await self._restore()
        producers = [p for gate in self.tdd.inputs for p in gate.producers]
        if producers:
            gate = await self.services.connect_inputs(producers, self.tdd.subtask_index, self.attempt_id,
                                                      self.tdd.vertex_id)
            self.input_loop = InputLoop(self, gate, self.services.conf.get("taskmanager.bundle.max-rows"))

    def _context(self, op) -> ConnectorContext:
        return ConnectorContext(op.id, op.name, self.tdd.subtask_index, self.tdd.parallelism, op.params,
                                self.spark, self.services.send, self.tdd.job_id, self.attempt_id,
                                self.tdd.runtime_mode, self.run_blocking, self.tdd.checkpointing, self.services.request)

    async def _restore(self) -> None:
        """Load the snapshots of every old subtask that ran one of our operators and hand each its part."""
        sources, sinks, keyed = await self.run_blocking(read_restored, self.tdd, self.reader is not None, self.sink is not None)
        if sources:
            self.reader.restore(sources)
        if self.sink is not None:  # on the loop: restoring a sink may send to the JobManager
            mine = [s for s in sinks if s[0] % self.tdd.parallelism == self.tdd.subtask_index]
            self.sink.restore(mine, self.tdd.restore_checkpoint_id)
        kg = KeyGroupRange.for_operator(self.tdd.max_parallelism, self.tdd.parallelism, self.tdd.subtask_index)
        for stage in self.chain.stateful:
            await self.run_blocking(stage.operator.restore, keyed.get(stage.op.id, []), range(kg.start, kg.end + 1))

    def trigger_checkpoint(self, trigger: TriggerCheckpoint) -> None:
        """From the JobManager, for source tasks: taken at the next bundle boundary."""
        self.source_loop.trigger(trigger)

    async def advance_watermark(self, watermark: int | None) -> None:
        """Fire what the new watermark completes, then pass it on."""
        if watermark is None or watermark <= self.output_watermark:
            return
        self.output_watermark = watermark
        if self.chain.stateful:
            for table in await self.run_blocking(self.chain.on_watermark, self.spark, watermark):
                await self.emit(table)
        passed_on = self.chain.output_watermark(watermark)
        if passed_on != END_OF_TIME:
            self.metrics.watermark = to_wire(passed_on)
            for partition in self.partitions:
                await partition.broadcast_event(Watermark(to_wire(passed_on)))

    async def _await_stop_savepoint(self) -> None:
        """A task stopped by a savepoint ends only once that savepoint is complete, after its sink committed."""
        if self._stop_outcome is None:
            self._stop_outcome = asyncio.get_running_loop().create_future()
        if not await self._stop_outcome:
            raise RuntimeError(f"stop-with-savepoint {self.stopped_at} did not complete; the job goes on from "
                               "its last checkpoint")

    # -- snapshots ----------------------------------------------------------------------------
    async def checkpoint(self, barrier: CheckpointBarrier) -> None:
        """Snapshot now (in memory, between bundles), forward the barrier, upload in the background."""
        await self.advance_watermark(END_OF_TIME if barrier.drain else None)  # stop with drain: all fires first
        meta, tables = take_snapshot(self.tdd, self.reader, self.sink, self.chain.stateful, barrier.checkpoint_id)
        for partition in self.partitions:
            await partition.broadcast_event(barrier)
        self.uploads.start(barrier, meta, tables)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        for listener in (self.reader, self.sink):  # a source may acknowledge its position, a sink commits
            if listener is not None:
                listener.notify_checkpoint_complete(checkpoint_id)
        self.uploads.completed(checkpoint_id)
        self._settle_stop(checkpoint_id, True)

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        if self.sink is not None:
            self.sink.abort(checkpoint_id)
        self.uploads.aborted(checkpoint_id)
        self._settle_stop(checkpoint_id, False)

    def _settle_stop(self, checkpoint_id: int, completed: bool) -> None:
        if self.stopped_at is not None and checkpoint_id >= self.stopped_at:
            if self._stop_outcome is None:
                self._stop_outcome = asyncio.get_running_loop().create_future()
            if not self._stop_outcome.done():
                self._stop_outcome.set_result(completed)

    # -- output -------------------------------------------------------------------------------
    async def emit(self, table: pa.Table | None) -> None:
        if table is None or table.num_rows == 0:
            return
        self.metrics.records_out += table.num_rows
        self.metrics.bytes_out += table.nbytes
        phases = self.metrics.phases
        if self.sink is not None:
            if KEY_GROUP_COLUMN in table.column_names:
                table = table.drop_columns([KEY_GROUP_COLUMN])
            with phases.phase("sink_write"):
                await self.sink.write(table)
        for partition, out in zip(self.partitions, self.tdd.outputs):
            with phases.phase("exchange_send"):
                pieces = split_for_output(table, out.partitioning, out.num_consumers, self.tdd.subtask_index,
                                          self.tdd.max_parallelism, partition)
                for channel, piece in pieces.items():
                    await partition.emit(channel, piece)

    def blocked_seconds(self) -> float:
        """Seconds this task's outputs have waited for consumers' credit since it started."""
        return sum(p.blocked_seconds() for p in self.partitions)

    def bundle_done(self, t0: float) -> None:
        self.metrics.bundles += 1
        self.metrics.bundle_time_s = time.monotonic() - t0

    async def _finish_outputs(self) -> None:
        for partition in self.partitions:
            await partition.broadcast_event(EndOfPartition())
            await partition.drained()
        if self.sink is not None:
            await self.sink.close()

    async def _close(self) -> None:
        for partition in self.partitions:
            self.services.unregister_partition(partition)
        if self.input_loop is not None:
            await self.input_loop.gate.close()

    # -- reporting ----------------------------------------------------------------------------
    def _report(self, state: ExecutionState, error: str | None = None) -> None:
        self.services.send(TaskStateChanged(self.tdd.job_id, self.attempt_id, state, error))

    def _send_metrics(self) -> None:
        backpressure = max((p.backpressure_ratio() for p in self.partitions), default=0.0)
        for partition in self.partitions:
            self.metrics.sent_to = partition.records_by_subpartition()
        late, state_rows = (self.chain.late_records, self.chain.state_rows) if self.chain else (0, 0)
        report = self.metrics.snapshot(self.tdd.job_id, self.attempt_id, backpressure, late, state_rows, self.blocked_seconds())
        driver_ms = round(report.phase_s.get(DRIVER_PHASE, 0.0) * 1000)
        report.spark = self.services.spark_work.take(self.attempt_id, asyncio.get_running_loop(),
                                                     report.accumulated_busy_ms, driver_ms)
        self.services.send(report)

    async def _report_metrics(self) -> None:
        while True:
            await asyncio.sleep(METRICS_INTERVAL_S)
            self._send_metrics()


def _describe_failure(err: BaseException) -> str:
    """The Python traceback of a failure; Spark's Python worker errors already carry the user's."""
    if isinstance(err, (OperatorError, ConnectorError)):
        return f"{type(err).__name__}: {err}"
    return format_traceback(err)
