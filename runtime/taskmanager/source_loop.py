"""The loop of a source task: read a bundle, run it through the chain, emit it, take checkpoints
at bundle boundaries (a source has no barriers to wait for: the JobManager's trigger is its barrier).

Bundles are sized to take about ``taskmanager.bundle.target-time`` each (runtime.taskmanager.bundles);
a rate-limited source never runs further ahead of its pace than its burst allows, waits for a bundle's floor
of rows between reads (idle time), reads its first bundle as soon as rows are due (its plan's one-time work
then overlaps the next rows' arrival), and takes a checkpoint triggered while it waits at once. Runs on the
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


class Pace:
    """Where a source stands against its pace and the cost of its bundles: what to read next, and when."""

    def __init__(self, reader, sizing: BundleSizing, now: float):
        self.reader, self.sizing = reader, sizing
        # a paced source skips what is more than its burst behind: it must not wait longer to fill a bundle
        self.floor = min(sizing.min_rows, burst_rows(reader))
        self.max_wait = min(sizing.max_wait_s, reader.max_burst_s or float("inf"))
        self.started = self.last_read = now
        self.emitted = 0
        self.size: int | None = None  # the next bundle's rows; None until the first is read
        self.overhead: float | None = None  # the quickest bundle so far: what one Spark action costs
        self.pending: int | None = None  # rows due but not read yet (Flink's pendingRecords); None if unpaced

    def next_read(self, now: float) -> tuple[int, float]:
        """Rows to read next, and the seconds to wait before reading them (0: read now)."""
        sizing, reader = self.sizing, self.reader
        allowed = reader.rows_allowed_now(now - self.started)
        if allowed is None:
            self.pending = None
            return self.size or first_bundle_size(None, sizing.target_s, sizing.min_rows, sizing.max_rows), 0.0
        self.emitted = max(self.emitted, allowed - burst_rows(reader))
        due = allowed - self.emitted
        self.pending = max(0, due)
        size = self.size or first_bundle_size(reader.rate, sizing.target_s, sizing.min_rows, sizing.max_rows, due)
        want = min(size, due)
        return want, wait_before_reading(want, self.floor, now - self.last_read, self.max_wait, reader.rate,
                                         first=self.size is None)

    def read(self, started: float, rows: int) -> None:
        """A bundle of ``rows`` was read, from ``started``."""
        self.last_read = started
        self.emitted += rows
        if self.size is None:
            self.size = max(rows, first_bundle_size(self.reader.rate, self.sizing.target_s, self.sizing.min_rows,
                                                    self.sizing.max_rows))

    def took(self, elapsed: float, blocked: float, rows: int) -> None:
        """The bundle's cost sizes the next one. The cost leaves out the wait for consumers' credit (counted, it
        would make every bundle mostly fixed cost and the source burn CPU its slow consumers need); that wait
        instead caps the size at what the consumers take."""
        sizing, took = self.sizing, elapsed - blocked
        self.overhead = took if self.overhead is None else min(self.overhead, took)
        self.size = next_bundle_size(self.size or sizing.min_rows, took, sizing.target_s, sizing.min_rows,
                                     sizing.max_rows, self.overhead)
        if blocked > 0:
            self.size = backpressured_bundle_size(self.size, rows, elapsed, sizing.target_s, sizing.min_rows)


class SourceLoop:
    """Drives one source task; the checkpoints the JobManager triggers wait here for a bundle boundary."""

    def __init__(self, task: SourceTask, sizing: BundleSizing):
        self.task, self.sizing = task, sizing
        self._triggers: collections.deque[TriggerCheckpoint] = collections.deque()
        self._woken = asyncio.Event()  # a checkpoint was triggered: a source waiting for rows takes it now

    def trigger(self, trigger: TriggerCheckpoint) -> None:
        self._triggers.append(trigger)
        self._woken.set()

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
        pace = Pace(task.reader, self.sizing, time.monotonic())
        finished = False
        while not finished:
            if await self._take_checkpoints():
                return
            want, pause = pace.next_read(time.monotonic())
            task.metrics.pending_records = pace.pending
            if pause > 0:
                await self._idle(max(0.01, pause))
                continue
            t0, blocked0 = time.monotonic(), self.task.blocked_seconds()
            table, finished, rows_read = await task.run_blocking(self._bundle, want)
            if rows_read is None:  # the reader cannot tell before the action: count what came out
                rows_read = table.num_rows if table is not None else 0
            pace.read(t0, rows_read)
            task.metrics.records_in += rows_read
            if rows_read == 0 and not finished:
                await self._idle(min(self.sizing.target_s, 0.1))  # nothing new yet (a watched directory, a push source)
                continue
            await task.emit(table)
            await task.advance_watermark(task.chain.assigner.current if task.chain.assigner else None)
            task.bundle_done(t0)
            pace.took(time.monotonic() - t0, self.task.blocked_seconds() - blocked0, rows_read)
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
        self._woken.clear()
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
        """No rows for now: tell consumers the source is idle (if its watermark says so), then wait; a
        checkpoint triggered meanwhile ends the wait, so that its barrier goes out at once rather than after
        the source's next bundle (up to taskmanager.bundle.max-wait later, which an exactly-once sink's rows,
        released when the checkpoint completes, waited for too)."""
        task = self.task
        assigner = task.chain.assigner
        if assigner is not None and assigner.is_idle():
            for partition in task.partitions:
                await partition.broadcast_event(Watermark(to_wire(task.output_watermark), idle=True))
        with task.metrics.idle():
            try:
                await asyncio.wait_for(self._woken.wait(), pause)
            except asyncio.TimeoutError:
                pass
            self._woken.clear()
