"""A task's snapshots on their way to checkpoint storage (Flink's asynchronous part of a checkpoint).

The task takes its snapshot in memory between bundles and forwards the barrier; the snapshot is then
written on the TaskManager's upload threads while processing goes on, and acknowledged to the JobManager
(or declined, if it cannot be written: that fails this checkpoint alone). Each upload asks its fence before
every file (runtime.checkpoint.fencing): a cancelled attempt, or a TaskManager that follows another leader or
went unheard past the heartbeat timeout, writes nothing more. With incremental checkpoints the uploads
remember what the last completed checkpoint holds and write only the key groups changed since
(runtime.checkpoint.incremental). A task reports FINISHED only once every upload it started is done: one
written after its job ended would be left for nobody to delete.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from runtime.checkpoint import storage
from runtime.checkpoint.fencing import run_fenced
from runtime.checkpoint.incremental import IncrementalBase, SnapshotRefs
from runtime.checkpoint.task_state import write_snapshot
from runtime.data_messages import CheckpointBarrier
from runtime.messages import AcknowledgeCheckpoint, DeclineCheckpoint, TaskDeploymentDescriptor
from runtime.taskmanager.metrics import TaskMetricsTracker
from runtime.taskmanager.services import TaskServices


class SnapshotUploads:
    """The uploads of one task attempt, and its incremental base; runs on the TaskManager's loop."""

    def __init__(self, tdd: TaskDeploymentDescriptor, services: TaskServices, metrics: TaskMetricsTracker,
                 cancelled: Callable[[], bool]):
        """``cancelled()``: whether the attempt was cancelled (its uploads' fences then refuse)."""
        self.tdd, self.services, self.metrics, self.cancelled = tdd, services, metrics, cancelled
        self.incremental = IncrementalBase() if tdd.incremental_checkpoints else None
        self._pending: set[asyncio.Task] = set()

    def start(self, barrier: CheckpointBarrier, meta: dict, tables: dict) -> None:
        """Write a snapshot taken for ``barrier`` in the background, then acknowledge it."""
        upload = asyncio.get_running_loop().create_task(self._upload(barrier, meta, tables, self._base_for(barrier)))
        self._pending.add(upload)
        upload.add_done_callback(self._pending.discard)

    async def all_written(self) -> None:
        """Until every upload started so far is written and acknowledged (or declined)."""
        await asyncio.gather(*self._pending)

    def completed(self, checkpoint_id: int) -> None:
        if self.incremental is not None:
            self.incremental.completed(checkpoint_id)

    def aborted(self, checkpoint_id: int) -> None:
        if self.incremental is not None:
            self.incremental.aborted(checkpoint_id)

    def _base_for(self, barrier: CheckpointBarrier) -> SnapshotRefs | None:
        """What the snapshot is compared with: the last completed checkpoint's refs, none ({}) for a FULL
        checkpoint, None (self-contained, no shared files) for savepoints or with incremental checkpoints off."""
        if self.incremental is None or barrier.is_savepoint:
            return None
        return {} if barrier.full else self.incremental.base

    async def _upload(self, barrier: CheckpointBarrier, meta: dict, tables: dict, base: SnapshotRefs | None) -> None:
        """Write the snapshot (only what changed since ``base``, when not None) and acknowledge it."""
        checkpoint_id, target = barrier.checkpoint_id, barrier.target
        name = f"{self.tdd.vertex_id}-{self.tdd.subtask_index}-{self.tdd.attempt_id}"  # a stale one lands aside
        fence = self.services.upload_fence(self.tdd.attempt_id, checkpoint_id, self.cancelled)  # asked before each file
        try:
            written = await self.services.run_io(lambda: run_fenced(fence, write_snapshot, target, name, meta, tables,
                                                                    base))
        except Exception as err:  # noqa: BLE001 - a snapshot that cannot be written declines its checkpoint alone
            reason = str(err) if isinstance(err, storage.StorageError) else f"{type(err).__name__}: {err}"
            self.services.send(DeclineCheckpoint(self.tdd.job_id, self.tdd.attempt_id, checkpoint_id, reason))
            return
        if base is not None and self.incremental is not None:
            self.incremental.taken(checkpoint_id, written.refs)
        self.metrics.last_checkpoint = (checkpoint_id, max(0.0, time.time() - barrier.timestamp), written.state_size)
        self.services.send(AcknowledgeCheckpoint(self.tdd.job_id, self.tdd.attempt_id, checkpoint_id, written.pointer,
                                                 written.state_size, written.checkpointed_size, list(written.uploaded),
                                                 list(written.reused)))
