"""Flink's metric names, each with what it means and how to read it from a snapshot.

One table per scope, shared by every way a metric leaves a process: the Prometheus families
(runtime.metrics.families, ``flink_<scope>_<name>``) and the REST metric endpoints
(runtime.jobmanager.rest.metrics, ``/jobs/:jobid/vertices/:vertexid/metrics?get=<name>`` ...), so a
name is spelled, documented and computed in one place. Pure functions: snapshots in, numbers out.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from runtime.checkpoint.stats import CheckpointRecord, CheckpointStatsSnapshot
from runtime.snapshots import ClusterOverview, JobSummary
from runtime.messages import TaskMetrics

NO_WATERMARK = -(2**63)  # Flink's Long.MIN_VALUE: no watermark received yet

S = TypeVar("S")


@dataclass(frozen=True)
class MetricDef(Generic[S]):
    """One of Flink's metrics in one scope: its name, a line saying what it is, and its reader."""
    name: str
    doc: str
    read: Callable[[S], float]


@dataclass(frozen=True)
class JobView:
    """One job as the job-scope metrics need it: its summary and, while known, its checkpoints."""
    summary: JobSummary
    checkpoints: CheckpointStatsSnapshot | None
    now: float


@dataclass(frozen=True)
class ProcessView:
    """What a process says about itself (the JobManager's own, or a TaskManager's last status report)."""
    rss_bytes: int
    cpu_cores: int | None = None


def values(table: list[MetricDef[S]], source: S) -> dict[str, float]:
    """Every metric of ``table`` read from ``source``, by name."""
    return {d.name: float(d.read(source)) for d in table}


# -- JobManager (the cluster) -----------------------------------------------------------------
CLUSTER_METRICS: list[MetricDef[ClusterOverview]] = [
    MetricDef("numRegisteredTaskManagers", "TaskManagers registered", lambda o: o.taskmanagers),
    MetricDef("numRunningJobs", "jobs not yet finished, failed or cancelled", lambda o: o.jobs_running),
    MetricDef("taskSlotsTotal", "slots the TaskManagers offer", lambda o: o.slots_total),
    MetricDef("taskSlotsAvailable", "slots free", lambda o: o.slots_available),
]

#: Flinkbench's own, in Flink's style: a Python process has no JVM to describe with Status.JVM.*
PROCESS_METRICS: list[MetricDef[ProcessView]] = [
    MetricDef("Status.Process.Memory.RSS", "resident memory of the process and its children (bytes)",
              lambda p: p.rss_bytes),
]


# -- a job ------------------------------------------------------------------------------------
def _count(field: str) -> Callable[[JobView], float]:
    return lambda j: getattr(j.checkpoints, field) if j.checkpoints else 0


def _uptime_ms(job: JobView) -> float:
    s = job.summary
    return -1.0 if s.end_time is not None else (job.now - s.start_time) * 1000


def last_completed(stats: CheckpointStatsSnapshot | None) -> CheckpointRecord | None:
    history = stats.history if stats else ()
    return next((r for r in history if r.status == "COMPLETED" and not r.is_savepoint), None)


def _last(read: Callable[[CheckpointRecord], float]) -> Callable[[JobView], float]:
    def reader(job: JobView) -> float:
        last = last_completed(job.checkpoints)
        return read(last) if last else 0.0
    return reader


def _restore_ms(job: JobView) -> float:
    restored = job.checkpoints.latest_restored if job.checkpoints else None
    return restored.restore_time * 1000 if restored else -1.0


JOB_METRICS: list[MetricDef[JobView]] = [
    MetricDef("numRestarts", "restarts of the job since it was submitted", lambda j: j.summary.restarts),
    MetricDef("uptime", "milliseconds since the job started, -1 once it ended", _uptime_ms),
    MetricDef("numberOfCompletedCheckpoints", "completed checkpoints", _count("completed")),
    MetricDef("numberOfFailedCheckpoints", "failed checkpoints", _count("failed")),
    MetricDef("numberOfInProgressCheckpoints", "checkpoints in progress", _count("in_progress")),
    MetricDef("totalNumberOfCheckpoints", "checkpoints triggered", _count("triggered")),
    MetricDef("lastCheckpointDuration", "milliseconds the last completed checkpoint took",
              _last(lambda r: r.duration_s * 1000)),
    MetricDef("lastCheckpointSize", "bytes of state in the last completed checkpoint", _last(lambda r: r.size)),
    MetricDef("lastCheckpointRestoreTimestamp", "when the job last restored state (ms since epoch), -1 if never",
              _restore_ms),
]


# -- a task (one subtask of a vertex) ---------------------------------------------------------
def watermark_ms(m: TaskMetrics) -> float:
    return NO_WATERMARK if m.watermark is None else max(NO_WATERMARK, m.watermark * 1000)


TASK_METRICS: list[MetricDef[TaskMetrics]] = [
    MetricDef("numRecordsIn", "records the task read", lambda m: m.records_in),
    MetricDef("numRecordsOut", "records the task emitted", lambda m: m.records_out),
    MetricDef("numRecordsInPerSecond", "records read per second over the last report interval",
              lambda m: m.records_in_per_s),
    MetricDef("numRecordsOutPerSecond", "records emitted per second over the last report interval",
              lambda m: m.records_out_per_s),
    MetricDef("numBytesIn", "bytes the task read", lambda m: m.bytes_in),
    MetricDef("numBytesOut", "bytes the task emitted", lambda m: m.bytes_out),
    MetricDef("currentInputWatermark", "the task's input watermark (ms since epoch; Long.MIN_VALUE before the first)",
              watermark_ms),
    MetricDef("busyTimeMsPerSecond", "milliseconds per second busy", lambda m: m.busy_time_ms_per_s),
    MetricDef("idleTimeMsPerSecond", "milliseconds per second waiting for input", lambda m: m.idle_time_ms_per_s),
    MetricDef("backPressuredTimeMsPerSecond", "milliseconds per second waiting for output credit",
              lambda m: m.backpressured_time_ms_per_s),
    MetricDef("accumulatedBusyTime", "milliseconds busy since the task started", lambda m: m.accumulated_busy_ms),
    MetricDef("accumulatedIdleTime", "milliseconds waiting for input since the task started",
              lambda m: m.accumulated_idle_ms),
    MetricDef("accumulatedBackPressuredTime", "milliseconds waiting for output credit since the task started",
              lambda m: m.accumulated_backpressured_ms),
    MetricDef("isBackPressured", "1 while the task's output waits for credit",
              lambda m: 1.0 if m.backpressure_ratio > 0.5 else 0.0),
    MetricDef("numLateRecordsDropped", "records that arrived after their window closed", lambda m: m.late_records),
    MetricDef("pendingRecords", "rows a rate-limited source is behind its pace (0 for other tasks)",
              lambda m: m.pending_records or 0),
    MetricDef("mailboxLatencyMs", "longest wait of a blocking step for a pool thread over the last report interval",
              lambda m: 1000.0 * m.phase_max_s.get("schedule_wait", 0.0)),
]
