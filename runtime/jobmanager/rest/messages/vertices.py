"""A task's (vertex's) sub-resources as Flink's web dashboard reads them: subtask times, where its
subtasks run, accumulators, and the job's execution configuration."""
from __future__ import annotations

from runtime.jobmanager.rest.fields import F, RawJson, message
from runtime.jobmanager.rest.messages.jobs import IOMetricsInfo


@message
class SubtaskTimeInfo:
    subtask: int = F("subtask")
    host: str | None = F("host")
    endpoint: str | None = F("endpoint")
    duration: int = F("duration", doc="ms from its deployment to its end (or now)")
    timestamps: dict[str, int] = F("timestamps", doc="when it entered each state (ms)")


@message
class SubtasksTimesInfo:
    id: str = F("id")
    name: str = F("name")
    now: int = F("now")
    subtasks: list[SubtaskTimeInfo] = F("subtasks")


@message
class TaskManagerOfVertex:
    """The subtasks of one task on one TaskManager, their counters summed."""
    endpoint: str | None = F("endpoint")
    host: str | None = F("host")
    taskmanager_id: str | None = F("taskmanager-id")
    status: str = F("status", doc="the state most of them are in (Flink: the least advanced)")
    start_time: int = F("start-time")
    end_time: int = F("end-time")
    duration: int = F("duration")
    metrics: IOMetricsInfo = F("metrics")
    status_counts: dict[str, int] = F("status-counts")


@message
class JobVertexTaskManagersInfo:
    id: str = F("id")
    name: str = F("name")
    now: int = F("now")
    taskmanagers: list[TaskManagerOfVertex] = F("taskmanagers")


@message
class UserAccumulator:
    name: str = F("name")
    type: str = F("type")
    value: str = F("value")


@message
class JobVertexAccumulatorsInfo:
    """Flinkbench jobs have no user accumulators: the list is always empty (the shape is Flink's)."""
    id: str = F("id")
    user_accumulators: list[UserAccumulator] = F("user-accumulators", factory=list)


@message
class SubtaskAccumulatorsInfo:
    subtask: int = F("subtask")
    attempt: int = F("attempt")
    endpoint: str | None = F("endpoint")
    host: str | None = F("host")
    user_accumulators: list[UserAccumulator] = F("user-accumulators", factory=list)


@message
class SubtasksAllAccumulatorsInfo:
    id: str = F("id")
    parallelism: int = F("parallelism")
    subtasks: list[SubtaskAccumulatorsInfo] = F("subtasks")


@message
class ExecutionConfigInfo:
    execution_mode: str = F("execution-mode", doc="PIPELINED (streaming) or BATCH")
    restart_strategy: str = F("restart-strategy")
    job_parallelism: int = F("job-parallelism")
    object_reuse_mode: bool = F("object-reuse-mode", default=False)
    user_config: dict[str, str] = F("user-config", doc="the job's own settings (what it set beside the cluster's)")


@message
class JobConfigInfo:
    jid: str = F("jid")
    name: str = F("name")
    execution_config: ExecutionConfigInfo = F("execution-config")


@message
class ApplicationsOverview:
    """Flink 2.3's applications (a main() and the jobs it submitted); Flinkbench runs jobs, not applications,
    so the list is empty."""
    applications: list[RawJson] = F("applications", factory=list)
