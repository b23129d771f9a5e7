"""Flinkbench's state as Prometheus metric families with Flink's names and labels.

Flink's Prometheus reporter names a metric ``flink_<scope>_<name>`` (``flink_jobmanager_job_numRestarts``,
``flink_taskmanager_job_task_numRecordsIn``) and carries the scope's variables as labels (``job_id``,
``job_name``, ``task_name``, ``subtask_index``, ...). It exports counters as gauges too, since a
counter restarts with its task; so do these. Pure functions: snapshots (runtime.snapshots) in, families
out; the JobManager reads its snapshots through the Dispatcher's gateway, the TaskManager from its tasks.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily

from runtime.snapshots import CheckpointStatsSnapshot, ClusterOverview, JobSummary
from runtime.messages import TaskDeploymentDescriptor, TaskMetrics

NO_WATERMARK = -(2**63)  # Flink's Long.MIN_VALUE: no watermark received yet

TASK_LABELS = ["host", "tm_id", "job_id", "job_name", "task_id", "task_name", "task_attempt_id", "task_attempt_num",
               "subtask_index"]
JOB_LABELS = ["host", "job_id", "job_name", "user"]  # user: who submitted it (runtime.users)


@dataclass(frozen=True)
class JobView:
    """One job as the JobManager's families need it: its summary and, while known, its checkpoints."""
    summary: JobSummary
    checkpoints: CheckpointStatsSnapshot | None
    now: float


def _gauge(name: str, doc: str, labels: list[str], rows: Iterable[tuple[list[str], float]]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=labels)
    for values, value in rows:
        family.add_metric(values, value)
    return family


# -- JobManager -------------------------------------------------------------------------------
def cluster_families(host: str, overview: ClusterOverview, jobs: list[JobView]) -> Iterator[GaugeMetricFamily]:
    """``flink_jobmanager_*`` (the cluster) and ``flink_jobmanager_job_*`` (each job, with its checkpoints)."""
    cluster = [
        ("numRegisteredTaskManagers", "TaskManagers registered", overview.taskmanagers),
        ("numRunningJobs", "jobs not yet finished, failed or cancelled", overview.jobs_running),
        ("taskSlotsTotal", "slots the TaskManagers offer", overview.slots_total),
        ("taskSlotsAvailable", "slots free", overview.slots_available),
    ]
    for name, doc, value in cluster:
        yield _gauge(f"flink_jobmanager_{name}", doc, ["host"], [([host], value)])
    per_job = [
        ("numRestarts", "restarts of the job since it was submitted", lambda j: j.summary.restarts),
        ("uptime", "milliseconds since the job started, -1 once it ended", _uptime_ms),
        ("numberOfCompletedCheckpoints", "completed checkpoints", lambda j: _count(j, "completed")),
        ("numberOfFailedCheckpoints", "failed checkpoints", lambda j: _count(j, "failed")),
        ("numberOfInProgressCheckpoints", "checkpoints in progress", lambda j: _count(j, "in_progress")),
        ("totalNumberOfCheckpoints", "checkpoints triggered", lambda j: _count(j, "triggered")),
        ("lastCheckpointDuration", "milliseconds the last completed checkpoint took", _last_duration_ms),
        ("lastCheckpointSize", "bytes of state in the last completed checkpoint", _last_size),
        ("lastCheckpointRestoreTimestamp", "when the job last restored state (ms since epoch), -1 if never",
         _restore_ms),
    ]
    for name, doc, read in per_job:
        rows = [([host, j.summary.job_id, j.summary.name, j.summary.user], float(read(j))) for j in jobs]
        yield _gauge(f"flink_jobmanager_job_{name}", doc, JOB_LABELS, rows)


def _count(job: JobView, field: str) -> int:
    return getattr(job.checkpoints, field) if job.checkpoints else 0


def _uptime_ms(job: JobView) -> float:
    s = job.summary
    return -1.0 if s.end_time is not None else (job.now - s.start_time) * 1000


def _last_completed(job: JobView):
    history = job.checkpoints.history if job.checkpoints else ()
    return next((r for r in history if r.status == "COMPLETED" and not r.is_savepoint), None)


def _last_duration_ms(job: JobView) -> float:
    last = _last_completed(job)
    return last.duration_s * 1000 if last else 0.0


def _last_size(job: JobView) -> float:
    last = _last_completed(job)
    return float(last.size) if last else 0.0


def _restore_ms(job: JobView) -> float:
    restored = job.checkpoints.latest_restored if job.checkpoints else None
    return restored.restore_time * 1000 if restored else -1.0


# -- TaskManager ------------------------------------------------------------------------------
TASK_METRICS = [
    ("numRecordsIn", "records the task read", lambda m: m.records_in),
    ("numRecordsOut", "records the task emitted", lambda m: m.records_out),
    ("numRecordsInPerSecond", "records read per second over the last report interval", lambda m: m.records_in_per_s),
    ("numRecordsOutPerSecond", "records emitted per second over the last report interval", lambda m: m.records_out_per_s),
    ("numBytesIn", "bytes the task read", lambda m: m.bytes_in),
    ("numBytesOut", "bytes the task emitted", lambda m: m.bytes_out),
    ("currentInputWatermark", "the task's input watermark (ms since epoch; Long.MIN_VALUE before the first)",
     lambda m: NO_WATERMARK if m.watermark is None else max(NO_WATERMARK, m.watermark * 1000)),
    ("busyTimeMsPerSecond", "milliseconds per second busy", lambda m: m.busy_time_ms_per_s),
    ("idleTimeMsPerSecond", "milliseconds per second waiting for input", lambda m: m.idle_time_ms_per_s),
    ("backPressuredTimeMsPerSecond", "milliseconds per second waiting for output credit",
     lambda m: m.backpressured_time_ms_per_s),
    ("isBackPressured", "1 while the task's output waits for credit", lambda m: 1.0 if m.backpressure_ratio > 0.5 else 0.0),
    ("numLateRecordsDropped", "records that arrived after their window closed", lambda m: m.late_records),
    ("pendingRecords", "rows a rate-limited source is behind its pace (0 for other tasks)",
     lambda m: m.pending_records or 0),
    ("mailboxLatencyMs", "longest wait of a blocking step for a pool thread over the last report interval",
     lambda m: 1000.0 * m.phase_max_s.get("schedule_wait", 0.0)),
]


def taskmanager_families(host: str, tm_id: str,
                         tasks: Iterable[tuple[TaskDeploymentDescriptor, TaskMetrics | None]]) -> Iterator[GaugeMetricFamily]:
    """``flink_taskmanager_job_task_*`` for every task this TaskManager runs (that has reported once)."""
    reported = [(tdd, m) for tdd, m in tasks if m is not None]
    for name, doc, read in TASK_METRICS:
        rows = [([host, tm_id, tdd.job_id, tdd.job_name, tdd.vertex_id, tdd.task_name, tdd.attempt_id,
                  str(tdd.attempt_number), str(tdd.subtask_index)], float(read(m))) for tdd, m in reported]
        yield _gauge(f"flink_taskmanager_job_task_{name}", doc, TASK_LABELS, rows)
    phase_rows = [([host, tm_id, tdd.job_id, tdd.job_name, tdd.vertex_id, tdd.task_name, tdd.attempt_id,
                    str(tdd.attempt_number), str(tdd.subtask_index), phase], float(seconds))
                  for tdd, m in reported for phase, seconds in sorted(m.phase_s.items())]
    yield _gauge("flink_taskmanager_job_task_phaseTimeSeconds",
                 "seconds the task spent in each phase of a bundle's path (Flinkbench's own)",
                 TASK_LABELS + ["phase"], phase_rows)
