"""What a job's checkpoint coordinator tells about its checkpoints: typed, read-only snapshots that the
Dispatcher hands to the REST layer (runtime.snapshots holds the others)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CheckpointConfigSnapshot:
    interval_s: float  # 0: periodic checkpoints off
    timeout_s: float
    min_pause_s: float
    max_concurrent: int
    tolerable_failures: int
    storage: str
    savepoints_dir: str


@dataclass(frozen=True)
class CheckpointRecord:
    """One checkpoint or savepoint in a job's history."""
    checkpoint_id: int
    status: str  # IN_PROGRESS, COMPLETED, FAILED
    is_savepoint: bool
    trigger_time: float
    latest_ack_time: float
    duration_s: float
    size: int
    num_subtasks: int
    num_acknowledged: int = 0
    failure: str | None = None
    external_path: str | None = None
    checkpointed_size: int | None = None  # bytes written for it (incremental: less than size); None: size


@dataclass(frozen=True)
class RestoredCheckpoint:
    checkpoint_id: int
    path: str
    is_savepoint: bool
    restore_time: float


@dataclass(frozen=True)
class CheckpointStatsSnapshot:
    """A job's checkpoint counts and history (newest first)."""
    triggered: int
    completed: int
    failed: int
    in_progress: int
    restored: int
    history: tuple[CheckpointRecord, ...]
    latest_restored: RestoredCheckpoint | None = None
    latest_failed: CheckpointRecord | None = None
    retained_paths: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SubtaskCheckpointStats:
    """One subtask's part in one checkpoint (Flink's SubtaskCheckpointStatistics). ``ack_time`` None:
    it has not acknowledged. The durations are what its TaskManager measured (None when it did not say):
    ``sync_ms`` taking the snapshot in memory, ``async_ms`` writing it, ``alignment_ms`` from the first
    barrier to the last one of its inputs, ``start_delay_ms`` from the trigger to its first barrier."""
    vertex_id: str
    index: int
    ack_time: float | None = None
    state_size: int = 0
    checkpointed_size: int = 0
    sync_ms: int | None = None
    async_ms: int | None = None
    alignment_ms: int | None = None
    start_delay_ms: int | None = None


@dataclass(frozen=True)
class CheckpointDetailsSnapshot:
    """A checkpoint with every participating subtask (for /jobs/:jobid/checkpoints/details/:checkpointid)."""
    record: CheckpointRecord
    subtasks: tuple[SubtaskCheckpointStats, ...]
