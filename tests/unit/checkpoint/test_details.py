"""The log of each recent checkpoint's participants and acknowledgements (checkpoint details)."""
from __future__ import annotations

from runtime.checkpoint.details import CheckpointDetails
from runtime.checkpoint.stats import CheckpointRecord
from runtime.ids import ExecutionAttemptId, JobId
from runtime.messages import AcknowledgeCheckpoint

JOB = JobId("a" * 32)
A, B = ExecutionAttemptId("att-a"), ExecutionAttemptId("att-b")


def ack(checkpoint_id: int, attempt, size: int, **timings) -> AcknowledgeCheckpoint:
    return AcknowledgeCheckpoint(JOB, attempt, checkpoint_id, "file:///x", size, size // 2, **timings)


def test_acknowledgements_fill_in_their_subtask_and_others_stay_pending():
    log = CheckpointDetails(keep=5)
    log.started(1, 100.0, False, {A: ("v1", 0, []), B: ("v2", 1, [])})
    log.acknowledged(ack(1, A, 800, sync_duration_ms=4, async_duration_ms=50, alignment_duration_ms=7,
                         start_delay_ms=1), 100.25)
    first, second = log.subtasks(1)
    assert (first.vertex_id, first.index, first.ack_time) == ("v1", 0, 100.25)
    assert (first.state_size, first.checkpointed_size) == (800, 400)
    assert (first.sync_ms, first.async_ms, first.alignment_ms, first.start_delay_ms) == (4, 50, 7, 1)
    assert (second.vertex_id, second.ack_time) == ("v2", None)


def test_an_in_progress_checkpoint_is_described_from_its_acknowledgements_and_a_done_one_from_history():
    log = CheckpointDetails(keep=5)
    log.started(3, 100.0, True, {A: ("v1", 0, []), B: ("v1", 1, [])})
    log.acknowledged(ack(3, A, 800), 101.0)
    running = log.snapshot(3, [], now=102.0)
    assert (running.record.status, running.record.is_savepoint, running.record.num_acknowledged) == ("IN_PROGRESS", True, 1)
    assert running.record.size == 800 and running.record.duration_s == 2.0
    done = CheckpointRecord(3, "COMPLETED", True, 100.0, 101.5, 1.5, 1600, 2, 2)
    assert log.snapshot(3, [done], now=200.0).record is done
    assert log.snapshot(4, [done], now=200.0) is None


def test_only_the_newest_checkpoints_are_kept_and_strays_are_ignored():
    log = CheckpointDetails(keep=2)
    for checkpoint_id in (1, 2, 3):
        log.started(checkpoint_id, float(checkpoint_id), False, {A: ("v1", 0, [])})
    assert log.subtasks(1) is None and log.subtasks(3) is not None
    log.acknowledged(ack(1, A, 10), 5.0)  # dropped: nothing to update
    log.acknowledged(ack(3, B, 10), 5.0)  # an attempt that did not take part
    assert all(s.ack_time is None for s in log.subtasks(3))
