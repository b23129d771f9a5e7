"""The checkpoint coordinator: one per JobMaster, it triggers, tracks and completes checkpoints.

A checkpoint starts at the source subtasks (TriggerCheckpoint); barriers carry it through the job;
every subtask acknowledges with a pointer to its snapshot. Checkpoint ids come from the job's counter in
the HA store, reserved a few ahead. When all have acknowledged, the coordinator writes
``_metadata`` (the checkpoint is then complete and restorable), records it in the HA store, tells
every subtask so (sinks publish what they staged), and drops checkpoints beyond
``state.checkpoints.num-retained``. A checkpoint that times out or is declined fails on its own; only
more consecutive failures than ``execution.checkpointing.tolerable-failed-checkpoints`` fail the job.

What to do next is decided by the lifecycle state machine (runtime.checkpoint.lifecycle); this class
turns messages and timers into its events and executes its actions: messages through the job's
gateways, file writes in a thread, futures for the callers.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from runtime import events
from runtime.checkpoint import lifecycle_events as ev
from runtime.checkpoint import storage
from runtime.checkpoint.checkpoint_files import CheckpointFiles, load_checkpoint
from runtime.checkpoint.context import CheckpointContext, CheckpointStore
from runtime.checkpoint.details import CheckpointDetails
from runtime.checkpoint.lifecycle import CheckpointLifecycle, CheckpointSettings, PendingCheckpoint
from runtime.checkpoint.lifecycle_events import CompletedCheckpoint, SubtaskSnapshot
from runtime.errors import CheckpointError
from runtime.ids import ExecutionAttemptId
from runtime.gateways import TaskManagerGone
from runtime.checkpoint.stats import (CheckpointConfigSnapshot, CheckpointDetailsSnapshot, CheckpointRecord,
                                      CheckpointStatsSnapshot, RestoredCheckpoint)
from runtime.messages import (AcknowledgeCheckpoint, DeclineCheckpoint, NotifyCheckpointAborted,
                              NotifyCheckpointComplete, TriggerCheckpoint)

log = logging.getLogger(__name__)

HISTORY = 50

__all__ = ["CheckpointCoordinator", "CheckpointFailure", "CompletedCheckpoint", "PendingCheckpoint",
           "SubtaskSnapshot", "load_checkpoint"]


class CheckpointFailure(CheckpointError):
    """A checkpoint or savepoint that did not complete; the message says why."""


class CheckpointCoordinator:
    """Triggers, tracks and completes the checkpoints of one job; lives on the JobManager's loop."""

    def __init__(self, job: CheckpointContext, conf, bus, on_too_many_failures: Callable[[str], None],
                 store: CheckpointStore | None = None, working_dir: str = ".",
                 on_restore_impossible: Callable[[str], None] = lambda reason: None):
        self.job = job  # only what a checkpoint needs of the job: participants and their gateways
        self.store = store  # the HA store: checkpoint ids, and the retained checkpoints for a new leader
        self.files = CheckpointFiles(store.fence if store is not None else None)  # every write fenced
        self.suspended = False  # this JobManager lost the leadership: the coordinator does nothing more
        self.bus = bus
        self.on_too_many_failures = on_too_many_failures
        self.on_restore_impossible = on_restore_impossible  # no checkpoint is left to restore: the job fails
        self.interval = conf.get("execution.checkpointing.interval")
        self.timeout = conf.get("execution.checkpointing.timeout")
        self.min_pause = conf.get("execution.checkpointing.min-pause")
        self.max_concurrent = conf.get("execution.checkpointing.max-concurrent-checkpoints")
        self.tolerable = conf.get("execution.checkpointing.tolerable-failed-checkpoints")
        self.retained = conf.get("state.checkpoints.num-retained")
        self.base, self.savepoint_base = storage.locations(conf.get("state.checkpoints.dir"),
                                                           conf.get("state.savepoints.dir"), working_dir)
        self.lifecycle = CheckpointLifecycle(
            CheckpointSettings(self.timeout, self.min_pause, self.max_concurrent, self.tolerable, self.retained,
                               store is not None, store is not None), self._directory_for)
        self.last_triggered = 0  # the id of the checkpoint trigger() started last
        self.restored: CompletedCheckpoint | None = None  # the last one restored (start or failover)
        self.restored_at: float | None = None
        self.history: list[CheckpointRecord] = []  # newest first
        self.counts = {"triggered": 0, "completed": 0, "failed": 0, "in_progress": 0, "restored": 0}
        self.last_failure: CheckpointRecord | None = None
        self.details = CheckpointDetails(HISTORY)  # each recent checkpoint's subtasks and their acknowledgements
        self._futures: dict[int, asyncio.Future] = {}
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._loop_task: asyncio.Task | None = None

    @property
    def periodic(self) -> bool:
        return self.interval > 0

    @property
    def completed(self) -> list[CompletedCheckpoint]:
        return self.lifecycle.completed

    def _directory_for(self, checkpoint_id: int, is_savepoint: bool, target: str | None) -> str:
        if is_savepoint:
            return storage.savepoint_dir(target or self.savepoint_base, self.job.job_id, checkpoint_id)
        return storage.checkpoint_dir(self.base, self.job.job_id, checkpoint_id)

    # -- triggering ---------------------------------------------------------------------------
    def start(self) -> None:
        self._handle(ev.IdsWanted())
        if self.periodic and self._loop_task is None:
            self._loop_task = asyncio.get_running_loop().create_task(self._periodic())

    def stop(self) -> None:
        if self._loop_task is not None:
            self._loop_task.cancel()
            self._loop_task = None

    def suspend(self) -> None:
        """This JobManager lost the leadership: stop at once, write and delete nothing more (what is in
        flight is the new leader's to restore or sweep), and fail whoever waits on a checkpoint."""
        self.stop()
        self.suspended = True
        for timer in self._timers.values():
            timer.cancel()
        for future in self._futures.values():
            if not future.done():
                future.set_exception(CheckpointFailure("this JobManager lost the leadership"))
                future.exception()

    async def _periodic(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if self.store is None or self.store.leading():  # after a pause longer than the lease: no trigger
                self._handle(self._trigger_request(periodic=True))

    def trigger(self, is_savepoint: bool = False, target: str | None = None, stop: bool = False,
                drain: bool = False, full: bool = False) -> asyncio.Future:
        """Start a checkpoint (or savepoint); the future resolves to its CompletedCheckpoint. Raises
        CheckpointFailure when one cannot start now. ``drain`` (with ``stop``): every task fires what a
        final watermark of +infinity fires before it snapshots. ``full``: incremental checkpoints upload
        every key group this once (later ones refer to its files)."""
        actions = self._handle(self._trigger_request(is_savepoint=is_savepoint, target=target, stop=stop,
                                                     drain=drain and stop, full=full))
        refused = next((a for a in actions if isinstance(a, ev.Refused)), None)
        if refused is not None:
            raise CheckpointFailure(refused.reason)
        return self._futures[self.last_triggered]

    def _trigger_request(self, **options) -> ev.TriggerRequested:
        running = self.job.all_running()
        return ev.TriggerRequested(running, self.job.participants() if running else {},
                                   tuple(self.job.source_attempts()) if running else (), **options)

    # -- reports ------------------------------------------------------------------------------
    def on_ack(self, msg: AcknowledgeCheckpoint) -> None:
        self.details.acknowledged(msg, time.time())
        self._handle(ev.Acknowledged(msg.checkpoint_id, msg.attempt_id, msg.state_pointer, msg.state_size,
                                     msg.checkpointed_size, tuple(msg.shared_uploaded), tuple(msg.shared_reused)))

    def on_decline(self, msg: DeclineCheckpoint) -> None:
        self._handle(ev.Declined(msg.checkpoint_id, msg.attempt_id, msg.reason))

    def abort_all(self, reason: str) -> None:
        """Tasks are failing or being cancelled: nothing in flight can complete."""
        self._handle(ev.AbortAll(reason))

    # -- the lifecycle decides, this class executes -------------------------------------------
    def _handle(self, event: ev.Event) -> list[ev.Action]:
        if self.suspended:
            return []
        actions = self.lifecycle.handle(event, time.time())
        for action in actions:
            self._execute(action)
        return actions

    def _execute(self, action: ev.Action) -> None:
        loop = asyncio.get_running_loop()
        if isinstance(action, ev.Started):
            self._started(action)
        elif isinstance(action, ev.SendTrigger):
            self._send(action.attempt_id, TriggerCheckpoint(self.job.job_id, action.attempt_id, action.checkpoint_id,
                                                            action.timestamp, action.is_savepoint, action.directory,
                                                            action.stop, action.drain, action.full))
        elif isinstance(action, ev.NotifyComplete):
            self._send(action.attempt_id, NotifyCheckpointComplete(self.job.job_id, action.attempt_id,
                                                                   action.checkpoint_id))
        elif isinstance(action, ev.NotifyAborted):
            self._send(action.attempt_id, NotifyCheckpointAborted(self.job.job_id, action.attempt_id,
                                                                  action.checkpoint_id))
        elif isinstance(action, ev.DiscardState):
            self.files.discard_state(action.pointer, action.ended)
        elif isinstance(action, (ev.DropCheckpoint, ev.DiscardCheckpoint)):
            self.files.remove(action.directory)
        elif isinstance(action, ev.DiscardShared):
            self.files.remove_all(action.files)
        elif isinstance(action, (ev.WriteMetadata, ev.PublishPointer)):
            loop.create_task(self._write(action))
        elif isinstance(action, ev.ReserveIds):
            loop.create_task(self._reserve(action))
        elif isinstance(action, ev.Completed):
            self._completed(action.checkpoint)
        elif isinstance(action, ev.Failed):
            self._failed(action)
        elif isinstance(action, ev.TooManyFailures):
            self.on_too_many_failures(action.reason)
        elif isinstance(action, ev.FellBack):
            log.warning("job %s: %s; the next restart restores checkpoint %d (%s)", self.job.job_id, action.reason,
                        action.to.checkpoint_id, action.to.directory)
        elif isinstance(action, ev.RestoreImpossible):
            self.on_restore_impossible(action.reason)

    def _started(self, action: ev.Started) -> None:
        loop = asyncio.get_running_loop()
        self.last_triggered = action.checkpoint_id
        self._futures[action.checkpoint_id] = loop.create_future()
        self._timers[action.checkpoint_id] = loop.call_later(action.timeout_s, self._handle,
                                                             ev.TimedOut(action.checkpoint_id))
        self.counts["triggered"] += 1
        self.details.started(action.checkpoint_id, action.timestamp, action.is_savepoint, self.job.participants())
        self.bus.publish(events.CheckpointTriggered(self.job.job_id, action.checkpoint_id, action.is_savepoint))

    async def _write(self, action: ev.WriteMetadata | ev.PublishPointer) -> None:
        """Write ``_metadata`` or record the pointer in the HA store, in a thread; report how it went."""
        loop = asyncio.get_running_loop()
        if isinstance(action, ev.WriteMetadata):
            done = action.checkpoint
            try:
                await self.files.write_metadata(done, self.job.job_id, self.job.max_parallelism)
            except storage.StorageError as err:
                self._handle(ev.MetadataFailed(done.checkpoint_id, str(err)))
                return
            self._handle(ev.MetadataWritten(done.checkpoint_id))
            return
        assert self.store is not None
        try:
            await loop.run_in_executor(None, self.store.publish_checkpoint, action.directory, action.retained)
        except Exception as err:  # noqa: BLE001 - fenced off (LeadershipLost) or the store is unreachable
            self._handle(ev.PublishFailed(action.checkpoint_id, str(err)))
            return
        self._handle(ev.PointerPublished(action.checkpoint_id))

    async def _reserve(self, action: ev.ReserveIds) -> None:
        """Advance the HA store's checkpoint-id counter in a thread; the lifecycle keeps what it got."""
        assert self.store is not None
        try:
            first = await asyncio.get_running_loop().run_in_executor(None, self.store.reserve_checkpoint_ids,
                                                                     action.count, action.at_least)
        except Exception as err:  # noqa: BLE001 - fenced off (LeadershipLost) or the store is unreachable
            log.warning("job %s: cannot reserve checkpoint ids: %s", self.job.job_id, err)
            self._handle(ev.ReserveFailed(str(err)))
            return
        self._handle(ev.IdsReserved(first, action.count))

    def _completed(self, done: CompletedCheckpoint) -> None:
        self._end(done.checkpoint_id)
        self.counts["completed"] += 1
        self._record(done.checkpoint_id, "COMPLETED", done.is_savepoint, done.timestamp, done.duration_s, done.size,
                     path=done.directory, checkpointed_size=done.checkpointed_size)
        self.bus.publish(events.CheckpointCompleted(self.job.job_id, done.checkpoint_id, done.is_savepoint,
                                                    done.duration_s, done.size, done.directory))
        future = self._futures.pop(done.checkpoint_id, None)
        if future is not None and not future.done():
            future.set_result(done)

    def _failed(self, action: ev.Failed) -> None:
        self._end(action.checkpoint_id)
        self.counts["failed"] += 1
        now = time.time()
        self.last_failure = self._record(action.checkpoint_id, "FAILED", action.is_savepoint, action.timestamp,
                                         now - action.timestamp, action.size, action.reason, action.acknowledged)
        self.bus.publish(events.CheckpointFailed(self.job.job_id, action.checkpoint_id, action.is_savepoint,
                                                 action.reason))
        future = self._futures.pop(action.checkpoint_id, None)
        if future is not None and not future.done():
            future.set_exception(CheckpointFailure(f"checkpoint {action.checkpoint_id} failed: {action.reason}"))
            future.exception()  # retrieved here, so an unawaited periodic checkpoint logs nothing

    def _end(self, checkpoint_id: int) -> None:
        timer = self._timers.pop(checkpoint_id, None)
        if timer is not None:
            timer.cancel()

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
        """The job ended: remove every checkpoint directory of this job but the retained ones, and every
        shared file the retained ones do not refer to (uploads of checkpoints that never completed)."""
        keep = {c.directory for c in self.completed} | self.lifecycle.shared.live()
        self.files.sweep(storage.join(self.base, self.job.job_id), storage.job_shared_dir(self.base, self.job.job_id),
                         keep)

    # -- restore ------------------------------------------------------------------------------
    def latest(self) -> CompletedCheckpoint | None:
        return self.lifecycle.latest()

    def start_from(self, checkpoint: CompletedCheckpoint) -> None:
        """The job starts from a user's savepoint or retained checkpoint."""
        self.lifecycle.start_from(checkpoint)

    def recover(self, checkpoint: CompletedCheckpoint) -> None:
        """A new leader resumes the job: its latest completed checkpoint (from the HA store) becomes the
        one the first deployment restores, and is retained and dropped like any checkpoint of ours."""
        self.lifecycle.start_from(checkpoint, retained=True)

    def restore_failed(self, round: int, error: str) -> None:
        """A subtask of restart round ``round`` could not read its part of the checkpoint it was deployed
        with: after a few rounds the job falls back to an older retained one, or fails naming it. A round
        failed while the checkpoint storage itself cannot be listed (an outage) is not held against it."""
        if self.restored is not None:
            reachable = storage.is_directory(self.base)
            self._handle(ev.RestoreFailed(self.restored.checkpoint_id, round, error, storage_reachable=reachable))

    def restore_from(self, checkpoint: CompletedCheckpoint) -> None:
        """Subtasks are being deployed with this checkpoint's state (first start or failover)."""
        self.restored = checkpoint
        self.restored_at = time.time()
        self.lifecycle.ids.raise_floor(checkpoint.checkpoint_id + 1)
        self.counts["restored"] += 1
        self.bus.publish(events.CheckpointRestored(self.job.job_id, checkpoint.checkpoint_id, checkpoint.directory))

    # -- snapshots (the REST layer shows them in Flink's shapes) -------------------------------
    def _record(self, checkpoint_id, status, is_savepoint, started, duration_s, size, reason=None,
                acknowledged=None, path=None, checkpointed_size=None) -> CheckpointRecord:
        subtasks = len(self.job.all_attempts())
        entry = CheckpointRecord(checkpoint_id, status, is_savepoint, started, time.time(), duration_s, size, subtasks,
                                 subtasks if acknowledged is None else acknowledged, reason, path,
                                 size if checkpointed_size is None else checkpointed_size)
        self.history.insert(0, entry)
        del self.history[HISTORY:]
        return entry

    def stats(self) -> CheckpointStatsSnapshot:
        """Counts, history and the latest restore, for /jobs/<id>/checkpoints."""
        restored = self.restored
        return CheckpointStatsSnapshot(
            self.counts["triggered"], self.counts["completed"], self.counts["failed"], len(self.lifecycle.pending),
            self.counts["restored"], tuple(self.history),
            RestoredCheckpoint(restored.checkpoint_id, restored.directory, restored.is_savepoint,
                               self.restored_at or 0.0) if restored else None,
            self.last_failure, {c.checkpoint_id: c.directory for c in self.completed})

    def checkpoint_details(self, checkpoint_id: int) -> CheckpointDetailsSnapshot | None:
        """One recent checkpoint with its subtasks (in progress ones too); None for one not kept."""
        return self.details.snapshot(checkpoint_id, self.history, time.time())

    def config(self) -> CheckpointConfigSnapshot:
        """The checkpointing settings, for /jobs/<id>/checkpoints/config."""
        return CheckpointConfigSnapshot(self.interval if self.periodic else 0.0, self.timeout, self.min_pause,
                                        self.max_concurrent, self.tolerable, self.base, self.savepoint_base)
