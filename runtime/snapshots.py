"""What the Dispatcher hands out about the cluster and its jobs: typed, read-only snapshots.

The JobMaster, the ResourceManager and the Dispatcher describe themselves with these classes and
nothing else; they know no JSON field names. The REST layer (runtime.jobmanager.rest) turns a
snapshot into Flink's message shapes, so a field name is decided in one place. Times are seconds
since the epoch (JobManager clock); ``None`` where something has not happened yet.
They sit below the JobManager's roles, so that runtime.metrics (a layer below them) reads them too.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

from runtime.checkpoint.stats import (CheckpointConfigSnapshot, CheckpointDetailsSnapshot,  # noqa: F401 - snapshots too
                                      CheckpointRecord, CheckpointStatsSnapshot, RestoredCheckpoint,
                                      SubtaskCheckpointStats)
from runtime.ids import AllocationId, ExecutionAttemptId, JobId, JobVertexId, TaskManagerId
from runtime.messages import TaskManagerStatus, TaskMetrics
from runtime.spark_stages import SparkStageRecord
from runtime.states import ExecutionState, JobStatus


@dataclass(frozen=True)
class SubtaskSnapshot:
    """The current attempt of one subtask."""
    index: int
    state: ExecutionState
    attempt: int
    attempt_id: ExecutionAttemptId
    tm_id: TaskManagerId | None
    host: str | None
    slot: int | None
    state_times: dict[ExecutionState, float]
    metrics: TaskMetrics | None
    failure: str | None
    spark_stages: tuple[SparkStageRecord, ...] = ()  # its recent Spark stages, oldest first (its drill-down)

    @property
    def start_time(self) -> float | None:
        return self.state_times.get(ExecutionState.DEPLOYING)

    @property
    def end_time(self) -> float | None:
        return max((t for s, t in self.state_times.items() if s.is_terminal), default=None)


@dataclass(frozen=True)
class VertexSnapshot:
    """A task (a chain of operators) and its subtasks."""
    id: JobVertexId
    name: str
    parallelism: int
    max_parallelism: int
    state: ExecutionState
    operators: tuple[str, ...]
    subtasks: tuple[SubtaskSnapshot, ...]

    def task_counts(self) -> dict[ExecutionState, int]:
        return {s: sum(1 for sub in self.subtasks if sub.state == s) for s in ExecutionState}


@dataclass(frozen=True)
class PlanInput:
    vertex_id: JobVertexId
    ship_strategy: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class PlanNode:
    """One task of the job's dataflow plan."""
    vertex_id: JobVertexId
    description: str
    parallelism: int
    operators: tuple[tuple[str, str, str], ...]  # (operator id, name, kind)
    inputs: tuple[PlanInput, ...]


@dataclass(frozen=True)
class JobSummary:
    """One job as a list of jobs shows it (Flink's JobDetails)."""
    job_id: JobId
    name: str
    state: JobStatus
    start_time: float
    end_time: float | None
    last_modification: float
    parallelism: int
    restarts: int
    task_counts: dict[ExecutionState, int]
    records_out_per_s: float
    batch: bool
    user: str = "admin"  # who submitted it (runtime.users; "admin": the cluster token's holder)

    def duration(self, now: float) -> float:
        return (self.end_time or now) - self.start_time


@dataclass(frozen=True)
class JobSnapshot:
    """One job in full (Flink's ArchivedExecutionGraph): tasks, subtasks, plan, state times."""
    summary: JobSummary
    status_times: dict[JobStatus, float]
    vertices: tuple[VertexSnapshot, ...]
    plan: tuple[PlanNode, ...]
    max_parallelism: int
    stoppable: bool
    statement: str | None = None  # the SQL the job was planned from
    restart_strategy: str = ""  # the strategy's name (restart-strategy.type, or Flink's default)
    settings: dict[str, str] = field(default_factory=dict)  # what the job set beside the cluster's configuration

    def vertex(self, vertex_id: str) -> VertexSnapshot | None:
        return next((v for v in self.vertices if v.id == vertex_id), None)


@dataclass(frozen=True)
class FailureRecord:
    """One failure the job handled (restart or end), newest first in a job's history."""
    exception_name: str
    stacktrace: str
    timestamp: float
    task_name: str | None
    endpoint: str | None
    tm_id: TaskManagerId | None
    attempt: int


@dataclass(frozen=True)
class SlotSnapshot:
    index: int
    allocation_id: AllocationId | None
    job_id: JobId | None
    job_name: str
    tasks: tuple[str, ...]


@dataclass(frozen=True)
class TaskManagerSnapshot:
    """A registered TaskManager, or one that was lost (``lost_reason`` set, no slots)."""
    tm_id: TaskManagerId
    host: str
    data_port: int | None
    pid: int | None
    spark_master: str
    slots_number: int
    free_slots: int
    slots: tuple[SlotSnapshot, ...]
    registered_at: float | None
    heartbeat_age_s: float | None
    lost_reason: str | None = None
    lost_at: float | None = None
    status: TaskManagerStatus | None = None  # what it last said about itself (memory, log lines)


@dataclass(frozen=True)
class ClusterOverview:
    taskmanagers: int
    slots_total: int
    slots_available: int
    jobs_running: int
    jobs_finished: int
    jobs_cancelled: int
    jobs_failed: int


class OperationState(str, enum.Enum):
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETED = "COMPLETED"


@dataclass(frozen=True)
class OperationStatus:
    """An asynchronous operation (savepoint, checkpoint, disposal) a client polls by trigger id:
    its ``result`` (a savepoint's location, a checkpoint's id) or its ``failure`` once COMPLETED."""
    state: OperationState
    result: str | int | None = None
    failure: str | None = None


@dataclass(frozen=True)
class ResultsPage:
    """Rows of a job's collect sink from ``offset``: an Arrow table or None, and where to go on."""
    offset: int
    next_offset: int
    total: int
    dropped: int
    finished: bool
    job_state: JobStatus
    table: object | None  # pyarrow.Table
    schema: object | None  # pyarrow.Schema, known once the first rows arrived


@dataclass(frozen=True)
class PushSourceSnapshot:
    source_id: str
    name: str
    schema: str
    rows: int
    closed: bool


@dataclass(frozen=True)
class PushAccepted:
    """Rows a push source took: offsets ``first`` (inclusive) to ``end`` (exclusive)."""
    source: PushSourceSnapshot
    first: int
    end: int
