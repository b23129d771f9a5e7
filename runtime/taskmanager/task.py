"""One subtask attempt running in a TaskManager slot.

A task runs its chain of operators bundle by bundle: a source chain reads a bounded offset range,
extends the Spark plan with the chained operators and takes the rows out once as Arrow; a chain fed
by other tasks reads Arrow batches from its input gate and runs them through the same kind of plan.
The chain ends in a sink or in output partitions that other tasks read.

The task's coroutine runs on the TaskManager's loop; every Spark call goes to the thread pool via
:meth:`Task.run_blocking`. States go to the JobManager as TaskStateChanged; a failure carries the
Python traceback.
"""
from __future__ import annotations

import asyncio
import logging
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import pyarrow as pa

from runtime.connectors.base import ConnectorContext, ConnectorError, SinkWriter, source_reader, sink_writer
from runtime.jobgraph import OperatorSpec, unpack_udf
from runtime.keygroups import KEY_GROUP_COLUMN, key_group_sql
from runtime.messages import EndOfPartition, TaskDeploymentDescriptor, TaskMetrics, TaskStateChanged
from runtime.taskmanager.network import InputGate, ResultPartition, split_for_output

log = logging.getLogger(__name__)

METRICS_INTERVAL_S = 1.0
STATELESS_KINDS = ("select", "filter", "with_columns", "map", "flat_map")


class OperatorError(RuntimeError):
    """An operator that cannot run as configured; the message names it."""


@dataclass
class ChainedOperator:
    """A stateless operator ready to extend a Spark plan."""
    spec: OperatorSpec
    fn: Callable | None

    def transform(self, spark, df):
        try:
            return spark.apply(df, self.spec.kind, self.spec.params, self.fn)
        except ValueError as err:
            raise OperatorError(f"operator '{self.spec.name}' ({self.spec.kind}): {err}") from None


class TaskMetricsTracker:
    """Counters for one task, reported to the JobManager about once a second."""

    def __init__(self):
        self.records_in = self.records_out = self.bytes_in = self.bytes_out = self.bundles = 0
        self.bundle_time_s = 0.0
        self.watermark: float | None = None
        self._last = (time.monotonic(), 0, 0)
        self.sent_to: dict[str, int] = {}

    def snapshot(self, job_id, attempt_id, backpressure: float) -> TaskMetrics:
        now = time.monotonic()
        then, rin, rout = self._last
        span = max(now - then, 1e-6)
        self._last = (now, self.records_in, self.records_out)
        return TaskMetrics(job_id, attempt_id, self.records_in, self.records_out, self.bytes_in, self.bytes_out,
                           (self.records_in - rin) / span, (self.records_out - rout) / span, backpressure,
                           self.watermark, self.bundle_time_s, self.bundles, dict(self.sent_to))


class Task:
    def __init__(self, tdd: TaskDeploymentDescriptor, tm):
        self.tdd = tdd
        self.tm = tm
        self.metrics = TaskMetricsTracker()
        self.partitions: list[ResultPartition] = []
        self.gates: list[InputGate] = []
        self.sink: SinkWriter | None = None
        self._runner: asyncio.Task | None = None
        self._cancelled = False

    @property
    def attempt_id(self):
        return self.tdd.attempt_id

    @property
    def spark(self):
        return self.tm.spark

    # -- lifecycle ----------------------------------------------------------------------------
    async def run(self) -> None:
        self._runner = asyncio.current_task()
        reporter = asyncio.get_running_loop().create_task(self._report_metrics())
        try:
            self._report("INITIALIZING")
            await self._prepare()
            self._report("RUNNING")
            if self.tdd.operators[0].kind == "source":
                await self._run_source()
            else:
                await self._run_inputs()
            await self._finish_outputs()
            self._send_metrics()
            self._report("FINISHED")
        except asyncio.CancelledError:
            self._report("CANCELED")
        except Exception as err:  # noqa: BLE001 - every failure is reported, none kills the TaskManager
            if self._cancelled:
                self._report("CANCELED")
            else:
                log.warning("task %s failed: %s", self.tdd.task_name, err)
                self._report("FAILED", _describe_failure(err))
        finally:
            reporter.cancel()
            await self._close()

    def cancel(self) -> None:
        self._cancelled = True
        if self._runner and not self._runner.done():
            self._runner.cancel()

    async def run_blocking(self, fn: Callable, *args) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.tm.executor, fn, *args)

    # -- setup --------------------------------------------------------------------------------
    async def _prepare(self) -> None:
        ops = self.tdd.operators
        self.chain = [ChainedOperator(op, self._load_udf(op)) for op in ops if op.kind in STATELESS_KINDS]
        unknown = [op for op in ops if op.kind not in STATELESS_KINDS + ("source", "sink")]
        if unknown:
            raise OperatorError(f"operator '{unknown[0].name}': kind {unknown[0].kind!r} is not supported")
        await self.tm.spark_ready
        if ops[0].kind == "source":
            self.reader = source_reader(self._context(ops[0]))
        if ops[-1].kind == "sink":
            self.sink = sink_writer(self._context(ops[-1]))
        for out in self.tdd.outputs:
            partition = ResultPartition(self.attempt_id, out.num_consumers, self.tm.conf.get("taskmanager.network.credits"))
            self.tm.data_server.register(partition)
            self.partitions.append(partition)
        for gate in self.tdd.inputs:
            self.gates.append(InputGate(gate.producers, self.tdd.subtask_index, self.attempt_id, self.tm.token,
                                        self.tm.conf.get("taskmanager.network.credits")))
        for gate in self.gates:
            await gate.connect()

    def _load_udf(self, op: OperatorSpec):
        if not op.udf:
            return None
        try:
            return unpack_udf(op.udf)
        except RuntimeError as err:
            raise OperatorError(f"operator '{op.name}': {err}") from None

    def _context(self, op: OperatorSpec) -> ConnectorContext:
        return ConnectorContext(op.id, op.name, self.tdd.subtask_index, self.tdd.parallelism, op.params,
                                self.spark, self.tm.send, self.tdd.job_id, self.attempt_id, self.tdd.runtime_mode,
                                self.run_blocking)

    # -- the data path ------------------------------------------------------------------------
    async def _run_source(self) -> None:
        target = self.tm.conf.get("taskmanager.bundle.target-time")
        max_rows = self.tm.conf.get("taskmanager.bundle.max-rows")
        min_rows = self.tm.conf.get("taskmanager.bundle.min-rows")
        size = min_rows
        started = time.monotonic()
        finished = False
        while not finished:
            allowed = self.reader.rows_allowed_now(time.monotonic() - started)
            want = size
            if allowed is not None:
                want = min(size, allowed - self.metrics.records_in)
                if want <= 0:
                    await asyncio.sleep(min(target, 0.05))
                    continue
            t0 = time.monotonic()
            table, finished, rows_read = await self.run_blocking(self._source_bundle, want)
            self.metrics.records_in += rows_read
            await self._emit(table)
            self._bundle_done(t0)
            size = _next_bundle_size(size, time.monotonic() - t0, target, min_rows, max_rows)

    def _source_bundle(self, rows: int):
        """Blocking: one bundle through the chain as a single Spark plan, out as Arrow."""
        df, read, finished = self.reader.next_bundle(rows)
        if df is None:
            return None, finished, 0
        return self._collect(self._plan(df)), finished, read

    async def _run_inputs(self) -> None:
        gate = self.gates[0]
        while True:
            item = await gate.next()
            if item is None:
                return
            _, payload = item
            if isinstance(payload, pa.Table):
                t0 = time.monotonic()
                self.metrics.records_in += payload.num_rows
                self.metrics.bytes_in += payload.nbytes
                table = await self.run_blocking(self._table_bundle, payload) if self.chain else payload
                await self._emit(table)
                self._bundle_done(t0)

    def _table_bundle(self, table: pa.Table) -> pa.Table:
        return self._collect(self._plan(self.spark.from_arrow(table)))

    def _plan(self, df):
        for op in self.chain:
            df = op.transform(self.spark, df)
        return df

    def _collect(self, df) -> pa.Table:
        """Take the bundle out of Spark, adding the key group column when the output is keyed."""
        for out in self.tdd.outputs:
            if out.partitioning == "hash":
                from pyspark.sql import functions as F

                missing = [k for k in out.keys if k not in df.columns]
                if missing:
                    raise OperatorError(f"key_by into task after '{self.tdd.task_name}': no column {missing}; "
                                        f"available: {df.columns}")
                df = df.withColumn(KEY_GROUP_COLUMN, F.expr(key_group_sql(out.keys, self.tdd.max_parallelism)))
                break
        try:
            return self.spark.to_arrow(df)
        except Exception as err:  # noqa: BLE001 - translate Spark's analysis errors
            if type(err).__name__ == "AnalysisException":
                raise OperatorError(f"task '{self.tdd.task_name}': {str(err).splitlines()[0]}") from None
            raise

    async def _emit(self, table: pa.Table | None) -> None:
        if table is None:
            return
        self.metrics.records_out += table.num_rows
        self.metrics.bytes_out += table.nbytes
        if self.sink is not None:
            if KEY_GROUP_COLUMN in table.column_names:
                table = table.drop_columns([KEY_GROUP_COLUMN])
            await self.sink.write(table)
        for partition, out in zip(self.partitions, self.tdd.outputs):
            pieces = split_for_output(table, out.partitioning, out.num_consumers, self.tdd.subtask_index,
                                      self.tdd.max_parallelism, partition)
            for channel, piece in pieces.items():
                await partition.emit(channel, piece)

    def _bundle_done(self, t0: float) -> None:
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
            self.tm.data_server.unregister(partition)
        for gate in self.gates:
            await gate.close()

    # -- reporting ----------------------------------------------------------------------------
    def _report(self, state: str, error: str | None = None) -> None:
        self.tm.send(TaskStateChanged(self.tdd.job_id, self.attempt_id, state, error))

    def _send_metrics(self) -> None:
        backpressure = max((p.backpressure_ratio() for p in self.partitions), default=0.0)
        for partition in self.partitions:
            self.metrics.sent_to = partition.records_by_subpartition()
        self.tm.send(self.metrics.snapshot(self.tdd.job_id, self.attempt_id, backpressure))

    async def _report_metrics(self) -> None:
        while True:
            await asyncio.sleep(METRICS_INTERVAL_S)
            self._send_metrics()


def _next_bundle_size(size: int, took: float, target: float, lo: int, hi: int) -> int:
    """Grow bundles while they finish faster than the target time, shrink them when slower."""
    if took < target / 2:
        return min(hi, size * 2)
    if took > target * 2:
        return max(lo, size // 2)
    return size


def _describe_failure(err: BaseException) -> str:
    """The Python traceback of a failure; Spark's Python worker errors already carry the user's."""
    if isinstance(err, (OperatorError, ConnectorError)):
        return f"{type(err).__name__}: {err}"
    return "".join(traceback.format_exception(type(err), err, err.__traceback__))
