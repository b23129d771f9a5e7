"""Jobs: lists, details, tasks and subtasks, exceptions, backpressure, watermarks."""
from __future__ import annotations

from typing import Any

from runtime.jobmanager.rest.fields import F, RawJson, message


# -- jobs ------------------------------------------------------------------------------------
@message
class JobIdWithStatus:
    id: str = F("id")
    status: str = F("status")


@message
class JobIdsWithStatusOverview:
    jobs: list[JobIdWithStatus] = F("jobs")


@message
class JobSubmitResponseBody:
    job_url: str = F("jobUrl")
    jobid: str = F("jobid")


@message
class JobStatusInfo:
    status: str = F("status")


@message
class JobDetails:
    """A job in a list (``/jobs/overview``); ``tasks`` counts subtasks by Flink's lower-case state names
    plus ``total``."""
    jid: str = F("jid")
    name: str = F("name")
    job_type: str = F("jobType", doc="STREAMING or BATCH")
    scheduler_type: str = F("schedulerType", default="Default")
    start_time: int = F("start-time")
    end_time: int = F("end-time", doc="-1 while the job runs")
    duration: int = F("duration")
    state: str = F("state")
    last_modification: int = F("last-modification")
    tasks: dict[str, int] = F("tasks")
    pending_operators: int = F("pending-operators", default=0)
    parallelism: int = F("parallelism")
    restarts: int = F("restarts")
    records_out_per_s: float = F("records-out-per-s", doc="rows per second leaving the job's last tasks")


@message
class MultipleJobsDetails:
    jobs: list[JobDetails] = F("jobs")


@message
class IOMetricsInfo:
    """A subtask's (or a task's, summed) counters: Flink's names, then Flinkbench's own."""
    read_bytes: int = F("read-bytes")
    read_bytes_complete: bool = F("read-bytes-complete")
    write_bytes: int = F("write-bytes")
    write_bytes_complete: bool = F("write-bytes-complete")
    read_records: int = F("read-records")
    read_records_complete: bool = F("read-records-complete")
    write_records: int = F("write-records")
    write_records_complete: bool = F("write-records-complete")
    accumulated_backpressured_time: int = F("accumulated-backpressured-time", default=0)
    accumulated_idle_time: int = F("accumulated-idle-time", default=0)
    accumulated_busy_time: float = F("accumulated-busy-time", default=0.0)
    records_in: int = F("records_in")
    records_out: int = F("records_out")
    bytes_in: int = F("bytes_in")
    bytes_out: int = F("bytes_out")
    records_in_per_s: float = F("records_in_per_s")
    records_out_per_s: float = F("records_out_per_s")
    backpressure_ratio: float = F("backpressure_ratio")
    watermark: float | None = F("watermark", doc="event time in seconds since the epoch; null before the first")
    bundle_time_s: float = F("bundle_time_s")
    bundles: int = F("bundles")
    sent_to: dict[str, int] = F("sent_to", doc="rows sent to each downstream subtask")
    late_records: int = F("late_records")
    state_rows: int = F("state_rows")
    busy_time_ms_per_s: float = F("busy_time_ms_per_s", default=0.0,
                                  doc="Flink's busyTimeMsPerSecond (a task: its busiest subtask)")
    idle_time_ms_per_s: float = F("idle_time_ms_per_s", default=0.0, doc="Flink's idleTimeMsPerSecond")
    backpressured_time_ms_per_s: float = F("backpressured_time_ms_per_s", default=0.0,
                                           doc="Flink's backPressuredTimeMsPerSecond")
    last_checkpoint_id: int | None = F("last_checkpoint_id", default=None)
    last_checkpoint_duration_s: float | None = F("last_checkpoint_duration_s", default=None,
                                                 doc="trigger to this subtask's acknowledgement")
    last_checkpoint_size: int | None = F("last_checkpoint_size", default=None, doc="bytes this subtask wrote")
    phase_s: dict[str, float] = F("phase_s", factory=dict,
                                  doc="seconds spent in each phase of a bundle's path so far (summed over subtasks); "
                                      "the phases are runtime.taskmanager.metrics.PHASES")
    phase_count: dict[str, int] = F("phase_count", factory=dict, doc="times each phase was entered")
    phase_max_s: dict[str, float] = F("phase_max_s", factory=dict,
                                      doc="longest single time in each phase over the last report interval")
    pending_records: int | None = F("pending_records", default=None,
                                    doc="Flink's pendingRecords: rows a rate-limited source is behind its pace")
    spark: dict[str, Any] | None = F("spark", default=None, omit_none=True,
                                     doc="a subtask's Spark totals (total_stages, total_stage_ms), its stage time's "
                                         "share of its busy time over the last minute (explained) and the plan that "
                                         "takes half or more of its recent stage time (dominant_plan, dominant_share)")


@message
class SubtaskExecutionAttemptDetailsInfo:
    subtask: int = F("subtask")
    status: str = F("status")
    attempt: int = F("attempt")
    endpoint: str | None = F("endpoint")
    start_time: int = F("start-time", doc="ms; -1 before it was deployed")
    compatible_start_time: int = F("start_time")
    end_time: int = F("end-time")
    duration: int = F("duration")
    metrics: IOMetricsInfo | None = F("metrics")
    taskmanager_id: str | None = F("taskmanager-id")
    status_duration: dict[str, int] = F("status-duration")
    attempt_id: str = F("attempt-id")
    host: str | None = F("host")
    slot: int | None = F("slot")
    failure_cause: str | None = F("failure-cause")


@message
class JobVertexDetailsInfo:
    """A task in ``/jobs/<id>`` (and in full at ``/jobs/<id>/vertices/<vid>``)."""
    id: str = F("id")
    slot_sharing_group_id: str = F("slotSharingGroupId", default="default")
    name: str = F("name")
    max_parallelism: int = F("maxParallelism")
    parallelism: int = F("parallelism")
    status: str = F("status")
    start_time: int = F("start-time")
    end_time: int = F("end-time")
    duration: int = F("duration")
    tasks: dict[str, int] = F("tasks", doc="subtasks per state (Flink's upper-case names)")
    metrics: IOMetricsInfo = F("metrics", doc="the subtasks' counters summed")
    now: int = F("now")
    operators: list[str] = F("operators")
    subtasks: list[SubtaskExecutionAttemptDetailsInfo] = F("subtasks")


@message
class JobDetailsInfo:
    jid: str = F("jid")
    name: str = F("name")
    is_stoppable: bool = F("isStoppable")
    state: str = F("state")
    job_type: str = F("job-type")
    start_time: int = F("start-time")
    end_time: int = F("end-time")
    duration: int = F("duration")
    max_parallelism: int = F("maxParallelism")
    now: int = F("now")
    timestamps: dict[str, int] = F("timestamps", doc="when the job entered each state (ms)")
    vertices: list[JobVertexDetailsInfo] = F("vertices")
    status_counts: dict[str, int] = F("status-counts")
    plan: RawJson = F("plan")
    last_modification: int = F("last-modification")
    parallelism: int = F("parallelism")
    restarts: int = F("restarts")
    records_out_per_s: float = F("records-out-per-s")
    tasks: dict[str, int] = F("tasks", doc="as in /jobs/overview")


@message
class JobPlanInfo:
    plan: RawJson = F("plan")


@message
class SubtaskBackPressureInfo:
    subtask: int = F("subtask")
    attempt_number: int = F("attempt-number")
    backpressure_level: str = F("backpressureLevel", doc="ok, low or high")
    deprecated_backpressure_level: str = F("backpressure-level")
    ratio: float = F("ratio")
    idle_ratio: float = F("idleRatio")
    busy_ratio: float = F("busyRatio")


@message
class JobVertexBackPressureInfo:
    status: str = F("status", default="ok")
    backpressure_level: str = F("backpressureLevel")
    deprecated_backpressure_level: str = F("backpressure-level")
    end_timestamp: int = F("end-timestamp")
    subtasks: list[SubtaskBackPressureInfo] = F("subtasks")


@message
class ExceptionInfo:
    exception_name: str = F("exceptionName")
    stacktrace: str = F("stacktrace")
    timestamp: int = F("timestamp")
    task_name: str | None = F("taskName")
    endpoint: str | None = F("endpoint")
    location: str | None = F("location")
    task_manager_id: str | None = F("taskManagerId")
    failure_labels: dict[str, str] = F("failureLabels", factory=dict)
    concurrent_exceptions: list[Any] = F("concurrentExceptions", factory=list)
    attempt: int = F("attempt", doc="the job's restart attempt that failed")


@message
class JobExceptionHistory:
    entries: list[ExceptionInfo] = F("entries")
    truncated: bool = F("truncated")


@message
class JobExceptionsInfoWithHistory:
    exception_history: JobExceptionHistory = F("exceptionHistory")
    root_exception: str | None = F("root-exception", doc="the latest failure's stack trace")
    timestamp: int | None = F("timestamp")
