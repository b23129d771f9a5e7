"""Checkpoint statistics and configuration."""
from __future__ import annotations


from runtime.jobmanager.rest.fields import F, message


# -- checkpoints -----------------------------------------------------------------------------
@message
class StatsSummary:
    min: int = F("min")
    max: int = F("max")
    avg: int = F("avg")
    p50: float = F("p50")
    p90: float = F("p90")
    p95: float = F("p95")
    p99: float = F("p99")
    p999: float = F("p999")


@message
class CheckpointStatistics:
    id: int = F("id")
    status: str = F("status", doc="IN_PROGRESS, COMPLETED or FAILED")
    is_savepoint: bool = F("is_savepoint")
    checkpoint_type: str = F("checkpoint_type", doc="CHECKPOINT or SAVEPOINT")
    trigger_timestamp: int = F("trigger_timestamp")
    latest_ack_timestamp: int = F("latest_ack_timestamp")
    state_size: int = F("state_size")
    checkpointed_size: int = F("checkpointed_size")
    end_to_end_duration: int = F("end_to_end_duration")
    num_subtasks: int = F("num_subtasks")
    num_acknowledged_subtasks: int = F("num_acknowledged_subtasks")
    external_path: str | None = F("external_path", default=None)
    failure_message: str | None = F("failure_message", default=None)
    failure_timestamp: int | None = F("failure_timestamp", default=None)
    alignment_buffered: int = F("alignment_buffered", default=0)
    processed_data: int = F("processed_data", default=0, doc="aligned checkpoints: none measured")
    persisted_data: int = F("persisted_data", default=0, doc="aligned checkpoints persist no in-flight data")
    discarded: bool | None = F("discarded", default=None, omit_none=True,
                               doc="a completed checkpoint no longer retained (savepoints are never discarded here)")


@message
class RestoredCheckpointStatistics:
    id: int = F("id")
    restore_timestamp: int = F("restore_timestamp")
    is_savepoint: bool = F("is_savepoint")
    external_path: str = F("external_path")


@message
class LatestCheckpoints:
    completed: CheckpointStatistics | None = F("completed")
    savepoint: CheckpointStatistics | None = F("savepoint")
    failed: CheckpointStatistics | None = F("failed")
    restored: RestoredCheckpointStatistics | None = F("restored")


@message
class CheckpointCounts:
    restored: int = F("restored")
    total: int = F("total")
    in_progress: int = F("in_progress")
    completed: int = F("completed")
    failed: int = F("failed")


@message
class CheckpointSummary:
    end_to_end_duration: StatsSummary = F("end_to_end_duration")
    state_size: StatsSummary = F("state_size")
    checkpointed_size: StatsSummary = F("checkpointed_size")


@message
class CheckpointingStatistics:
    counts: CheckpointCounts = F("counts")
    summary: CheckpointSummary = F("summary")
    latest: LatestCheckpoints = F("latest")
    history: list[CheckpointStatistics] = F("history")


@message
class ExternalizedCheckpointInfo:
    enabled: bool = F("enabled", default=True)
    delete_on_cancellation: bool = F("delete_on_cancellation", default=False)


@message
class CheckpointConfigInfo:
    mode: str = F("mode", default="exactly_once")
    interval: int = F("interval", doc="ms; Long.MAX_VALUE when periodic checkpoints are off")
    timeout: int = F("timeout")
    min_pause: int = F("min_pause")
    max_concurrent: int = F("max_concurrent")
    externalization: ExternalizedCheckpointInfo = F("externalization", factory=ExternalizedCheckpointInfo)
    state_backend: str = F("state_backend", default="KeyGroupedArrowStateBackend")
    checkpoint_storage: str = F("checkpoint_storage")
    savepoints_dir: str = F("savepoints_dir")
    unaligned_checkpoints: bool = F("unaligned_checkpoints", default=False)
    tolerable_failed_checkpoints: int = F("tolerable_failed_checkpoints")
    checkpoints_after_tasks_finish: bool = F("checkpoints_after_tasks_finish", default=False)
