"""One checkpoint in detail: each task's part, and each subtask's (Flink's checkpoint details)."""
from __future__ import annotations

from runtime.jobmanager.rest.fields import F, message
from runtime.jobmanager.rest.messages.checkpoints import CheckpointStatistics, StatsSummary


@message
class TaskCheckpointStatistics:
    """One task's part in a checkpoint: its subtasks' acknowledgements summed (sizes) or the latest (times)."""
    id: int = F("id")
    status: str = F("status")
    latest_ack_timestamp: int = F("latest_ack_timestamp", doc="ms; -1 before the first acknowledgement")
    checkpointed_size: int = F("checkpointed_size")
    state_size: int = F("state_size")
    end_to_end_duration: int = F("end_to_end_duration", doc="ms from the trigger to the task's last acknowledgement")
    alignment_buffered: int = F("alignment_buffered", default=0)
    processed_data: int = F("processed_data", default=0)
    persisted_data: int = F("persisted_data", default=0, doc="aligned checkpoints persist no in-flight data")
    num_subtasks: int = F("num_subtasks")
    num_acknowledged_subtasks: int = F("num_acknowledged_subtasks")


@message
class CheckpointStatisticsWithTasks(CheckpointStatistics):
    """``/jobs/:jobid/checkpoints/details/:checkpointid``: the checkpoint and each task's part, by vertex id."""
    tasks: dict[str, TaskCheckpointStatistics] = F("tasks")


@message
class CheckpointDuration:
    sync: int = F("sync", doc="ms taking the snapshot in memory (-1: not measured)")
    asynchronous: int = F("async", doc="ms writing it to checkpoint storage (-1: not measured)")


@message
class CheckpointAlignment:
    buffered: int = F("buffered", default=0)
    processed: int = F("processed", default=0)
    persisted: int = F("persisted", default=0)
    duration: int = F("duration", doc="ms from the subtask's first barrier to its last (-1: not measured)")


@message
class SubtaskCheckpointStatistics:
    """A subtask's acknowledgement (``status`` completed), or ``pending_or_failed`` with its index alone."""
    index: int = F("index")
    status: str = F("status", doc="completed or pending_or_failed")
    ack_timestamp: int | None = F("ack_timestamp", default=None, omit_none=True)
    end_to_end_duration: int | None = F("end_to_end_duration", default=None, omit_none=True)
    state_size: int | None = F("state_size", default=None, omit_none=True)
    checkpointed_size: int | None = F("checkpointed_size", default=None, omit_none=True)
    checkpoint: CheckpointDuration | None = F("checkpoint", default=None, omit_none=True)
    alignment: CheckpointAlignment | None = F("alignment", default=None, omit_none=True)
    start_delay: int | None = F("start_delay", default=None, omit_none=True,
                                doc="ms from the trigger to the subtask's first barrier (-1: not measured)")
    unaligned_checkpoint: bool | None = F("unaligned_checkpoint", default=None, omit_none=True)
    aborted: bool | None = F("aborted", default=None, omit_none=True)


@message
class CheckpointDurationSummary:
    sync: StatsSummary = F("sync")
    asynchronous: StatsSummary = F("async")


@message
class CheckpointAlignmentSummary:
    buffered: StatsSummary = F("buffered")
    processed: StatsSummary = F("processed")
    persisted: StatsSummary = F("persisted")
    duration: StatsSummary = F("duration")


@message
class TaskCheckpointSubtasksSummary:
    """Each measure over the subtasks that acknowledged (measures a subtask did not report are left out)."""
    checkpointed_size: StatsSummary = F("checkpointed_size")
    state_size: StatsSummary = F("state_size")
    end_to_end_duration: StatsSummary = F("end_to_end_duration")
    checkpoint_duration: CheckpointDurationSummary = F("checkpoint_duration")
    alignment: CheckpointAlignmentSummary = F("alignment")
    start_delay: StatsSummary = F("start_delay")


@message
class TaskCheckpointStatisticsWithSubtaskDetails(TaskCheckpointStatistics):
    """``.../checkpoints/details/:checkpointid/subtasks/:vertexid``: one task's part, subtask by subtask."""
    summary: TaskCheckpointSubtasksSummary = F("summary")
    subtasks: list[SubtaskCheckpointStatistics] = F("subtasks")
