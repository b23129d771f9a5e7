"""A subtask's drill-down into its Spark work (Flinkbench's own): the stages its bundles ran, slowest first,
beside where its time went."""
from __future__ import annotations

from runtime.jobmanager.rest.fields import F, message


@message
class SparkStageInfo:
    """One Spark stage (an attempt of it) that one of the subtask's bundles ran, as Spark's status store told."""
    stage_id: int = F("stage-id")
    attempt: int = F("attempt")
    job_ids: list[int] = F("job-ids", doc="the Spark jobs it belonged to")
    plan: str = F("plan", doc="its operation graph's scopes in order, as the Spark UI draws them")
    status: str = F("status", doc="COMPLETE or FAILED")
    submission_time: int = F("submission-time", doc="epoch ms")
    duration: int = F("duration", doc="ms from its submission to its completion")
    tasks: int = F("tasks")
    failed_tasks: int = F("failed-tasks")
    executor_run_time: int = F("executor-run-time", doc="ms, its tasks' run times added up")
    executor_cpu_time: int = F("executor-cpu-time", doc="ms, its tasks' CPU times added up")
    input_bytes: int = F("input-bytes")
    shuffle_read_bytes: int = F("shuffle-read-bytes")
    shuffle_write_bytes: int = F("shuffle-write-bytes")
    memory_spilled_bytes: int = F("memory-spilled-bytes")
    disk_spilled_bytes: int = F("disk-spilled-bytes")


@message
class SparkPlanTime:
    """The recent stages of one plan together: how much of the subtask's recent stage time it took."""
    plan: str = F("plan")
    stages: int = F("stages")
    duration: int = F("duration", doc="ms, added up")
    share: float = F("share", doc="of the recent stages' time, 0..1")


@message
class SparkTimePart:
    """One part of the subtask's busy time since it started (runtime.spark_stages.PARTS)."""
    part: str = F("part", doc="stages, driver, transfer or taskmanager")
    description: str = F("description")
    time: int = F("time", doc="ms since the subtask started")
    share: float = F("share", doc="of its busy time, 0..1")


@message
class SubtaskSparkInfo:
    """What one subtask's bundles ran in Spark: its recent stages slowest first, the time per plan, and where
    the subtask's time went (busy, and its phases) to hold them against."""
    subtask: int = F("subtask")
    attempt: int = F("attempt")
    status: str = F("status")
    taskmanager_id: str | None = F("taskmanager-id")
    host: str | None = F("host")
    busy_time: int = F("busy-time", doc="ms the subtask was busy since it started (Flink's accumulated busy time)")
    stage_time: int = F("stage-time", doc="ms of all its Spark stages since it started, added up")
    stage_count: int = F("stage-count", doc="its Spark stages since it started")
    dominant_plan: str | None = F("dominant-plan", doc="the plan taking half or more of its recent stage time")
    dominant_share: float = F("dominant-share")
    phases: dict[str, float] = F("phases", doc="seconds per phase of a bundle's path since it started")
    plans: list[SparkPlanTime] = F("plans", doc="recent stage time per plan, largest first")
    stages: list[SparkStageInfo] = F("stages", doc="its recent stages, slowest first")
    spark_ui: str | None = F("spark-ui", doc="its TaskManager's Spark UI through this REST API, when it serves one")
    driver_time: int = F("driver-time", default=0, doc="ms Spark's driver spent on its queries outside any stage "
                         "(analysis, optimizer, planning) since it started")
    transfer_time: int = F("transfer-time", default=0, doc="ms of its Spark actions beyond their stages and driver time")
    taskmanager_time: int = F("taskmanager-time", default=0, doc="ms of the TaskManager's own work on it since it "
                              "started (its phases outside Spark actions)")
    parts: list[SparkTimePart] = F("parts", factory=list, doc="its busy time in parts: stages, driver, "
                                   "transfer, taskmanager")
    dominant_part: str | None = F("dominant-part", default=None, doc="the part holding half or more of the parts' time")
    measured_share: float = F("measured-share", default=0.0, doc="the stages', driver's and TaskManager's time "
                              "together over its busy time (each measured on its own)")
