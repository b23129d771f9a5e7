"""The lifecycle of checkpoints as a pure state machine: events in, a list of actions out, no I/O.

The CheckpointCoordinator feeds it what happens (a trigger, acknowledgements, a timer, a written
``_metadata`` file, the HA store's answer) and executes the actions: send messages through the
gateways, write and delete files, resolve the caller's future. Nothing here reads a clock or a file,
so every transition is tested without processes (tests/unit/checkpoint/test_lifecycle.py)::

    TriggerRequested --> PENDING --every participant Acknowledged--> ACKNOWLEDGED --MetadataWritten-->
                            |                                           |
                            |                      savepoint, or no HA store: COMPLETED
                            |                      checkpoint with an HA store: PUBLISHING --PointerPublished--> COMPLETED
                            |
                            '-- Declined, TimedOut, AbortAll, MetadataFailed, PublishFailed --> FAILED

    status        event                 actions
    (none)        TriggerRequested      Started, SendTrigger to each source (or Refused / nothing if periodic)
    PENDING       Acknowledged (last)   WriteMetadata
    ACKNOWLEDGED  MetadataWritten       PublishPointer, or (savepoint / no HA) as PointerPublished
    PUBLISHING    PointerPublished      Completed, DropCheckpoint beyond the retained, NotifyComplete to each
                                        participant: the sinks commit only once the checkpoint is restorable
    any live      a failure event       Failed, NotifyAborted to each participant, DiscardCheckpoint (not
                                        once PUBLISHING: the store may point at it already), and
                                        TooManyFailures past execution.checkpointing.tolerable-failed-checkpoints
    (none)        Acknowledged          DiscardState: debris of a checkpoint that ended or of a stranger
    (none)        IdsWanted, or a trigger that used or lacked an id
                                        ReserveIds when few ids are reserved (runtime.checkpoint.checkpoint_ids)
    (none)        IdsReserved / ReserveFailed   the reserved ids, or why there are none
    (none)        RestoreFailed (of the latest, in RESTORE_ATTEMPTS restart rounds)
                                        FellBack to the next older retained checkpoint (and PublishPointer of
                                        it), or RestoreImpossible when none is left: never a restore loop

Checkpoint ids: with an HA store every id comes from the job's counter there, reserved by this leader
alone, so a checkpoint's directory is never one another leader uses; a trigger that finds no reserved
id is skipped (periodic) or refused (a user's) while ReserveIds asks for more. Retention: a completed
checkpoint is dropped only when a newer one is complete *and* its pointer is published (the store never
names a dropped checkpoint), so a job always has a restore point once it completed one. A restore point
whose files are missing or damaged is given up after RESTORE_ATTEMPTS rounds (its files are kept for a
look); the job falls back to the next older retained one, or fails naming it.

Incremental checkpoints: every acknowledgement registers the shared files the subtask's state is in
with a reference registry (runtime.checkpoint.shared_registry); one that refers to a file already
deleted fails its checkpoint. A dropped or failed checkpoint releases its references, and the files no
checkpoint refers to any more are deleted (DiscardShared).

Savepoints never count towards the tolerable failures and are never retained as restore points.
"""
from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from runtime.checkpoint.checkpoint_ids import CheckpointIds
from runtime.checkpoint.lifecycle_events import (AbortAll, Acknowledged, Action, Completed, CompletedCheckpoint,
                                                 Declined, DiscardCheckpoint, DiscardShared, DiscardState, DropCheckpoint,
                                                 Event, Failed, FellBack, IdsReserved, IdsWanted, MetadataFailed,
                                                 MetadataWritten, NotifyAborted, NotifyComplete, Participants,
                                                 PointerPublished, PublishFailed, PublishPointer, Refused, ReserveFailed,
                                                 RestoreFailed, RestoreImpossible, SendTrigger, Started, SubtaskSnapshot,
                                                 TimedOut, TooManyFailures, TriggerRequested, WriteMetadata)
from runtime.checkpoint.shared_registry import SharedStateRegistry
from runtime.ids import ExecutionAttemptId

RESTORE_ATTEMPTS = 2  # restart rounds a restore point may fail in before the job falls back from it


class Phase(str, enum.Enum):
    """How far a pending checkpoint got: acknowledgements, metadata, the HA store."""
    PENDING = "PENDING"
    ACKNOWLEDGED = "ACKNOWLEDGED"
    PUBLISHING = "PUBLISHING"


@dataclass(frozen=True)
class CheckpointSettings:
    """The execution.checkpointing.* and state.checkpoints.* options the lifecycle decides by."""
    timeout_s: float = 600.0
    min_pause_s: float = 0.0
    max_concurrent: int = 1
    tolerable_failures: int = 2**31 - 1
    retained: int = 1
    publishes: bool = False  # completed checkpoints are recorded in an HA store before sinks commit
    ids_from_store: bool = False  # checkpoint ids are reserved in the HA store's counter


@dataclass
class PendingCheckpoint:
    """A checkpoint on its way: who must acknowledge, who has, and how far it got."""
    checkpoint_id: int
    timestamp: float
    is_savepoint: bool
    directory: str
    stop: bool
    expected: Participants
    acks: dict[ExecutionAttemptId, SubtaskSnapshot] = field(default_factory=dict)
    phase: Phase = Phase.PENDING
    done: CompletedCheckpoint | None = None


class CheckpointLifecycle:
    """Which checkpoints are in flight, which are retained, and what to do next; :meth:`handle` is the
    one entry point. ``directory_for(checkpoint_id, is_savepoint, target)`` names a checkpoint's
    directory (a pure function of its arguments)."""

    def __init__(self, settings: CheckpointSettings, directory_for: Callable[[int, bool, str | None], str]):
        self.settings = settings
        self.directory_for = directory_for
        self.ids = CheckpointIds(settings.ids_from_store)
        self.pending: dict[int, PendingCheckpoint] = {}
        self.completed: list[CompletedCheckpoint] = []  # retained restore points, oldest first
        self.initial: CompletedCheckpoint | None = None  # what the job was started from (the user's)
        self.consecutive_failures = 0
        self.last_end = float("-inf")
        self.shared = SharedStateRegistry()  # who refers to each shared file of incremental checkpoints
        self.restore_failures: dict[int, set[int]] = {}  # checkpoint id -> restart rounds its restore failed in

    def handle(self, event: Event, now: float) -> list[Action]:
        """Apply ``event`` at wall-clock time ``now`` (seconds) and return the actions, in order."""
        out: list[Action] = []
        if isinstance(event, TriggerRequested):
            self._trigger(event, now, out)
        elif isinstance(event, Acknowledged):
            self._acknowledged(event, now, out)
        elif isinstance(event, MetadataWritten):
            pending = self._at(event.checkpoint_id, Phase.ACKNOWLEDGED)
            if pending is not None and (pending.is_savepoint or not self.settings.publishes):
                self._complete(pending, now, out)
            elif pending is not None:
                pending.phase = Phase.PUBLISHING
                kept = [c.directory for c in self.completed] + [pending.directory]
                out.append(PublishPointer(pending.checkpoint_id, pending.directory,
                                          tuple(kept[-self.settings.retained:])))
        elif isinstance(event, PointerPublished):
            pending = self._at(event.checkpoint_id, Phase.PUBLISHING)
            if pending is not None:
                self._complete(pending, now, out)
        elif isinstance(event, AbortAll):
            for checkpoint_id in list(self.pending):
                self._fail(checkpoint_id, event.reason, now, out, count=False)
        elif isinstance(event, (IdsWanted, IdsReserved, ReserveFailed)):
            self._ids(event, out)
        elif isinstance(event, RestoreFailed):
            self._restore_failed(event, out)
        else:
            self._fail(event.checkpoint_id, _reason(event, self.settings.timeout_s), now, out)
        return out

    # -- restore points ----------------------------------------------------------------------------
    def latest(self) -> CompletedCheckpoint | None:
        """What a (re)deployment restores: the newest retained checkpoint, else the job's starting point."""
        return self.completed[-1] if self.completed else self.initial

    def start_from(self, checkpoint: CompletedCheckpoint, retained: bool = False) -> None:
        """The job starts from ``checkpoint``: a user's savepoint (kept for ever), or with ``retained``
        one of its own found in the HA store by a new leader (dropped like any of ours)."""
        if retained:
            self.completed.append(checkpoint)
            for subtask in checkpoint.subtasks:
                self.shared.register(checkpoint.checkpoint_id, subtask.shared, ())
        else:
            self.initial = checkpoint
        self.ids.raise_floor(checkpoint.checkpoint_id + 1)

    def _restore_failed(self, event: RestoreFailed, out: list[Action]) -> None:
        """The latest restore point failed in one more round; after RESTORE_ATTEMPTS, fall back from it."""
        failed = self.latest()
        if failed is None or failed.checkpoint_id != event.checkpoint_id:
            return  # given up already (a report from a later subtask of that round)
        if not event.storage_reachable:
            return  # the storage was out: the restart strategy tries again, the checkpoint may be whole
        rounds = self.restore_failures.setdefault(failed.checkpoint_id, set())
        rounds.add(event.round)
        if len(rounds) < RESTORE_ATTEMPTS:
            return
        if self.completed and self.completed[-1] is failed:
            self.completed.pop()
        else:
            self.initial = None
        what = "savepoint" if failed.is_savepoint else "checkpoint"
        reason = (f"cannot restore {what} {failed.checkpoint_id} ({failed.directory}) in {len(rounds)} attempts: "
                  f"{event.error}")
        fallback = self.latest()
        if fallback is None:
            out.append(RestoreImpossible(f"{reason}; no older retained checkpoint to fall back to "
                                         f"(state.checkpoints.num-retained: {self.settings.retained})"))
            return
        out.append(FellBack(failed, fallback, reason))
        if self.settings.publishes and not fallback.is_savepoint:
            out.append(PublishPointer(fallback.checkpoint_id, fallback.directory,
                                      tuple(c.directory for c in self.completed)))

    # -- transitions -------------------------------------------------------------------------------
    def _trigger(self, event: TriggerRequested, now: float, out: list[Action]) -> None:
        if event.periodic and (len(self.pending) >= self.settings.max_concurrent
                               or now - self.last_end < self.settings.min_pause_s or not event.tasks_running):
            return
        if not event.tasks_running:
            out.append(Refused("not all tasks are RUNNING, so no checkpoint can be taken now"))
            return
        checkpoint_id = self.ids.take()
        self._ids(IdsWanted(), out)
        if checkpoint_id is None:
            if not event.periodic:
                out.append(Refused(self.ids.missing_reason()))
            return
        directory = self.directory_for(checkpoint_id, event.is_savepoint, event.target)
        self.pending[checkpoint_id] = PendingCheckpoint(checkpoint_id, now, event.is_savepoint, directory, event.stop,
                                                        dict(event.participants))
        out.append(Started(checkpoint_id, event.is_savepoint, directory, now, self.settings.timeout_s))
        out.extend(SendTrigger(attempt, checkpoint_id, now, event.is_savepoint, directory, event.stop, event.drain,
                               event.full) for attempt in event.sources)

    def _acknowledged(self, event: Acknowledged, now: float, out: list[Action]) -> None:
        pending = self._at(event.checkpoint_id, Phase.PENDING)
        if pending is None or event.attempt_id not in pending.expected or event.attempt_id in pending.acks:
            if event.pointer:
                ended = pending is None and all(c.checkpoint_id != event.checkpoint_id for c in self.completed)
                out.append(DiscardState(event.pointer, ended))
            if event.uploaded:
                out.append(DiscardShared(event.uploaded))
            return
        missing = self.shared.register(pending.checkpoint_id, event.uploaded, event.reused)
        if missing:
            self._fail(pending.checkpoint_id, f"a subtask referred to shared state already deleted ({missing[0]}); "
                       "the next checkpoint of that subtask is full", now, out)
            return
        vertex_id, subtask, operators = pending.expected[event.attempt_id]
        pending.acks[event.attempt_id] = SubtaskSnapshot(vertex_id, subtask, event.pointer or "", operators, event.size,
                                                         event.checkpointed_size, [*event.uploaded, *event.reused])
        if len(pending.acks) < len(pending.expected):
            return
        subtasks = sorted(pending.acks.values(), key=lambda s: (s.vertex_id, s.subtask))
        pending.phase = Phase.ACKNOWLEDGED
        pending.done = CompletedCheckpoint(pending.checkpoint_id, pending.timestamp, pending.is_savepoint,
                                           pending.directory, subtasks, now - pending.timestamp,
                                           sum(s.size for s in subtasks))
        out.append(WriteMetadata(pending.done))

    def _complete(self, pending: PendingCheckpoint, now: float, out: list[Action]) -> None:
        done = pending.done
        assert done is not None
        del self.pending[pending.checkpoint_id]
        self.consecutive_failures = 0
        self.last_end = now
        if not done.is_savepoint:
            self.completed.append(done)
            while len(self.completed) > self.settings.retained:
                old = self.completed.pop(0)
                if self.initial is None or old.directory != self.initial.directory:
                    out.append(DropCheckpoint(old.directory))
                    self._release(old.checkpoint_id, out)
        out.append(Completed(done))
        out.extend(NotifyComplete(attempt, done.checkpoint_id) for attempt in pending.expected)

    def _fail(self, checkpoint_id: int, reason: str, now: float, out: list[Action], count: bool = True) -> None:
        pending = self.pending.pop(checkpoint_id, None)
        if pending is None:
            return
        self.last_end = now
        out.append(Failed(checkpoint_id, pending.is_savepoint, reason, pending.timestamp,
                          sum(a.size for a in pending.acks.values()), len(pending.acks)))
        out.extend(NotifyAborted(attempt, checkpoint_id) for attempt in pending.expected)
        if pending.phase is not Phase.PUBLISHING:  # the HA store may hold its pointer already: a successor
            out.append(DiscardCheckpoint(pending.directory))  # leader restores it, so its files stay
            self._release(checkpoint_id, out)
        if count and not pending.is_savepoint:
            self.consecutive_failures += 1
            if self.consecutive_failures > self.settings.tolerable_failures:
                self.consecutive_failures = 0
                out.append(TooManyFailures(f"exceeded checkpoint tolerable failure threshold "
                                           f"({self.settings.tolerable_failures}); last: {reason}"))

    def _ids(self, event: IdsWanted | IdsReserved | ReserveFailed, out: list[Action]) -> None:
        if isinstance(event, IdsReserved):
            self.ids.reserved_ids(event.first, event.count)
        elif isinstance(event, ReserveFailed):
            self.ids.reservation_failed(event.error)
        wanted = self.ids.wanted()
        if wanted is not None:
            out.append(wanted)

    def _release(self, checkpoint_id: int, out: list[Action]) -> None:
        unused = self.shared.release(checkpoint_id)
        if unused:
            out.append(DiscardShared(tuple(unused)))

    def _at(self, checkpoint_id: int, phase: Phase) -> PendingCheckpoint | None:
        pending = self.pending.get(checkpoint_id)
        return pending if pending is not None and pending.phase == phase else None


def _reason(event: Event, timeout_s: float) -> str:
    if isinstance(event, Declined):
        return f"declined by a subtask: {event.reason}"
    if isinstance(event, TimedOut):
        return f"checkpoint expired before completing (timeout {timeout_s:g} s)"
    if isinstance(event, MetadataFailed):
        return f"cannot write checkpoint metadata: {event.error}"
    assert isinstance(event, PublishFailed)
    return f"cannot record the checkpoint in the HA store: {event.error}"
