"""Identifiers, each its own type so that a JobId cannot be passed where a TaskManagerId is meant.

They subclass ``str`` so they travel through JSON and REST paths unchanged; Flink's 32-hex-digit form
is used where Flink has one.
"""
from __future__ import annotations

import secrets


class _Id(str):
    __slots__ = ()

    @classmethod
    def new(cls):
        return cls(secrets.token_hex(16))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class JobId(_Id):
    """One submitted job, stable across restarts and leader changes."""


class TaskManagerId(_Id):
    """One TaskManager process for its lifetime (a restarted process gets a new id)."""

    @classmethod
    def new(cls):
        return cls("tm-" + secrets.token_hex(4))


class AllocationId(_Id):
    """One slot allocation: a slot handed to a job; freed when the job lets it go."""


class ExecutionAttemptId(_Id):
    """One attempt of one subtask; a restart deploys new attempts."""


class JobVertexId(_Id):
    """One task (a chain of operators) in a job's execution graph."""


class LeaderSessionId(_Id):
    """Fencing token of a JobManager leadership; messages carrying a stale one are rejected."""


class TriggerId(_Id):
    """An asynchronous operation (savepoint, stop) a REST client polls for."""


class SlotId(str):
    """A TaskManager's slot, ``<tm-id>:<index>``."""

    __slots__ = ()

    @classmethod
    def of(cls, tm: TaskManagerId, index: int) -> SlotId:
        return cls(f"{tm}:{index}")

    @property
    def task_manager(self) -> TaskManagerId:
        return TaskManagerId(self.rsplit(":", 1)[0])

    @property
    def index(self) -> int:  # type: ignore[override]  # a slot id's index, not str.index
        return int(self.rsplit(":", 1)[1])
