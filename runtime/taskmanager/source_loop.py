"""The loop of a source task: read a bundle, run it through the chain, emit it, take checkpoints
at bundle boundaries (a source has no barriers to wait for: the JobManager's trigger is its barrier).

Bundles are sized to take about ``taskmanager.bundle.target-time`` each (runtime.taskmanager.bundles);
a rate-limited source never runs further ahead of its pace than its burst allows. Runs on the
TaskManager's loop; each bundle's Spark work runs in the task's thread pool.
"""
from __future__ import annotations

import asyncio
import collections
import time
from dataclasses import dataclass
from typing import Any, Protocol


from runtime.config import Configuration
from runtime.connectors.base import ConnectorError
from runtime.data_messages import CheckpointBarrier, Watermark
from runtime.messages import TaskDeploymentDescriptor, TriggerCheckpoint
from runtime.taskmanager.bundles import (backpressured_bundle_size, burst_rows, first_bundle_size, next_bundle_size,
                                         wait_before_reading)
from runtime.taskmanager.input_loop import InputTask
from runtime.taskmanager.network import ResultPartition
from runtime.taskmanager.watermarks import to_wire
from runtime.taskmanager.window_operator import END_OF_TIME


class SourceTask(InputTask, Protocol):
    """What the source loop needs of its task (runtime.taskmanager.task.Task): what the input loop needs,
    and its source reader, outputs and their backpressure."""

    tdd: TaskDeploymentDescriptor
    reader: Any
    partitions: list[ResultPartition]
    output_watermark: int

    def blocked_seconds(self) -> float: ...


@dataclass(frozen=True)
class BundleSizing:
    """How big a source's bundles may be: the time one should take, its bounds in rows, and how long a paced
    source waits to fill one."""
    target_s: float
    min_rows: int
    max_rows: int
    max_wait_s: float  # longest a rate-limited source lets its due rows wait to fill a bundle of min_rows

    @classmethod
    def from_conf(cls, conf: Configuration) -> BundleSizing:
        return cls(conf.get("taskmanager.bundle.target-time"), conf.get("taskmanager.bundle.min-rows"),
                   conf.get("taskmanager.bundle.max-rows"), conf.get("taskmanager.bundle.max-wait"))


class SourceLoop:
    """Drives one source task; the checkpoints the JobManager triggers wait here for a bundle boundary."""

    def __init__(self, task: SourceTask, sizing: BundleSizing):
        self.task, self.sizing = task, sizing
        self._triggers: collections.deque[TriggerCheckpoint] = collections.deque()

    def trigger(self, trigger: TriggerCheckpoint) -> None:
        self._triggers.append(trigger)

    async def run(self) -> None:
        """Until the source is exhausted (then the watermark jumps to the end of time) or a
        stop-with-savepoint stops it (then it does not: the job resumes from the savepoint). However it
        ends, the reader then closes, in a thread of its own (cancelled, a read may still be running)."""
        try:
            await self._run()
        finally:
            await asyncio.to_thread(self.task.reader.close)

    async def _run(self) -> None:
        task = self.task
        target, max_rows, min_rows = self.sizing.target_s, self.sizing.max_rows, self.sizing.min_rows
        # a paced source skips what is more than its burst behind: it must not wait longer to fill a bundle
        floor, max_wait = min(min_rows, burst_rows(task.reader)), min(self.sizing.max_wait_s,
                                                                        task.reader.max_burst_s or float("inf"))
        size = first_bundle_size(task.reader.rate, target, min_rows, max_rows)
        overhead = None  # the quickest bundle so far: what one Spark action costs
        started, emitted, finished = time.monotonic(), 0, False
        last_read = started
        while not finished:
            if await self._take_checkpoints():
                return
            allowed = task.reader.rows_allowed_now(time.monotonic() - started)
            if allowed is not None:
                emitted = max(emitted, allowed - burst_rows(task.reader))
            want = size if allowed is None else min(size, allowed - emitted)
            task.metrics.pending_records = None if allowed is None else max(0, allowed - emitted)
            pause = 0.0 if allowed is None else wait_before_reading(want, floor, time.monotonic() - last_read,
                                                                      max_wait, task.reader.rate)
            if pause > 0:
                await self._idle(max(0.01, pause))
                continue
            t0, blocked0 = time.monotonic(), self.task.blocked_seconds()
            last_read = t0
            table, finished, rows_read = await task.run_blocking(self._bundle, want)
            if rows_read is None:  # the reader cannot tell before the action: count what came out
                rows_read = table.num_rows if table is not None else 0
            emitted += rows_read
            task.metrics.records_in += rows_read
            if rows_read == 0 and not finished:
                await self._idle(min(target, 0.1))  # nothing new yet (a watched directory, a push source)
                continue
            await task.emit(table)
            await task.advance_watermark(task.chain.assigner.current if task.chain.assigner else None)
            task.bundle_done(t0)
            # The bundle's cost leaves out the wait for consumers' credit (counted, it would make every
            # bundle mostly fixed cost and the source burn CPU its slow consumers need); that wait
            # instead caps the size at what the consumers take.
            elapsed, blocked = time.monotonic() - t0, self.task.blocked_seconds() - blocked0
            took = elapsed - blocked
            overhead = took if overhead is None else min(overhead, took)
            size = next_bundle_size(size, took, target, min_rows, max_rows, overhead)
            if blocked > 0:
                size = backpressured_bundle_size(size, rows_read, elapsed, target, min_rows)
        await task.advance_watermark(END_OF_TIME)

    def _bundle(self, rows: int):
        """Blocking: one bundle through the chain as one Spark plan, out as Arrow."""
        task = self.task
        try:
            with task.metrics.phases.phase("source_plan"):
                df, read, finished = task.reader.next_bundle(rows)
        except ValueError as err:  # bad connector options surface here, at the first read
            raise ConnectorError(f"source '{task.tdd.operators[0].name}': {err}") from None
        if df is None:
            return None, finished, 0
        return task.chain.process(task.spark, df), finished, read

    async def _take_checkpoints(self) -> bool:
        """At a bundle boundary: snapshot and send barriers for triggered checkpoints; True to stop."""
        while self._triggers:
            trigger = self._triggers.popleft()
            barrier = CheckpointBarrier(trigger.checkpoint_id, trigger.timestamp, trigger.is_savepoint,
                                        trigger.target, trigger.stop, trigger.drain, trigger.full)
            await self.task.checkpoint(barrier)
            if barrier.stop:
                self.task.stopped_at = barrier.checkpoint_id
                return True
        return False

    async def _idle(self, pause: float) -> None:
        """No rows for now: tell consumers the source is idle (if its watermark says so), then wait."""
        task = self.task
        assigner = task.chain.assigner
        if assigner is not None and assigner.is_idle():
            for partition in task.partitions:
                await partition.broadcast_event(Watermark(to_wire(task.output_watermark), idle=True))
        with task.metrics.idle():
            await asyncio.sleep(pause)
