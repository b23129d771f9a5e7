"""The loop of a task fed by other tasks: read its input gate, run what arrives through the chain,
emit the result, align checkpoint barriers across the inputs (Flink's aligned checkpoints).

Tables that have already arrived are gathered into one bundle (one Spark plan) up to
``taskmanager.bundle.max-rows``. Watermarks of the inputs go through a valve that passes on their
minimum; a barrier holds its channel back until every input delivered it, then the task snapshots and
the channels go on. Processing-time timers (keyed process functions) fire while the loop waits for
input. Runs on the TaskManager's loop; Spark work runs in the task's thread pool.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

import pyarrow as pa

from runtime.data_messages import CheckpointBarrier, EndOfPartition, Watermark
from runtime.taskmanager.barriers import BarrierAligner
from runtime.taskmanager.input_gate import InputGate
from runtime.taskmanager.metrics import TaskMetricsTracker
from runtime.taskmanager.watermarks import WatermarkValve, from_wire


class InputTask(Protocol):
    """What the input loop needs of its task (runtime.taskmanager.task.Task); the source loop needs this too."""

    chain: Any
    metrics: TaskMetricsTracker
    stopped_at: int | None

    @property
    def spark(self) -> Any: ...

    async def run_blocking(self, fn: Callable, *args) -> Any: ...

    async def emit(self, table: pa.Table | None) -> None: ...

    async def advance_watermark(self, watermark: int | None) -> None: ...

    def bundle_done(self, t0: float) -> None: ...

    async def checkpoint(self, barrier: CheckpointBarrier) -> None: ...


class InputLoop:
    """Drives one task with inputs until every input ended or a stop-with-savepoint barrier stops it."""

    def __init__(self, task: InputTask, gate: InputGate, max_rows: int):
        self.task, self.gate, self.max_rows = task, gate, max_rows
        self.valve = WatermarkValve(len(gate.channels))
        self.aligner = BarrierAligner()

    async def run(self) -> None:
        waiting = None  # an event met while gathering tables; handled right after them
        while True:
            item = waiting or await self._next_input()
            waiting = None
            if item is None:
                return
            channel, payload = item
            if isinstance(payload, pa.Table):
                self.task.metrics.phases.add("input_wait", time.monotonic() - self.gate.last_arrival)
                table, waiting = self.gate.gather(payload, self.max_rows)
                await self._on_table(table)
            elif isinstance(payload, Watermark):
                update = (self.valve.mark_idle(channel) if payload.idle
                          else self.valve.update(channel, from_wire(payload.timestamp)))
                await self._on_input_watermark(update)
            elif isinstance(payload, CheckpointBarrier):
                if await self._on_barrier(channel, payload):
                    return
            elif isinstance(payload, EndOfPartition):
                await self._on_input_watermark(self.valve.finish(channel))
                if self.aligner.barrier is not None and self.aligner.complete(self.gate):
                    await self._aligned()

    async def _next_input(self):
        """The gate's next item; processing-time timers falling due before it arrives fire meanwhile."""
        task = self.task
        while True:
            delay = task.chain.processing_timer_delay()
            if delay is None:
                with task.metrics.idle():
                    return await self.gate.next()
            if delay > 0:
                try:
                    with task.metrics.idle():
                        return await asyncio.wait_for(self.gate.next(), delay)  # gate.next() is safe to cancel
                except asyncio.TimeoutError:
                    pass
            for table in await task.run_blocking(task.chain.on_processing_time, task.spark):
                await task.emit(table)

    async def _on_table(self, table: pa.Table) -> None:
        task, t0 = self.task, time.monotonic()
        task.metrics.records_in += table.num_rows
        task.metrics.bytes_in += table.nbytes
        out = await task.run_blocking(task.chain.process, task.spark, table) if task.chain.runs_in_spark else table
        await task.emit(out)
        if task.chain.assigner is not None:
            await task.advance_watermark(task.chain.assigner.current)
        task.bundle_done(t0)

    async def _on_input_watermark(self, watermark: int | None) -> None:
        if watermark is not None and self.task.chain.assigner is None:
            await self.task.advance_watermark(watermark)

    async def _on_barrier(self, channel: int, barrier: CheckpointBarrier) -> bool:
        """Align: hold back ``channel`` until every input delivered this barrier. True to stop the task."""
        return await self._aligned() if self.aligner.arrive(channel, barrier, self.gate) else False

    async def _aligned(self) -> bool:
        barrier = self.aligner.barrier
        assert barrier is not None
        self.aligner.reset()
        await self.task.checkpoint(barrier)
        self.gate.unblock_all()
        if barrier.stop:
            self.task.stopped_at = barrier.checkpoint_id
        return barrier.stop
