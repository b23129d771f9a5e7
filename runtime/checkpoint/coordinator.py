"""The checkpoint coordinator: one per JobMaster, it triggers, tracks and completes checkpoints.

A checkpoint starts at the source subtasks (TriggerCheckpoint); barriers carry it through the job;
every subtask acknowledges with a pointer to its snapshot. When all have, the coordinator writes
``_metadata`` (the checkpoint is then complete and restorable), tells every subtask so (sinks
publish what they staged), and drops checkpoints beyond ``state.checkpoints.num-retained``. A
checkpoint that times out or is declined fails on its own; only more consecutive failures than
``execution.checkpointing.tolerable-failed-checkpoints`` fail the job.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from collections.abc import Callable

from runtime import events
from runtime.errors import CheckpointError
from runtime.checkpoint import storage
from runtime.checkpoint.context import CheckpointContext
from runtime.ids import ExecutionAttemptId
from runtime.jobmanager.gateways import TaskManagerGone
from runtime.jobmanager.snapshots import (CheckpointConfigSnapshot, CheckpointRecord, CheckpointStatsSnapshot,
                                          RestoredCheckpoint)
from runtime.messages import (AcknowledgeCheckpoint, DeclineCheckpoint, NotifyCheckpointAborted,
                              NotifyCheckpointComplete, TriggerCheckpoint)

log = logging.getLogger(__name__)

HISTORY = 50


class CheckpointFailure(CheckpointError):
    """A checkpoint or savepoint that did not complete; the message says why."""


@dataclass
class SubtaskSnapshot:
    vertex_id: str
    subtask: int
    pointer: str
    operators: list[str]
    size: int


@dataclass
class PendingCheckpoint:
    checkpoint_id: int
    timestamp: float
    is_savepoint: bool
    directory: str
    stop: bool
    expected: dict[ExecutionAttemptId, tuple[str, int, list[str]]]  # attempt -> (vertex, subtask, operators)
    acks: dict[ExecutionAttemptId, SubtaskSnapshot] = field(default_factory=dict)
    done: asyncio.Future | None = None
    timer: asyncio.TimerHandle | None = None


@dataclass
class CompletedCheckpoint:
    checkpoint_id: int
    timestamp: float
    is_savepoint: bool
    directory: str
    subtasks: list[SubtaskSnapshot]
    duration_s: float
    size: int

    def pointers_for(self, operator_ids: set[str]) -> list[str]:
        """Snapshots of every old subtask that ran one of ``operator_ids`` (rescaling reads them all)."""
        return [s.pointer for s in self.subtasks if operator_ids & set(s.operators)]

    def metadata(self, job_id: str, max_parallelism: int) -> dict:
        return {"job_id": job_id, "checkpoint_id": self.checkpoint_id, "timestamp": self.timestamp,
                "is_savepoint": self.is_savepoint, "max_parallelism": max_parallelism,
                "subtasks": [s.__dict__ for s in self.subtasks]}


def load_checkpoint(path: str) -> CompletedCheckpoint:
    """A completed checkpoint or savepoint from its directory (the one holding ``_metadata``).

    Raises StorageError when it cannot be read, CheckpointError when its metadata is malformed."""
    directory = storage.normalise(path)
    meta = storage.read_json(storage.join(directory, storage.METADATA))
    try:
        subtasks = [SubtaskSnapshot(**s) for s in meta["subtasks"]]
        meta["checkpoint_id"], meta["timestamp"], meta["is_savepoint"]  # noqa: B018 - present, or KeyError
    except (KeyError, TypeError) as err:
        raise CheckpointError(f"{directory} has malformed checkpoint metadata ({err!r})") from None
    return CompletedCheckpoint(meta["checkpoint_id"], meta["timestamp"], meta["is_savepoint"], directory,
                               subtasks, 0.0, sum(s.size for s in subtasks))


class CheckpointCoordinator:
    """Triggers, tracks and completes the checkpoints of one job; lives on the JobManager's loop."""

    def __init__(self, job: CheckpointContext, conf, bus, on_too_many_failures: Callable[[str], None],
                 publish_pointer: Callable[[str], None] | None = None, working_dir: str = "."):
        self.job = job  # only what a checkpoint needs of the job: participants and their gateways
        self.publish_pointer = publish_pointer  # records the latest completed checkpoint for a new leader
        self.conf = conf
        self.bus = bus
        self.on_too_many_failures = on_too_many_failures
        self.interval = conf.get("execution.checkpointing.interval")
        self.timeout = conf.get("execution.checkpointing.timeout")
        self.min_pause = conf.get("execution.checkpointing.min-pause")
        self.max_concurrent = conf.get("execution.checkpointing.max-concurrent-checkpoints")
        self.tolerable = conf.get("execution.checkpointing.tolerable-failed-checkpoints")
        self.retained = conf.get("state.checkpoints.num-retained")
        base = conf.get("state.checkpoints.dir") or os.path.join(working_dir, "checkpoints")
        self.base = storage.normalise(base)
        self.savepoint_base = storage.normalise(conf.get("state.savepoints.dir") or storage.join(self.base, "savepoints"))
        self.next_id = 1
        self.pending: dict[int, PendingCheckpoint] = {}
        self.completed: list[CompletedCheckpoint] = []
        self.initial: CompletedCheckpoint | None = None  # the savepoint/checkpoint the job was started from
        self.restored: CompletedCheckpoint | None = None  # the last one restored (start or failover)
        self.restored_at: float | None = None
        self.history: list[CheckpointRecord] = []  # newest first
        self.counts = {"triggered": 0, "completed": 0, "failed": 0, "in_progress": 0, "restored": 0}
        self.consecutive_failures = 0
        self.last_failure: CheckpointRecord | None = None
        self._last_end = 0.0
        self._loop_task: asyncio.Task | None = None

    @property
    def periodic(self) -> bool:
        return self.interval > 0

    # -- periodic triggering ------------------------------------------------------------------
    def start(self) -> None:
        if self.periodic and self._loop_task is None:
            self._loop_task = asyncio.get_running_loop().create_task(self._periodic())

    def stop(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            self._loop_task = None

    async def _periodic(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if len(self.pending) >= self.max_concurrent or time.time() - self._last_end < self.min_pause:
                continue
            if not self.job.all_running():
                continue
            try:
                self.trigger()
            except CheckpointFailure as err:
                log.debug("periodic checkpoint not triggered: %s", err)

    # -- one checkpoint -----------------------------------------------------------------------
    def trigger(self, is_savepoint: bool = False, target: str | None = None, stop: bool = False,
                drain: bool = False) -> asyncio.Future:
        """Start a checkpoint (or savepoint); the future resolves to its CompletedCheckpoint. ``drain``
        (with ``stop``): every task fires what a final watermark of +infinity fires before it snapshots."""
        if not self.job.all_running():
            raise CheckpointFailure("not all tasks are RUNNING, so no checkpoint can be taken now")
        checkpoint_id = self.next_id
        self.next_id += 1
        if is_savepoint:
            directory = storage.savepoint_dir(target or self.savepoint_base, self.job.job_id, checkpoint_id)
        else:
            directory = storage.checkpoint_dir(self.base, self.job.job_id, checkpoint_id)
        expected = self.job.participants()
        pending = PendingCheckpoint(checkpoint_id, time.time(), is_savepoint, directory, stop, expected,
                                    done=asyncio.get_running_loop().create_future())
        pending.timer = asyncio.get_running_loop().call_later(
            self.timeout, self._fail, checkpoint_id, f"checkpoint expired before completing (timeout {self.timeout:g} s)")
        self.pending[checkpoint_id] = pending
        self.counts["triggered"] += 1
        self.bus.publish(events.CheckpointTriggered(self.job.job_id, checkpoint_id, is_savepoint))
        for attempt in self.job.source_attempts():
            trigger = TriggerCheckpoint(self.job.job_id, attempt, checkpoint_id, pending.timestamp, is_savepoint,
                                        directory, stop, drain and stop)
            self._send(attempt, trigger)
        return pending.done

    def on_ack(self, msg: AcknowledgeCheckpoint) -> None:
        pending = self.pending.get(msg.checkpoint_id)
        if pending is None or msg.attempt_id not in pending.expected:
            if msg.state_pointer:  # an upload that finished after its checkpoint failed: debris
                asyncio.get_running_loop().run_in_executor(None, _remove_quietly, msg.state_pointer)
            return
        vertex_id, subtask, operators = pending.expected[msg.attempt_id]
        pending.acks[msg.attempt_id] = SubtaskSnapshot(vertex_id, subtask, msg.state_pointer or "", operators,
                                                       msg.state_size)
        if len(pending.acks) == len(pending.expected):
            asyncio.get_running_loop().create_task(self._complete(pending))

    def on_decline(self, msg: DeclineCheckpoint) -> None:
        if msg.checkpoint_id in self.pending:
            self._fail(msg.checkpoint_id, f"declined by a subtask: {msg.reason}")

    def abort_all(self, reason: str) -> None:
        """Tasks are failing or being cancelled: nothing in flight can complete."""
        for checkpoint_id in list(self.pending):
            self._fail(checkpoint_id, reason, count=False)

    async def _complete(self, pending: PendingCheckpoint) -> None:
        if self.pending.get(pending.checkpoint_id) is not pending:
            return
        subtasks = sorted(pending.acks.values(), key=lambda s: (s.vertex_id, s.subtask))
        done = CompletedCheckpoint(pending.checkpoint_id, pending.timestamp, pending.is_savepoint, pending.directory,
                                   subtasks, time.time() - pending.timestamp, sum(s.size for s in subtasks))
        metadata_url = storage.join(pending.directory, storage.METADATA)
        try:
            await asyncio.get_running_loop().run_in_executor(
                None, storage.write_json, metadata_url, done.metadata(self.job.job_id, self.job.max_parallelism))
        except storage.StorageError as err:
            self._fail(pending.checkpoint_id, f"cannot write checkpoint metadata: {err}")
            return
        if self.pending.get(pending.checkpoint_id) is not pending:
            return  # failed (timed out) while the metadata was being written
        if not done.is_savepoint and not await self._published(done):
            return
        if self.pending.pop(pending.checkpoint_id, None) is None:
            return  # failed (timed out) while it was being recorded
        pending.timer.cancel()
        self.consecutive_failures = 0
        self._last_end = time.time()
        self.counts["completed"] += 1
        if not done.is_savepoint:
            self.completed.append(done)
            await self._drop_beyond_retained()
        self._record(done.checkpoint_id, "COMPLETED", done.is_savepoint, pending.timestamp, done.duration_s, done.size,
                     path=done.directory)
        self.bus.publish(events.CheckpointCompleted(self.job.job_id, done.checkpoint_id, done.is_savepoint,
                                                    done.duration_s, done.size, done.directory))
        for attempt in pending.expected:
            complete = NotifyCheckpointComplete(self.job.job_id, attempt, done.checkpoint_id)
            self._send(attempt, complete)
        if not pending.done.done():
            pending.done.set_result(done)

    async def _published(self, done: CompletedCheckpoint) -> bool:
        """Record the checkpoint in the HA store before any sink commits it, so that a new leader never
        restores an older one than the sinks have published. False (and the checkpoint fails) if not."""
        if self.publish_pointer is None:
            return True
        try:
            await asyncio.get_running_loop().run_in_executor(None, self.publish_pointer, done.directory)
            return True
        except Exception as err:  # noqa: BLE001 - fenced off (LeadershipLost) or the store is unreachable
            self._fail(done.checkpoint_id, f"cannot record the checkpoint in the HA store: {err}")
            return False

    def _fail(self, checkpoint_id: int, reason: str, count: bool = True) -> None:
        pending = self.pending.pop(checkpoint_id, None)
        if pending is None:
            return
        pending.timer.cancel()
        self._last_end = time.time()
        self.counts["failed"] += 1
        self.last_failure = self._record(checkpoint_id, "FAILED", pending.is_savepoint, pending.timestamp,
                                         time.time() - pending.timestamp, sum(a.size for a in pending.acks.values()),
                                         reason, len(pending.acks))
        self.bus.publish(events.CheckpointFailed(self.job.job_id, checkpoint_id, pending.is_savepoint, reason))
        for attempt in pending.expected:
            aborted = NotifyCheckpointAborted(self.job.job_id, attempt, checkpoint_id)
            self._send(attempt, aborted)
        asyncio.get_running_loop().run_in_executor(None, _remove_quietly, pending.directory)
        if not pending.done.done():
            pending.done.set_exception(CheckpointFailure(f"checkpoint {checkpoint_id} failed: {reason}"))
            pending.done.exception()  # retrieved here, so an unawaited periodic checkpoint logs nothing
        if count and not pending.is_savepoint:
            self.consecutive_failures += 1
            if self.consecutive_failures > self.tolerable:
                self.consecutive_failures = 0
                self.on_too_many_failures(f"exceeded checkpoint tolerable failure threshold "
                                          f"({self.tolerable}); last: {reason}")

    def _send(self, attempt: ExecutionAttemptId,
              message: TriggerCheckpoint | NotifyCheckpointComplete | NotifyCheckpointAborted) -> None:
        """One message to the TaskManager running ``attempt``; an attempt that is gone misses nothing
        the coordinator waits for (its job fails over and aborts what is pending)."""
        gateway = self.job.task_gateway(attempt)
        if gateway is None:
            return
        try:
            if isinstance(message, TriggerCheckpoint):
                gateway.trigger_checkpoint(message)
            elif isinstance(message, NotifyCheckpointComplete):
                gateway.confirm_checkpoint(message)
            else:
                gateway.abort_checkpoint(message)
        except TaskManagerGone:
            pass

    def sweep(self) -> None:
        """The job ended: remove every checkpoint directory of this job but the retained ones."""
        keep = {c.directory for c in self.completed}
        job_dir = storage.join(self.base, self.job.job_id)

        def remove_stale() -> None:
            try:
                names = storage.list_dirs(job_dir)
            except Exception as err:  # noqa: BLE001 - an unreachable store leaves its debris
                log.warning("cannot list %s: %s", job_dir, err)
                return
            for name in names:
                if name.startswith("chk-") and storage.join(job_dir, name) not in keep:
                    _remove_quietly(storage.join(job_dir, name))
        asyncio.get_running_loop().run_in_executor(None, remove_stale)

    async def _drop_beyond_retained(self) -> None:
        while len(self.completed) > self.retained:
            old = self.completed.pop(0)
            if self.initial is not None and old.directory == self.initial.directory:
                continue  # the job's own starting point is the user's, never ours to delete
            await asyncio.get_running_loop().run_in_executor(None, _remove_quietly, old.directory)

    # -- restore ------------------------------------------------------------------------------
    def latest(self) -> CompletedCheckpoint | None:
        return self.completed[-1] if self.completed else self.initial

    def start_from(self, checkpoint: CompletedCheckpoint) -> None:
        """The job starts from a user's savepoint or retained checkpoint."""
        self.initial = checkpoint
        self.next_id = max(self.next_id, checkpoint.checkpoint_id + 1)

    def recover(self, checkpoint: CompletedCheckpoint) -> None:
        """A new leader resumes the job: its latest completed checkpoint (from the HA store) becomes the
        one the first deployment restores, and is retained and dropped like any checkpoint of ours."""
        self.completed.append(checkpoint)
        self.next_id = max(self.next_id, checkpoint.checkpoint_id + 1)

    def restore_from(self, checkpoint: CompletedCheckpoint) -> None:
        """Subtasks are being deployed with this checkpoint's state (first start or failover)."""
        self.restored = checkpoint
        self.restored_at = time.time()
        self.next_id = max(self.next_id, checkpoint.checkpoint_id + 1)
        self.counts["restored"] += 1
        self.bus.publish(events.CheckpointRestored(self.job.job_id, checkpoint.checkpoint_id, checkpoint.directory))

    # -- snapshots (the REST layer shows them in Flink's shapes) -------------------------------
    def _record(self, checkpoint_id, status, is_savepoint, started, duration_s, size, reason=None,
                acknowledged=None, path=None) -> CheckpointRecord:
        subtasks = len(self.job.all_attempts())
        entry = CheckpointRecord(checkpoint_id, status, is_savepoint, started, time.time(), duration_s, size, subtasks,
                                 subtasks if acknowledged is None else acknowledged, reason, path)
        self.history.insert(0, entry)
        del self.history[HISTORY:]
        return entry

    def stats(self) -> CheckpointStatsSnapshot:
        restored = self.restored
        return CheckpointStatsSnapshot(
            self.counts["triggered"], self.counts["completed"], self.counts["failed"], len(self.pending),
            self.counts["restored"], tuple(self.history),
            RestoredCheckpoint(restored.checkpoint_id, restored.directory, restored.is_savepoint,
                               self.restored_at or 0.0) if restored else None,
            self.last_failure, {c.checkpoint_id: c.directory for c in self.completed})

    def config(self) -> CheckpointConfigSnapshot:
        return CheckpointConfigSnapshot(self.interval if self.periodic else 0.0, self.timeout, self.min_pause,
                                        self.max_concurrent, self.tolerable, self.base, self.savepoint_base)


def _remove_quietly(directory: str) -> None:
    try:
        storage.remove(directory)
    except storage.StorageError as err:
        log.warning("could not remove %s: %s", directory, err)
