"""Events on the JobManager's event stream (WebSocket ``/events``), the one feed that the notebook
widgets, the JupyterLab side panel and the dashboard all read.

On the wire each event is its tagged JSON object plus ``seq`` (a per-JobManager counter, so a
reader can tell it missed some) and ``ts`` (seconds since the epoch, JobManager clock).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from runtime.codec import wire
from runtime.ids import AllocationId, ExecutionAttemptId, JobId, JobVertexId, TaskManagerId
from runtime.messages import TaskManagerStatus, TaskMetrics


@wire
@dataclass
class TaskManagerRegistered:
    tm_id: TaskManagerId
    host: str
    data_port: int
    slots: int
    pid: int


@wire
@dataclass
class TaskManagerLost:
    tm_id: TaskManagerId
    reason: str


@wire
@dataclass
class TaskManagerDeregistered:
    """A TaskManager left on purpose (it was stopped): gone, not lost, and not replaced."""
    tm_id: TaskManagerId
    reason: str


@wire
@dataclass
class ResourceProviderDecision:
    """The local resource provider decided or did something: ``requested`` (a TaskManager to start, and
    why), ``started`` (its process runs), ``registered``, ``idle``, ``stopped``, ``refused`` (slots
    beyond what it may start) or ``given-up`` (a start that failed)."""
    decision: str
    tm_id: TaskManagerId | None
    reason: str
    slots: int = 0


@wire
@dataclass
class TaskManagerStatusReported:
    tm_id: TaskManagerId
    status: TaskManagerStatus


@wire
@dataclass
class SlotAllocated:
    tm_id: TaskManagerId
    slot_index: int
    allocation_id: AllocationId
    job_id: JobId
    job_name: str


@wire
@dataclass
class SlotFreed:
    tm_id: TaskManagerId
    slot_index: int
    allocation_id: AllocationId
    job_id: JobId


@wire
@dataclass
class JobSubmitted:
    job_id: JobId
    name: str


@wire
@dataclass
class JobStatusChanged:
    job_id: JobId
    name: str
    status: str
    previous: str | None
    attempt: int
    cause: str | None = None


@wire
@dataclass
class TaskStatusChanged:
    job_id: JobId
    vertex_id: JobVertexId
    task_name: str
    subtask_index: int
    attempt_id: ExecutionAttemptId
    attempt_number: int
    state: str
    tm_id: TaskManagerId | None = None
    slot_index: int | None = None
    error: str | None = None


@wire
@dataclass
class TaskMetricsReported:
    job_id: JobId
    vertex_id: JobVertexId
    task_name: str
    subtask_index: int
    metrics: TaskMetrics


@wire
@dataclass
class JobRestarting:
    job_id: JobId
    attempt: int
    cause: str
    delay_s: float


@wire
@dataclass
class CheckpointTriggered:
    job_id: JobId
    checkpoint_id: int
    is_savepoint: bool


@wire
@dataclass
class CheckpointCompleted:
    job_id: JobId
    checkpoint_id: int
    is_savepoint: bool
    duration_s: float
    state_size: int
    external_path: str


@wire
@dataclass
class CheckpointFailed:
    job_id: JobId
    checkpoint_id: int
    is_savepoint: bool
    reason: str


@wire
@dataclass
class CheckpointRestored:
    job_id: JobId
    checkpoint_id: int
    external_path: str


@wire
@dataclass
class LeaderChanged:
    leader_url: str
    leader_session_id: str
    jobmanagers: list[dict] = field(default_factory=list)
