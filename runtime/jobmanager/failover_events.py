"""What goes into the job failover state machine (events) and what comes out (actions).

Events say what happened; actions say what the JobMaster must do. Both are plain frozen dataclasses,
so a test can build any sequence of events and compare the actions with ``==``
(runtime.jobmanager.failover holds the machine and its transition table).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runtime.ids import AllocationId, ExecutionAttemptId, TaskManagerId
from runtime.jobmanager.gateways import AllocatedSlot
from runtime.states import ExecutionState, JobStatus


# -- events ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JobStarted:
    pass


@dataclass(frozen=True)
class SlotsGranted:
    round: int
    slots: Sequence[AllocatedSlot]


@dataclass(frozen=True)
class SlotsUnavailable:
    round: int
    reason: str


@dataclass(frozen=True)
class TaskReported:
    attempt_id: ExecutionAttemptId
    state: ExecutionState
    error: str | None = None


@dataclass(frozen=True)
class TaskManagerLost:
    tm_id: TaskManagerId
    reason: str


@dataclass(frozen=True)
class CheckpointsFailing:
    cause: str


@dataclass(frozen=True)
class Unrecoverable:
    """The job cannot go on from any checkpoint (none left to restore): it fails without a restart."""
    cause: str


@dataclass(frozen=True)
class StopRequested:
    checkpoint_id: int


@dataclass(frozen=True)
class CheckpointCompleted:
    checkpoint_id: int


@dataclass(frozen=True)
class CheckpointFailed:
    checkpoint_id: int


@dataclass(frozen=True)
class CancelRequested:
    pass


@dataclass(frozen=True)
class Suspended:
    """This JobManager lost the leadership: the job stops here and a new leader resumes it."""
    reason: str


@dataclass(frozen=True)
class RestartDelayPassed:
    round: int


@dataclass(frozen=True)
class CancelTimedOut:
    round: int


Event = (JobStarted | SlotsGranted | SlotsUnavailable | TaskReported | TaskManagerLost | CheckpointsFailing
         | Unrecoverable | StopRequested | CheckpointCompleted | CheckpointFailed | CancelRequested | Suspended
         | RestartDelayPassed | CancelTimedOut)


# -- actions -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RequestSlots:
    round: int
    count: int


@dataclass(frozen=True)
class CancelSlotRequest:
    pass


@dataclass(frozen=True)
class FreeSlots:
    pass


@dataclass(frozen=True)
class AssignTasks:
    allocation_id: AllocationId
    task_names: tuple[str, ...]


@dataclass(frozen=True)
class DeployTasks:
    attempts: tuple[ExecutionAttemptId, ...]


@dataclass(frozen=True)
class CancelTask:
    attempt_id: ExecutionAttemptId


@dataclass(frozen=True)
class StartCheckpointing:
    pass


@dataclass(frozen=True)
class PauseCheckpointing:
    pass


@dataclass(frozen=True)
class StopCheckpointing:
    reason: str


@dataclass(frozen=True)
class ScheduleRestart:
    round: int
    delay_s: float


@dataclass(frozen=True)
class ScheduleCancelTimeout:
    round: int
    delay_s: float


@dataclass(frozen=True)
class JobStatusChanged:
    previous: JobStatus
    status: JobStatus
    cause: str | None


@dataclass(frozen=True)
class TaskStateChanged:
    attempt_id: ExecutionAttemptId
    state: ExecutionState
    error: str | None


@dataclass(frozen=True)
class RecordFailure:
    error: str
    exception_name: str
    attempt_id: ExecutionAttemptId | None


@dataclass(frozen=True)
class JobRestarting:
    attempt: int
    cause: str
    delay_s: float


@dataclass(frozen=True)
class JobTerminated:
    status: JobStatus


@dataclass(frozen=True)
class JobSuspended:
    """Stop acting for the job (timers, slot requests) without ending it: no cleanup, no HA writes."""


Action = (RequestSlots | CancelSlotRequest | FreeSlots | AssignTasks | DeployTasks | CancelTask | StartCheckpointing
          | PauseCheckpointing | StopCheckpointing | ScheduleRestart | ScheduleCancelTimeout | JobStatusChanged
          | TaskStateChanged | RecordFailure | JobRestarting | JobTerminated | JobSuspended)
