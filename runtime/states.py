"""Job and task state machines, with Flink's state names.

A state changes only through :func:`advance`, which checks the move against the table of allowed
transitions, so an illegal transition is an error at the place it is attempted, not a puzzle later.

Job (JobStatus)::

    INITIALIZING -> CREATED -> RUNNING -> FINISHED
                       |          |-> FAILING -> FAILED
                       |          |-> RESTARTING -> RUNNING (next attempt)
                       |          |-> CANCELLING -> CANCELED
                       |          '-> SUSPENDED (leader lost; a new leader resumes the job)
                       |-> RESTARTING (no slots in time, the restart strategy allows another try)
                       '-> FAILED (no slots in time, no restart left) / CANCELLING

Task attempt (ExecutionState)::

    CREATED -> SCHEDULED -> DEPLOYING -> INITIALIZING -> RUNNING -> FINISHED
        any non-terminal state -> CANCELING -> CANCELED, or -> FAILED
"""
from __future__ import annotations

import enum

from runtime.errors import FlinkbenchError


class IllegalTransition(FlinkbenchError, RuntimeError):
    """A state change the table does not allow."""


class JobStatus(str, enum.Enum):
    """A job's state, with Flink's names; moves only as JOB_TRANSITIONS allows."""
    INITIALIZING = "INITIALIZING"
    CREATED = "CREATED"
    RUNNING = "RUNNING"
    FAILING = "FAILING"
    FAILED = "FAILED"
    CANCELLING = "CANCELLING"
    CANCELED = "CANCELED"
    FINISHED = "FINISHED"
    RESTARTING = "RESTARTING"
    SUSPENDED = "SUSPENDED"

    @property
    def is_globally_terminal(self) -> bool:
        return self in (JobStatus.FAILED, JobStatus.CANCELED, JobStatus.FINISHED)


class ExecutionState(str, enum.Enum):
    """A subtask attempt's state, with Flink's names; moves only as EXECUTION_TRANSITIONS allows."""
    CREATED = "CREATED"
    SCHEDULED = "SCHEDULED"
    DEPLOYING = "DEPLOYING"
    INITIALIZING = "INITIALIZING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    CANCELING = "CANCELING"
    CANCELED = "CANCELED"
    FAILED = "FAILED"

    @property
    def is_terminal(self) -> bool:
        return self in (ExecutionState.FINISHED, ExecutionState.CANCELED, ExecutionState.FAILED)


# The end states by name, for code that holds states as the strings REST and the event stream carry.
TERMINAL_JOB_STATES = frozenset(s.value for s in JobStatus if s.is_globally_terminal)
TERMINAL_TASK_STATES = frozenset(s.value for s in ExecutionState if s.is_terminal)

_J = JobStatus
JOB_TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    _J.INITIALIZING: frozenset({_J.CREATED, _J.FAILED, _J.CANCELED, _J.SUSPENDED}),
    _J.CREATED: frozenset({_J.RUNNING, _J.RESTARTING, _J.FAILING, _J.FAILED, _J.CANCELLING, _J.CANCELED,
                           _J.SUSPENDED}),
    _J.RUNNING: frozenset({_J.FINISHED, _J.FAILING, _J.RESTARTING, _J.CANCELLING, _J.SUSPENDED}),
    _J.FAILING: frozenset({_J.FAILED, _J.RESTARTING, _J.CANCELLING, _J.SUSPENDED}),
    _J.RESTARTING: frozenset({_J.CREATED, _J.RUNNING, _J.FAILING, _J.FAILED, _J.CANCELLING, _J.CANCELED, _J.SUSPENDED}),
    _J.CANCELLING: frozenset({_J.CANCELED, _J.SUSPENDED}),
    _J.SUSPENDED: frozenset({_J.INITIALIZING, _J.CREATED, _J.RUNNING, _J.RESTARTING}),
    _J.FAILED: frozenset(),
    _J.CANCELED: frozenset(),
    _J.FINISHED: frozenset(),
}

_E = ExecutionState
_ANY_LIVE = frozenset({_E.CANCELING, _E.CANCELED, _E.FAILED})
EXECUTION_TRANSITIONS: dict[ExecutionState, frozenset[ExecutionState]] = {
    _E.CREATED: frozenset({_E.SCHEDULED}) | _ANY_LIVE,
    _E.SCHEDULED: frozenset({_E.DEPLOYING}) | _ANY_LIVE,
    _E.DEPLOYING: frozenset({_E.INITIALIZING, _E.RUNNING, _E.FINISHED}) | _ANY_LIVE,
    _E.INITIALIZING: frozenset({_E.RUNNING, _E.FINISHED}) | _ANY_LIVE,
    _E.RUNNING: frozenset({_E.FINISHED}) | _ANY_LIVE,
    _E.CANCELING: frozenset({_E.CANCELED, _E.FAILED}),
    _E.FINISHED: frozenset(),
    _E.CANCELED: frozenset(),
    _E.FAILED: frozenset(),
}


def advance(current, target):
    """Return ``target`` if the move from ``current`` is allowed, else raise IllegalTransition.

    Works for both JobStatus and ExecutionState; staying in the same state is always allowed.
    """
    if current == target:
        return target
    table = JOB_TRANSITIONS if isinstance(current, JobStatus) else EXECUTION_TRANSITIONS
    if target not in table[current]:
        raise IllegalTransition(f"{type(current).__name__} cannot go from {current.value} to {target.value}")
    return target
