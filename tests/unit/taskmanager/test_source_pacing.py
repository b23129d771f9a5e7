"""A rate-limited source's loop on a fake clock: it lets a bundle's floor of rows fall due, or waits at most
taskmanager.bundle.max-wait (idle time, as Flink counts a source waiting for data), instead of running one Spark
action after another for a trickle, which showed a throttled source at 100 % busy ("limits this job") and kept its
JVM busy."""
from __future__ import annotations

import asyncio
import time
import types

import pytest

from runtime.ids import ExecutionAttemptId, JobId
from runtime.messages import TriggerCheckpoint
from runtime.taskmanager import metrics as metrics_module
from runtime.taskmanager import source_loop
from runtime.taskmanager.metrics import TaskMetricsTracker
from runtime.taskmanager.source_loop import BundleSizing, SourceLoop

ACTION_S = 0.2  # what one Spark action costs here, plus its rows at ROWS_PER_S
ROWS_PER_S = 1_000_000
SIZING = BundleSizing(target_s=0.5, min_rows=1_000, max_rows=1_000_000, max_wait_s=2.0)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds

    async def wait_for(self, waiting, seconds: float):
        """No checkpoint is triggered on this clock: every wait lasts its whole time."""
        waiting.close()
        self.now += seconds
        raise asyncio.TimeoutError


class PacedReader:
    """A source of ``total`` rows at ``rate`` rows/s, as datagen paces them: realtime (rows due as their event time
    comes, however far behind) or at most ``max_burst_s`` behind its pace."""

    def __init__(self, rate: float, total: int, max_burst_s: float | None):
        self.rate, self.total, self.read, self.max_burst_s = rate, total, 0, max_burst_s

    def rows_allowed_now(self, elapsed_s: float) -> int:
        return int(elapsed_s * self.rate)

    def next_bundle(self, rows: int):
        take = min(rows, self.total - self.read)
        self.read += take
        return object(), take, self.read == self.total

    def close(self) -> None:
        """Nothing to let go of (the loop closes every reader when it ends)."""


class FakeTask:
    """What the source loop needs of a task; every Spark action takes ACTION_S and its rows' share of ROWS_PER_S
    on the fake clock."""

    def __init__(self, clock: Clock, reader: PacedReader):
        self.clock, self.reader, self.bundle_sizes, self.took = clock, reader, [], 0.0
        self.tdd = types.SimpleNamespace(operators=[types.SimpleNamespace(name="Source: paced")])
        self.chain = types.SimpleNamespace(assigner=None, process=lambda spark, df: None)
        self.metrics = TaskMetricsTracker()
        self.partitions, self.output_watermark, self.stopped_at, self.spark = [], 0, None, None

    async def run_blocking(self, fn, *args):
        table, finished, read = fn(*args)
        self.clock.now += ACTION_S + read / ROWS_PER_S
        self.bundle_sizes.append(read)
        return table, finished, read

    async def emit(self, table) -> None:
        pass

    async def advance_watermark(self, watermark) -> None:
        pass

    def bundle_done(self, t0: float) -> None:
        self.metrics.bundles += 1

    def blocked_seconds(self) -> float:
        return 0.0

    async def checkpoint(self, barrier) -> None:
        pass


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(source_loop, "time", types.SimpleNamespace(monotonic=fake.monotonic))
    monkeypatch.setattr(source_loop, "asyncio", types.SimpleNamespace(
        sleep=fake.sleep, wait_for=fake.wait_for, to_thread=asyncio.to_thread, TimeoutError=asyncio.TimeoutError,
        Event=asyncio.Event))
    monkeypatch.setattr(metrics_module, "time", types.SimpleNamespace(monotonic=fake.monotonic))
    return fake


def run_source(clock: Clock, rate: float, seconds: float, max_burst_s: float | None = None) -> FakeTask:
    task = FakeTask(clock, PacedReader(rate, int(rate * seconds), max_burst_s))
    start = clock.now
    task.metrics.start()
    asyncio.run(SourceLoop(task, SIZING).run())
    task.took = clock.now - start
    return task


def busy_share(task: FakeTask) -> float:
    report = task.metrics.snapshot("job", "attempt", 0.0, 0, 0)
    return report.accumulated_busy_ms / (report.accumulated_busy_ms + report.accumulated_idle_ms)


def test_a_throttled_source_reads_a_bundles_floor_of_rows_at_a_time_and_is_mostly_idle(clock):
    task = run_source(clock, rate=500.0, seconds=60.0)  # the README's 1,000 rows/s over two source subtasks
    assert busy_share(task) < 0.15, f"busy {busy_share(task):.0%}: a source waiting for its rows is idle"
    assert len(task.bundle_sizes) <= 60 / 2 + 2, "one Spark action per min-rows due, not one after another"
    assert min(task.bundle_sizes[1:-1]) >= 1_000, task.bundle_sizes[:10]
    assert task.took < 60 + 3, "waiting to fill bundles loses none of its pace"


def test_a_trickle_waits_at_most_max_wait(clock):
    task = run_source(clock, rate=20.0, seconds=60.0)
    assert 25 <= len(task.bundle_sizes) <= 31, "a bundle every two seconds, not one per 1,000 rows (50 s)"
    assert busy_share(task) < 0.15


def test_a_source_paced_at_most_a_second_behind_waits_no_longer_than_that(clock):
    task = run_source(clock, rate=500.0, seconds=60.0, max_burst_s=1.0)
    assert 50 <= len(task.bundle_sizes) <= 63 and min(task.bundle_sizes[1:-1]) >= 450, task.bundle_sizes[:10]
    assert busy_share(task) < 0.3 and task.took < 60 + 2, "no rows skipped for having waited"


def test_the_first_bundle_is_read_as_soon_as_rows_are_due_and_the_next_ones_fill_the_floor(clock):
    """The first bundle's plan is new to the session: its one-time work overlaps the next rows' arrival."""
    task = run_source(clock, rate=500.0, seconds=10.0)
    first, *rest = task.bundle_sizes
    assert 0 < first <= 10, f"{first} rows: read within {first / 500:.2f} s of the start, not after 2 s"
    assert min(rest[:-1]) >= 1_000, rest


def test_a_source_behind_its_pace_reads_at_once_without_waiting(clock):
    task = run_source(clock, rate=2 * ROWS_PER_S, seconds=5.0)  # more than Spark takes: always behind
    report = task.metrics.snapshot("job", "attempt", 0.0, 0, 0)
    assert report.accumulated_idle_ms <= 500, "only while its first rows fall due"
    assert report.accumulated_busy_ms > 5_000


def test_a_checkpoint_triggered_while_the_source_waits_for_rows_is_taken_at_once():
    """Not after the wait (up to max-wait): an exactly-once sink's rows wait for the checkpoint to complete."""
    async def seconds_to_the_barrier() -> float:
        task = FakeTask(Clock(), PacedReader(100.0, 100_000, None))  # the next bundle's rows take 2 s to come
        taken: list[float] = []

        async def checkpoint(barrier) -> None:
            taken.append(time.monotonic())
        task.checkpoint = checkpoint
        loop = SourceLoop(task, SIZING)
        running = asyncio.ensure_future(loop.run())
        while not task.bundle_sizes:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.1)  # the source now waits for its next rows
        triggered = time.monotonic()
        loop.trigger(TriggerCheckpoint(JobId("job"), ExecutionAttemptId("attempt"), 1, time.time()))
        while not taken and time.monotonic() - triggered < 5:
            await asyncio.sleep(0.005)
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        assert task.bundle_sizes == [task.bundle_sizes[0]], "no bundle was read for the checkpoint"
        return taken[0] - triggered if taken else float("inf")

    assert asyncio.run(seconds_to_the_barrier()) < 0.5
