"""What a CheckpointCoordinator needs of its job (the JobMaster implements it) and of the HA store (the
job's entries there, runtime.ha.services.JobEntries), and nothing more."""
from __future__ import annotations

from typing import Protocol

from runtime.checkpoint.fencing import WriteFence
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


class CheckpointStore(Protocol):
    """The job's entries in the HA store as its checkpoint coordinator uses them. Blocking (a file or a
    ZooKeeper round trip): the coordinator calls them in a thread. Each raises LeadershipLost when this
    leader is fenced off and OSError when the store does not answer."""

    @property
    def fence(self) -> WriteFence:
        """Guards what the coordinator writes and deletes (runtime.checkpoint.fencing)."""
        ...

    def leading(self) -> bool:
        """Whether this JobManager's lease still holds (no I/O): a periodic trigger checks it first."""
        ...

    def publish_checkpoint(self, directory: str, retained: tuple[str, ...] = ()) -> None:
        """Record the latest completed checkpoint and the retained ones (oldest first) for a new leader."""
        ...

    def reserve_checkpoint_ids(self, count: int, at_least: int) -> int:
        """Advance the job's checkpoint-id counter by ``count``; the first id, now this leader's alone."""
        ...
