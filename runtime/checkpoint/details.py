"""Which subtasks took part in each recent checkpoint, and what each one's acknowledgement said.

The checkpoint coordinator tells this log when a checkpoint starts (its participants) and hands it every
acknowledgement; the REST layer reads a checkpoint's details back (Flink's
``/jobs/:jobid/checkpoints/details/:checkpointid`` and ``.../subtasks/:vertexid``). Plain bookkeeping on the
JobManager's loop, bounded to the last ``keep`` checkpoints.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from runtime.checkpoint.stats import CheckpointDetailsSnapshot, CheckpointRecord, SubtaskCheckpointStats
from runtime.ids import ExecutionAttemptId
from runtime.messages import AcknowledgeCheckpoint


@dataclass
class _Started:
    trigger_time: float
    is_savepoint: bool
    subtasks: dict[ExecutionAttemptId, SubtaskCheckpointStats]


class CheckpointDetails:
    """Each recent checkpoint's participants and their acknowledgements, newest kept."""

    def __init__(self, keep: int):
        self.keep = keep
        self._checkpoints: dict[int, _Started] = {}

    def started(self, checkpoint_id: int, trigger_time: float, is_savepoint: bool,
                participants: dict[ExecutionAttemptId, tuple]) -> None:
        """``participants``: attempt -> (vertex id, subtask index, ...), as the job's context gives them."""
        self._checkpoints[checkpoint_id] = _Started(trigger_time, is_savepoint, {
            attempt: SubtaskCheckpointStats(str(info[0]), int(info[1])) for attempt, info in participants.items()})
        for old in sorted(self._checkpoints)[:-self.keep]:
            del self._checkpoints[old]

    def acknowledged(self, msg: AcknowledgeCheckpoint, at: float) -> None:
        started = self._checkpoints.get(msg.checkpoint_id)
        pending = started.subtasks.get(msg.attempt_id) if started else None
        if started is None or pending is None:
            return  # a checkpoint older than the ones kept, or an attempt that did not take part
        started.subtasks[msg.attempt_id] = dataclasses.replace(
            pending, ack_time=at, state_size=msg.state_size,
            checkpointed_size=msg.state_size if msg.checkpointed_size is None else msg.checkpointed_size,
            sync_ms=msg.sync_duration_ms, async_ms=msg.async_duration_ms, alignment_ms=msg.alignment_duration_ms,
            start_delay_ms=msg.start_delay_ms)

    def subtasks(self, checkpoint_id: int) -> tuple[SubtaskCheckpointStats, ...] | None:
        """Every participant of the checkpoint by vertex and index; None for one not kept here."""
        started = self._checkpoints.get(checkpoint_id)
        if started is None:
            return None
        return tuple(sorted(started.subtasks.values(), key=lambda s: (s.vertex_id, s.index)))

    def snapshot(self, checkpoint_id: int, history: list[CheckpointRecord], now: float) -> CheckpointDetailsSnapshot | None:
        """The checkpoint's record from ``history`` (or, in progress, what its acknowledgements say so
        far) with its subtasks; None for one not kept here."""
        started = self._checkpoints.get(checkpoint_id)
        subtasks = self.subtasks(checkpoint_id)
        if started is None or subtasks is None:
            return None
        record = next((r for r in history if r.checkpoint_id == checkpoint_id), None)
        if record is None:
            acked = [s for s in subtasks if s.ack_time is not None]
            record = CheckpointRecord(checkpoint_id, "IN_PROGRESS", started.is_savepoint, started.trigger_time,
                                      max((s.ack_time or 0.0 for s in acked), default=started.trigger_time),
                                      now - started.trigger_time, sum(s.state_size for s in acked), len(subtasks),
                                      len(acked), checkpointed_size=sum(s.checkpointed_size for s in acked))
        return CheckpointDetailsSnapshot(record, subtasks)
