"""Every message that crosses a process boundary, defined once and used by both sides.

Three wires carry them:

* the control channel, a WebSocket a TaskManager holds to the leading JobManager (``/control``);
  messages from the JobManager carry its leader session id in the envelope (see ``Envelope``), and a
  TaskManager drops any whose id is not the one it registered under;
* the data channel between TaskManagers (``runtime.taskmanager.network``): its frame headers are in
  ``runtime.data_messages``;
* the event stream (``/events``): see ``runtime.events``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runtime.codec import wire
from runtime.ids import AllocationId, ExecutionAttemptId, JobId, JobVertexId, LeaderSessionId, TaskManagerId
from runtime.jobgraph import OperatorSpec
from runtime.spark_stages import SparkWork
from runtime.python_dependencies import PythonDependencies
from runtime.states import ExecutionState


# -- Control channel: envelope ---------------------------------------------------------------------
@wire
@dataclass
class Envelope:
    """What travels in one WebSocket frame: the message plus the sender's fencing token."""
    leader_session_id: LeaderSessionId | None
    body: Any


# -- Registration and heartbeats (TaskManager <-> ResourceManager) ---------------------------------
@wire
@dataclass
class SlotStatus:
    index: int
    allocation_id: AllocationId | None = None
    job_id: JobId | None = None


@wire
@dataclass
class RegisterTaskManager:
    tm_id: TaskManagerId
    host: str
    data_port: int
    slots: int
    pid: int
    spark_master: str
    slot_report: list[SlotStatus] = field(default_factory=list)
    ready: bool = True  # its Spark session is up; False while its JVM starts (see Heartbeat)


@wire
@dataclass
class RegistrationAccepted:
    tm_id: TaskManagerId
    leader_session_id: LeaderSessionId
    heartbeat_interval: float
    heartbeat_timeout: float


@wire
@dataclass
class RegistrationRejected:
    reason: str


@wire
@dataclass
class Heartbeat:
    """Also sent at once when the TaskManager's Spark session comes up (``ready``)."""
    tm_id: TaskManagerId
    slot_report: list[SlotStatus]
    ready: bool = True


@wire
@dataclass
class HeartbeatAck:
    tm_id: TaskManagerId


@wire
@dataclass
class Disconnect:
    """The JobManager drops this TaskManager (lost by heartbeat, shutting down, or fenced), or the TaskManager
    leaves on purpose (it is stopping: not a loss, so not replaced; Flink's disconnectTaskManager)."""
    reason: str


# -- Slots (ResourceManager asks, TaskManager offers, JobMaster accepts) ---------------------------
@wire
@dataclass
class RequestSlot:
    allocation_id: AllocationId
    job_id: JobId
    slot_index: int


@wire
@dataclass
class SlotOffer:
    allocation_id: AllocationId
    job_id: JobId
    slot_index: int
    accepted: bool
    reason: str = ""


@wire
@dataclass
class FreeSlot:
    allocation_id: AllocationId


# -- Tasks (JobMaster -> TaskManager and back) -----------------------------------------------------
@wire
@dataclass
class ProducerLocation:
    """Where one upstream subtask's output lives; a consumer connects here for its subpartition."""
    attempt_id: ExecutionAttemptId
    subtask_index: int
    tm_id: TaskManagerId
    host: str
    data_port: int


@wire
@dataclass
class InputGateDescriptor:
    upstream_vertex: JobVertexId
    partitioning: str
    producers: list[ProducerLocation]


@wire
@dataclass
class OutputDescriptor:
    downstream_vertex: JobVertexId
    partitioning: str
    keys: list[str]
    num_consumers: int


@wire
@dataclass
class TaskDeploymentDescriptor:
    job_id: JobId
    job_name: str
    vertex_id: JobVertexId
    task_name: str
    attempt_id: ExecutionAttemptId
    attempt_number: int
    subtask_index: int
    parallelism: int
    max_parallelism: int
    allocation_id: AllocationId
    operators: list[OperatorSpec]
    inputs: list[InputGateDescriptor] = field(default_factory=list)
    outputs: list[OutputDescriptor] = field(default_factory=list)
    config: dict[str, str] = field(default_factory=dict)
    runtime_mode: str = "streaming"
    checkpointing: bool = False
    incremental_checkpoints: bool = False  # keyed state uploads only the key groups changed since the last one
    # Snapshots of every old subtask that ran one of this task's operators (restart or savepoint).
    restore: list[str] = field(default_factory=list)
    restore_checkpoint_id: int | None = None
    python_dependencies: PythonDependencies | None = None  # the job's (runtime.python_dependencies)


@wire
@dataclass
class DeployTask:
    descriptor: TaskDeploymentDescriptor


@wire
@dataclass
class CancelTask:
    attempt_id: ExecutionAttemptId


@wire
@dataclass
class TaskStateChanged:
    """An attempt's new state, as its TaskManager saw it happen (the JobMaster's failover decides)."""
    job_id: JobId
    attempt_id: ExecutionAttemptId
    state: ExecutionState
    error: str | None = None


@wire
@dataclass
class TaskMetrics:
    job_id: JobId
    attempt_id: ExecutionAttemptId
    records_in: int = 0
    records_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    records_in_per_s: float = 0.0
    records_out_per_s: float = 0.0
    backpressure_ratio: float = 0.0
    watermark: float | None = None
    bundle_time_s: float = 0.0
    bundles: int = 0
    sent_to: dict[str, int] = field(default_factory=dict)
    late_records: int = 0
    state_rows: int = 0
    # Flink's busyTime-, idleTime- (input) and backPressuredTime- (output credit) MsPerSecond: add up to about 1000
    busy_time_ms_per_s: float = 0.0
    idle_time_ms_per_s: float = 0.0
    backpressured_time_ms_per_s: float = 0.0
    accumulated_busy_ms: int = 0
    accumulated_idle_ms: int = 0
    accumulated_backpressured_ms: int = 0
    # this subtask's part of its latest acknowledged checkpoint: trigger to acknowledgement, bytes written
    last_checkpoint_id: int | None = None
    last_checkpoint_duration_s: float | None = None
    last_checkpoint_size: int | None = None
    # time per bundle phase (runtime.taskmanager.metrics.PHASES): seconds in all, times entered, longest since last report
    phase_s: dict[str, float] = field(default_factory=dict)
    phase_count: dict[str, int] = field(default_factory=dict)
    phase_max_s: dict[str, float] = field(default_factory=dict)
    pending_records: int | None = None  # Flink's pendingRecords: rows a rate-limited source is behind its pace
    spark: SparkWork | None = None  # its Spark stages since the last report, and its totals (runtime.spark_stages)


@wire
@dataclass
class TaskManagerStatus:
    """What a TaskManager says about itself every few heartbeats, for its dashboard page."""
    tm_id: TaskManagerId
    rss_bytes: int  # the process and its children (the Spark JVM)
    spark_driver_memory: str
    log_lines: list[str] = field(default_factory=list)
    hardware: dict[str, int] = field(default_factory=dict)  # Flink's HardwareDescription: cpuCores, physicalMemory
    jvm: dict[str, float] = field(default_factory=dict)  # its Spark JVM's Status.JVM.* metrics (runtime.taskmanager.status)
    spark_ui: str | None = None  # its Spark driver's web UI (spark.ui.enabled=true), as the JobManager reaches it


@wire
@dataclass
class CollectResult:
    """Rows from a collect sink on their way to the client, as base64 Arrow IPC stream bytes."""
    job_id: JobId
    attempt_id: ExecutionAttemptId
    sink_id: str
    subtask_index: int
    arrow_b64: str
    rows: int
    checkpoint_id: int | None = None


@wire
@dataclass
class FetchPushedRows:
    """A push source subtask asks its JobMaster for its next rows of the push log (runtime.connectors.push).

    ``request_id`` is set by the TaskManager, which matches the PushedRows reply to it. ``position``
    counts in the log ``epoch`` names; a position from another epoch (another job's log) means 0.
    """
    job_id: JobId
    request_id: int
    source_id: str
    subtask_index: int
    parallelism: int
    epoch: str
    position: int
    max_rows: int


@wire
@dataclass
class PushedRows:
    """The answer to FetchPushedRows: rows as base64 Arrow IPC, the position after them, and whether
    the source is closed with nothing of this subtask's share left."""
    request_id: int
    epoch: str = ""
    position: int = 0
    rows: int = 0
    arrow_b64: str | None = None
    finished: bool = False
    error: str | None = None


# -- Checkpoints -----------------------------------------------------------------------------------
@wire
@dataclass
class TriggerCheckpoint:
    job_id: JobId
    attempt_id: ExecutionAttemptId
    checkpoint_id: int
    timestamp: float
    is_savepoint: bool = False
    target: str = ""
    stop: bool = False  # stop-with-savepoint: tasks end after this one
    drain: bool = False  # stop with drain: fire everything a watermark of +infinity would before the snapshot
    full: bool = False  # incremental checkpoints: upload every key group, refer to no earlier checkpoint


@wire
@dataclass
class AcknowledgeCheckpoint:
    job_id: JobId
    attempt_id: ExecutionAttemptId
    checkpoint_id: int
    state_pointer: str | None
    state_size: int = 0  # bytes of the subtask's whole state
    checkpointed_size: int | None = None  # bytes written for this checkpoint; None: state_size (a full one)
    # incremental: shared files written for it, and earlier ones its state refers to (the JobManager counts references)
    shared_uploaded: list[str] = field(default_factory=list)
    shared_reused: list[str] = field(default_factory=list)
    # measured by the subtask (None: not measured): snapshot in memory, its upload, barrier alignment, trigger to barrier
    sync_duration_ms: int | None = None
    async_duration_ms: int | None = None
    alignment_duration_ms: int | None = None
    start_delay_ms: int | None = None


@wire
@dataclass
class DeclineCheckpoint:
    job_id: JobId
    attempt_id: ExecutionAttemptId
    checkpoint_id: int
    reason: str


@wire
@dataclass
class NotifyCheckpointComplete:
    job_id: JobId
    attempt_id: ExecutionAttemptId
    checkpoint_id: int


@wire
@dataclass
class NotifyCheckpointAborted:
    job_id: JobId
    attempt_id: ExecutionAttemptId
    checkpoint_id: int
