"""What goes into the checkpoint lifecycle state machine (events) and what comes out (actions).

Plain frozen dataclasses, so a test builds any sequence of events and compares the actions with
``==``; runtime.checkpoint.lifecycle holds the machine and its transition table.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from runtime.ids import ExecutionAttemptId, JobVertexId


@dataclass
class SubtaskSnapshot:
    """One subtask's part of a checkpoint: where its state lives and which operators it holds."""
    vertex_id: str
    subtask: int
    pointer: str
    operators: list[str]
    size: int  # bytes of its whole state
    checkpointed_size: int | None = None  # bytes written for this checkpoint; None: size
    shared: list[str] = field(default_factory=list)  # incremental: the shared files its state is in

    @property
    def written(self) -> int:
        return self.size if self.checkpointed_size is None else self.checkpointed_size


@dataclass
class CompletedCheckpoint:
    """A checkpoint or savepoint whose every subtask acknowledged: restorable once its metadata is written."""
    checkpoint_id: int
    timestamp: float
    is_savepoint: bool
    directory: str
    subtasks: list[SubtaskSnapshot]
    duration_s: float
    size: int  # bytes of the whole state

    @property
    def checkpointed_size(self) -> int:
        """Bytes written for this checkpoint: less than ``size`` when it refers to earlier ones' files."""
        return sum(s.written for s in self.subtasks)

    def pointers_for(self, operator_ids: set[str]) -> list[str]:
        """Snapshots of every old subtask that ran one of ``operator_ids`` (rescaling reads them all)."""
        return [s.pointer for s in self.subtasks if operator_ids & set(s.operators)]

    def metadata(self, job_id: str, max_parallelism: int) -> dict:
        return {"job_id": job_id, "checkpoint_id": self.checkpoint_id, "timestamp": self.timestamp,
                "is_savepoint": self.is_savepoint, "max_parallelism": max_parallelism,
                "subtasks": [s.__dict__ for s in self.subtasks]}


Participants = dict[ExecutionAttemptId, tuple[JobVertexId, int, list[str]]]


# -- events ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TriggerRequested:
    """Start a checkpoint now: by the periodic timer (skipped quietly when it may not start) or by a
    user (refused with a reason). ``participants`` must all acknowledge; ``sources`` get the trigger."""
    tasks_running: bool
    participants: Participants = field(default_factory=dict)
    sources: tuple[ExecutionAttemptId, ...] = ()
    is_savepoint: bool = False
    target: str | None = None
    stop: bool = False
    drain: bool = False  # with stop: tasks fire what a watermark of +infinity would before they snapshot
    periodic: bool = False
    full: bool = False  # incremental checkpoints: this one refers to no earlier checkpoint's files


@dataclass(frozen=True)
class Acknowledged:
    checkpoint_id: int
    attempt_id: ExecutionAttemptId
    pointer: str | None
    size: int = 0
    checkpointed_size: int | None = None
    uploaded: tuple[str, ...] = ()  # shared files written for this checkpoint
    reused: tuple[str, ...] = ()  # shared files of earlier checkpoints


@dataclass(frozen=True)
class Declined:
    checkpoint_id: int
    attempt_id: ExecutionAttemptId
    reason: str


@dataclass(frozen=True)
class TimedOut:
    checkpoint_id: int


@dataclass(frozen=True)
class AbortAll:
    """The job is failing over, cancelling or ending: nothing in flight can complete."""
    reason: str


@dataclass(frozen=True)
class MetadataWritten:
    checkpoint_id: int


@dataclass(frozen=True)
class MetadataFailed:
    checkpoint_id: int
    error: str


@dataclass(frozen=True)
class PointerPublished:
    checkpoint_id: int


@dataclass(frozen=True)
class PublishFailed:
    checkpoint_id: int
    error: str


@dataclass(frozen=True)
class IdsWanted:
    """Checkpointing starts: have ids reserved before the first trigger needs one."""


@dataclass(frozen=True)
class IdsReserved:
    """The HA store's checkpoint-id counter gave this leader ``first`` .. ``first + count - 1``."""
    first: int
    count: int


@dataclass(frozen=True)
class ReserveFailed:
    """The counter could not be advanced (fenced off, or the store is unreachable)."""
    error: str


@dataclass(frozen=True)
class RestoreFailed:
    """A subtask of restart round ``round`` could not read its part of checkpoint ``checkpoint_id``
    (missing or damaged files). ``storage_reachable`` is False when the checkpoint storage itself could not
    be listed at the time: an outage says nothing about the checkpoint, so that round does not count."""
    checkpoint_id: int
    round: int
    error: str
    storage_reachable: bool = True


Event = (TriggerRequested | Acknowledged | Declined | TimedOut | AbortAll | MetadataWritten | MetadataFailed
         | PointerPublished | PublishFailed | IdsWanted | IdsReserved | ReserveFailed | RestoreFailed)


# -- actions -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Refused:
    """A user's trigger that cannot start now; the reason says why."""
    reason: str


@dataclass(frozen=True)
class Started:
    checkpoint_id: int
    is_savepoint: bool
    directory: str
    timestamp: float
    timeout_s: float


@dataclass(frozen=True)
class SendTrigger:
    attempt_id: ExecutionAttemptId
    checkpoint_id: int
    timestamp: float
    is_savepoint: bool
    directory: str
    stop: bool
    drain: bool = False
    full: bool = False


@dataclass(frozen=True)
class DiscardState:
    """An acknowledgement nobody waits for (its checkpoint ended, or its attempt is not a participant).
    ``ended``: its checkpoint failed or never was, so its directory goes too once nothing else is in it
    (a late upload recreates the directory that failing the checkpoint deleted)."""
    pointer: str
    ended: bool = False


@dataclass(frozen=True)
class DiscardShared:
    """Shared files of incremental checkpoints that no retained or pending checkpoint refers to."""
    files: tuple[str, ...]


@dataclass(frozen=True)
class WriteMetadata:
    checkpoint: CompletedCheckpoint


@dataclass(frozen=True)
class PublishPointer:
    """Record the checkpoint in the HA store before any sink commits it, with every checkpoint retained
    once it completes (oldest first, itself last)."""
    checkpoint_id: int
    directory: str
    retained: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReserveIds:
    """Advance the HA store's checkpoint-id counter by ``count``, never handing out ids below ``at_least``."""
    count: int
    at_least: int


@dataclass(frozen=True)
class Completed:
    checkpoint: CompletedCheckpoint


@dataclass(frozen=True)
class NotifyComplete:
    """The sinks of ``attempt_id`` commit what they staged for this checkpoint."""
    attempt_id: ExecutionAttemptId
    checkpoint_id: int


@dataclass(frozen=True)
class DropCheckpoint:
    """A completed checkpoint beyond ``state.checkpoints.num-retained``."""
    directory: str


@dataclass(frozen=True)
class Failed:
    checkpoint_id: int
    is_savepoint: bool
    reason: str
    timestamp: float
    size: int
    acknowledged: int


@dataclass(frozen=True)
class NotifyAborted:
    attempt_id: ExecutionAttemptId
    checkpoint_id: int


@dataclass(frozen=True)
class DiscardCheckpoint:
    directory: str


@dataclass(frozen=True)
class TooManyFailures:
    reason: str


@dataclass(frozen=True)
class FellBack:
    """``failed`` could not be restored in RESTORE_ATTEMPTS rounds: the next deployment restores ``to``."""
    failed: CompletedCheckpoint
    to: CompletedCheckpoint
    reason: str


@dataclass(frozen=True)
class RestoreImpossible:
    """No checkpoint is left to restore: the job fails with ``reason`` (it names the checkpoint)."""
    reason: str


Action = (Refused | Started | SendTrigger | DiscardState | DiscardShared | WriteMetadata | PublishPointer | Completed
          | NotifyComplete | DropCheckpoint | Failed | NotifyAborted | DiscardCheckpoint | TooManyFailures | ReserveIds
          | FellBack | RestoreImpossible)
