"""Gateways: the small typed interfaces through which one role of the JobManager calls another.

A role holds another only through its gateway, never through its fields, so each can be replaced by a
fake in a unit test and read on its own. Names follow Flink's (RestfulGateway, DispatcherGateway, ...).

- RestfulGateway / DispatcherGateway: what the REST layer (runtime.jobmanager.rest) may ask the
  Dispatcher. Everything it returns is a typed snapshot (runtime.snapshots); the REST layer
  turns those into Flink's JSON messages.
- LeaderRetriever: what the REST endpoint needs to know about leadership (serve, or refuse with 503
  naming the leader), like Flink's leader retrieval in front of its handlers.
- ResourceManagerGateway: what JobMasters (slots) and TaskManagers' control connections
  (registration, heartbeats, slot offers) ask of the ResourceManager.
- AllocatedSlot: a slot handed to a job, with the TaskExecutorGateway (runtime.gateways) of the
  TaskManager holding it, so a JobMaster never looks TaskManagers up.
- JobMasterGateway: what the control channel and the Dispatcher ask of one job's JobMaster.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from runtime.errors import ClusterError
from runtime.gateways import TaskExecutorGateway
from runtime.ids import AllocationId, JobId, TaskManagerId, TriggerId
from runtime.jobgraph import JobGraph
from runtime.snapshots import (CheckpointConfigSnapshot, CheckpointDetailsSnapshot, CheckpointStatsSnapshot,
                               ClusterOverview,
                               FailureRecord, JobSnapshot, JobSummary, OperationStatus, PushAccepted,
                               PushSourceSnapshot, ResultsPage, TaskManagerSnapshot)
from runtime.messages import (AcknowledgeCheckpoint, CollectResult, DeclineCheckpoint, FetchPushedRows,
                              PushedRows, RegisterTaskManager,
                              SlotOffer, SlotStatus, TaskManagerStatus, TaskMetrics, TaskStateChanged)
from runtime.states import JobStatus


class UnknownJob(ClusterError, KeyError):
    """No job with this id on this Dispatcher."""

    def __init__(self, job_id: str):
        super().__init__(job_id)
        self.job_id = job_id

    def __str__(self) -> str:
        return f"Job {self.job_id} not found"


class UnknownTaskManager(ClusterError, KeyError):
    def __init__(self, tm_id: str):
        super().__init__(tm_id)
        self.tm_id = tm_id

    def __str__(self) -> str:
        return f"TaskManager {self.tm_id} not found"


class UnknownCheckpoint(ClusterError, KeyError):
    """A checkpoint id the job does not know (or no longer keeps the details of)."""

    def __init__(self, job_id: str, checkpoint_id: int):
        super().__init__(str(checkpoint_id))
        self.job_id, self.checkpoint_id = job_id, checkpoint_id

    def __str__(self) -> str:
        return f"job {self.job_id} has no details of checkpoint {self.checkpoint_id} (only its recent ones are kept)"


class OperationRefused(ClusterError, ValueError):
    """An operation the job's state does not allow now (e.g. a savepoint of a job that is not RUNNING)."""


class EventSubscription(Protocol):
    seq: int  # the last event before the subscription began

    async def next(self) -> dict | None: ...

    def close(self) -> None: ...


class RestfulGateway(Protocol):
    """Read and control jobs and the cluster; every method answers at once (long operations return a
    trigger id to poll). Job ids that do not exist raise UnknownJob."""

    def cluster_overview(self) -> ClusterOverview: ...

    def list_jobs(self) -> list[JobSummary]: ...

    def request_job(self, job_id: str) -> JobSnapshot: ...

    def job_owner(self, job_id: str) -> str:
        """The user who submitted the job (runtime.users)."""
        ...

    def job_status(self, job_id: str) -> JobStatus: ...

    def job_exceptions(self, job_id: str) -> list[FailureRecord]: ...

    def checkpoint_stats(self, job_id: str) -> CheckpointStatsSnapshot: ...

    def checkpoint_config(self, job_id: str) -> CheckpointConfigSnapshot: ...

    def checkpoint_details(self, job_id: str, checkpoint_id: int) -> CheckpointDetailsSnapshot: ...

    def request_task_managers(self) -> list[TaskManagerSnapshot]: ...

    def request_task_manager(self, tm_id: str) -> TaskManagerSnapshot: ...

    def cancel_job(self, job_id: str) -> None: ...

    def trigger_savepoint(self, job_id: str, target: str | None, cancel_job: bool) -> TriggerId: ...

    def stop_with_savepoint(self, job_id: str, target: str | None, drain: bool) -> TriggerId: ...

    def savepoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None: ...

    def trigger_checkpoint(self, job_id: str, full: bool = False) -> TriggerId: ...

    def checkpoint_status(self, job_id: str, trigger_id: str) -> OperationStatus | None: ...

    def dispose_savepoint(self, path: str) -> TriggerId: ...

    def disposal_status(self, trigger_id: str) -> OperationStatus | None: ...

    def job_results(self, job_id: str, offset: int, limit: int) -> ResultsPage: ...

    def push_sources(self, job_id: str) -> list[PushSourceSnapshot]: ...

    def push_rows(self, job_id: str, source: str, rows: Any, push_id: str | None = None) -> PushAccepted: ...

    def close_push_source(self, job_id: str, source: str) -> PushSourceSnapshot: ...

    def subscribe_events(self) -> EventSubscription: ...


class DispatcherGateway(RestfulGateway, Protocol):
    """The RestfulGateway plus job submission, and the graph a job was submitted with (running or archived;
    None for a job not known here)."""

    def submit(self, payload: dict) -> JobId: ...

    def job_graph(self, job_id: str) -> JobGraph | None: ...


class LeaderRetriever(Protocol):
    """Leadership as the REST endpoint needs it: whether this JobManager leads, and who does."""

    @property
    def is_leader(self) -> bool: ...

    def leader_address(self) -> str | None: ...

    def not_leader_message(self) -> str: ...

    def leadership_view(self) -> dict: ...

    def hold_election(self, seconds: float) -> None:
        """Fault injection: hold the leader election back for ``seconds``."""
        ...



# ---------------------------------------------------------------------------------------------
# ResourceManager, TaskExecutor (TaskManager) and JobMaster
# ---------------------------------------------------------------------------------------------
class ControlConnection(Protocol):
    """The JobManager's end of one TaskManager's control connection: one-way messages, and hang-up."""

    def send(self, message: Any) -> None: ...

    def close(self, reason: str) -> None: ...


@dataclass(frozen=True)
class AllocatedSlot:
    """A slot handed to a job: where its subtasks run, how their consumers reach them (host, data
    port), and the gateway to the TaskManager that holds it."""
    allocation_id: AllocationId
    tm_id: TaskManagerId
    slot_index: int
    host: str
    data_port: int
    gateway: TaskExecutorGateway = field(compare=False, repr=False)


class ResourceManagerGateway(Protocol):
    """What other roles ask of the ResourceManager (Flink's ResourceManagerGateway).

    JobMasters ask for slots all at once and give them back; TaskManagers' control connections
    register, heartbeat and answer slot requests through it. Runs on the JobManager's loop."""

    heartbeat_interval: float
    heartbeat_timeout: float

    async def request_slots(self, job_id: JobId, job_name: str, count: int,
                            timeout: float) -> list[AllocatedSlot]: ...

    def cancel_requests(self, job_id: JobId) -> None: ...

    def assign_tasks(self, allocation_id: AllocationId, task_names: list[str]) -> None: ...

    def free_slots(self, job_id: JobId) -> None: ...

    def end_reservation(self, job_id: JobId) -> None:
        """The job ended: its slots stop counting against its user's quota."""
        ...

    def on_task_manager_lost(self, listener: Callable[[TaskManagerId, str], None]) -> None: ...

    def register(self, msg: RegisterTaskManager, connection: ControlConnection) -> None: ...

    def heartbeat(self, tm_id: TaskManagerId, slot_report: list[SlotStatus], ready: bool = True) -> bool: ...

    def offer_received(self, tm_id: TaskManagerId, offer: SlotOffer) -> None: ...

    def deregister(self, tm_id: TaskManagerId, connection: ControlConnection, reason: str) -> None:
        """The TaskManager leaves on purpose: not a loss (no replacement is started for it)."""
        ...
    def status_reported(self, tm_id: TaskManagerId, status: TaskManagerStatus) -> None: ...

    def connection_closed(self, tm_id: TaskManagerId, connection: ControlConnection) -> None: ...

    def release_task_manager(self, tm_id: TaskManagerId, reason: str) -> None: ...


class JobMasterGateway(Protocol):
    """What the control channel and the Dispatcher ask of one job's JobMaster (Flink's JobMasterGateway).

    Reports from TaskManagers arrive here, never at the JobMaster's fields or its checkpoint
    coordinator. Reports about attempts of an earlier restart are ignored."""

    job_id: JobId

    @property
    def status(self) -> JobStatus: ...

    def update_task_execution_state(self, msg: TaskStateChanged) -> None: ...

    def report_task_metrics(self, msg: TaskMetrics) -> None: ...

    def deliver_results(self, msg: CollectResult) -> None: ...

    def acknowledge_checkpoint(self, msg: AcknowledgeCheckpoint) -> None: ...

    def decline_checkpoint(self, msg: DeclineCheckpoint) -> None: ...

    def fetch_pushed_rows(self, msg: FetchPushedRows) -> PushedRows: ...

    def checkpoint_stats(self) -> CheckpointStatsSnapshot: ...

    def checkpoint_config(self) -> CheckpointConfigSnapshot: ...

    def checkpoint_details(self, checkpoint_id: int) -> CheckpointDetailsSnapshot | None: ...

    def savepoint_status(self, trigger_id: str) -> OperationStatus | None: ...

    def checkpoint_status(self, trigger_id: str) -> OperationStatus | None: ...

    def failure_history(self) -> list[FailureRecord]: ...

    def disconnect_task_manager(self, tm_id: TaskManagerId, reason: str) -> None: ...

    async def cancel(self) -> None: ...
