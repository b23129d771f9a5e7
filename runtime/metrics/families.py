"""Flinkbench's state as Prometheus metric families with Flink's names and labels.

Flink's Prometheus reporter names a metric ``flink_<scope>_<name>`` (``flink_jobmanager_job_numRestarts``,
``flink_taskmanager_job_task_numRecordsIn``) and carries the scope's variables as labels (``job_id``,
``job_name``, ``task_name``, ``subtask_index``, ...). It exports counters as gauges too, since a
counter restarts with its task; so do these. Pure functions: snapshots (runtime.snapshots) in, families
out; the JobManager reads its snapshots through the Dispatcher's gateway, the TaskManager from its tasks.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client.core import GaugeMetricFamily

from runtime.snapshots import ClusterOverview
from runtime.metrics.catalog import CLUSTER_METRICS, JOB_METRICS, TASK_METRICS, JobView
from runtime.messages import TaskDeploymentDescriptor, TaskMetrics

TASK_LABELS = ["host", "tm_id", "job_id", "job_name", "task_id", "task_name", "task_attempt_id", "task_attempt_num",
               "subtask_index"]
JOB_LABELS = ["host", "job_id", "job_name", "user"]  # user: who submitted it (runtime.users)


def _gauge(name: str, doc: str, labels: list[str], rows: Iterable[tuple[list[str], float]]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=labels)
    for values, value in rows:
        family.add_metric(values, value)
    return family


# -- JobManager -------------------------------------------------------------------------------
def cluster_families(host: str, overview: ClusterOverview, jobs: list[JobView]) -> Iterator[GaugeMetricFamily]:
    """``flink_jobmanager_*`` (the cluster) and ``flink_jobmanager_job_*`` (each job, with its checkpoints)."""
    for d in CLUSTER_METRICS:
        yield _gauge(f"flink_jobmanager_{d.name}", d.doc, ["host"], [([host], float(d.read(overview)))])
    for d in JOB_METRICS:
        rows = [([host, j.summary.job_id, j.summary.name, j.summary.user], float(d.read(j))) for j in jobs]
        yield _gauge(f"flink_jobmanager_job_{d.name}", d.doc, JOB_LABELS, rows)


# -- TaskManager ------------------------------------------------------------------------------
def taskmanager_families(host: str, tm_id: str,
                         tasks: Iterable[tuple[TaskDeploymentDescriptor, TaskMetrics | None]]) -> Iterator[GaugeMetricFamily]:
    """``flink_taskmanager_job_task_*`` for every task this TaskManager runs (that has reported once)."""
    reported = [(tdd, m) for tdd, m in tasks if m is not None]
    for d in TASK_METRICS:
        rows = [([host, tm_id, tdd.job_id, tdd.job_name, tdd.vertex_id, tdd.task_name, tdd.attempt_id,
                  str(tdd.attempt_number), str(tdd.subtask_index)], float(d.read(m))) for tdd, m in reported]
        yield _gauge(f"flink_taskmanager_job_task_{d.name}", d.doc, TASK_LABELS, rows)
    phase_rows = [([host, tm_id, tdd.job_id, tdd.job_name, tdd.vertex_id, tdd.task_name, tdd.attempt_id,
                    str(tdd.attempt_number), str(tdd.subtask_index), phase], float(seconds))
                  for tdd, m in reported for phase, seconds in sorted(m.phase_s.items())]
    yield _gauge("flink_taskmanager_job_task_phaseTimeSeconds",
                 "seconds the task spent in each phase of a bundle's path (Flinkbench's own)",
                 TASK_LABELS + ["phase"], phase_rows)
