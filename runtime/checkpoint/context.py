"""What a CheckpointCoordinator needs of its job, and nothing more (the JobMaster implements it)."""
from __future__ import annotations

from typing import Protocol

from runtime.ids import ExecutionAttemptId, JobId, JobVertexId
from runtime.gateways import TaskExecutorGateway


class CheckpointContext(Protocol):
    """The job as its checkpoint coordinator sees it: who takes part in a checkpoint, how to reach them.

    Called on the JobManager's loop only."""

    job_id: JobId

    @property
    def max_parallelism(self) -> int: ...

    def all_running(self) -> bool:
        """True when the job and every one of its subtasks is RUNNING: only then can a checkpoint start."""
        ...

    def participants(self) -> dict[ExecutionAttemptId, tuple[JobVertexId, int, list[str]]]:
        """Every current attempt with its task, subtask index and operator ids: who must acknowledge."""
        ...

    def source_attempts(self) -> list[ExecutionAttemptId]:
        """The attempts a checkpoint starts at (the sources inject the barriers)."""
        ...

    def all_attempts(self) -> list[ExecutionAttemptId]: ...

    def task_gateway(self, attempt_id: ExecutionAttemptId) -> TaskExecutorGateway | None:
        """The gateway to the TaskManager running ``attempt_id``; None for an attempt not current or
        not placed."""
        ...
