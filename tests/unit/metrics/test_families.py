"""Flinkbench state as Prometheus text with Flink's metric names and labels (no sockets)."""
from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from runtime.config import ConfigError, Configuration
from runtime.ids import AllocationId, ExecutionAttemptId, JobId, JobVertexId
from runtime.snapshots import CheckpointRecord, CheckpointStatsSnapshot, ClusterOverview, JobSummary
from runtime.messages import TaskDeploymentDescriptor, TaskMetrics
from runtime.metrics.endpoint import port_range
from runtime.metrics.catalog import NO_WATERMARK, JobView
from runtime.metrics.families import cluster_families, taskmanager_families
from runtime.states import JobStatus


def scrape(families) -> dict[tuple[str, frozenset], float]:
    """What Prometheus would read: (metric name, labels) -> value."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(type("C", (), {"collect": lambda self: list(families)})())
    text = generate_latest(registry).decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples, name, **labels):
    found = [v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= ls]
    assert len(found) == 1, (name, labels, [k for k in samples if k[0] == name])
    return found[0]


def descriptor(job_id, subtask):
    return TaskDeploymentDescriptor(job_id, "clicks", JobVertexId("v" * 32), "Window(10 s) -> Collect",
                                    ExecutionAttemptId.new(), 0, subtask, 2, 128, AllocationId.new(), [])


def test_task_metrics_have_flinks_names_and_labels():
    job = JobId.new()
    reported = TaskMetrics(job, ExecutionAttemptId.new(), records_in=1200, records_out=40, records_in_per_s=600.5,
                           watermark=1_700_000_010.0, backpressure_ratio=0.9, late_records=3)
    samples = scrape(taskmanager_families("127.0.0.1", "tm-1", [(descriptor(job, 1), reported),
                                                                (descriptor(job, 0), None)]))
    labels = dict(job_id=job, job_name="clicks", task_name="Window(10 s) -> Collect", subtask_index="1", tm_id="tm-1")
    assert value(samples, "flink_taskmanager_job_task_numRecordsIn", **labels) == 1200
    assert value(samples, "flink_taskmanager_job_task_numRecordsOut", **labels) == 40
    assert value(samples, "flink_taskmanager_job_task_numRecordsInPerSecond", **labels) == 600.5
    assert value(samples, "flink_taskmanager_job_task_currentInputWatermark", **labels) == 1_700_000_010_000
    assert value(samples, "flink_taskmanager_job_task_isBackPressured", **labels) == 1
    assert value(samples, "flink_taskmanager_job_task_numLateRecordsDropped", **labels) == 3
    assert not [k for k in samples if ("subtask_index", "0") in k[1]]  # not reported yet: not shown


def test_a_task_without_a_watermark_shows_flinks_long_min_value():
    job = JobId.new()
    samples = scrape(taskmanager_families("h", "tm", [(descriptor(job, 0), TaskMetrics(job, ExecutionAttemptId.new()))]))
    assert value(samples, "flink_taskmanager_job_task_currentInputWatermark") == NO_WATERMARK


def summary(job_id, state=JobStatus.RUNNING, restarts=0, end=None):
    return JobSummary(job_id, "clicks", state, 1000.0, end, 1000.0, 2, restarts, {}, 0.0, False, "alice")


def test_jobmanager_metrics_count_checkpoints_and_restarts():
    job, done = JobId.new(), JobId.new()
    history = (CheckpointRecord(7, "COMPLETED", False, 1010.0, 1010.2, 0.25, 4096, 4, 4),
               CheckpointRecord(6, "COMPLETED", True, 1009.0, 1009.1, 0.1, 100, 4, 4),
               CheckpointRecord(5, "FAILED", False, 1008.0, 1008.1, 0.1, 0, 4, 1))
    stats = CheckpointStatsSnapshot(triggered=7, completed=5, failed=2, in_progress=0, restored=1, history=history)
    overview = ClusterOverview(taskmanagers=2, slots_total=4, slots_available=2, jobs_running=1, jobs_finished=1,
                               jobs_cancelled=0, jobs_failed=0)
    samples = scrape(cluster_families("127.0.0.1", overview, [
        JobView(summary(job, restarts=2), stats, now=1020.0),
        JobView(summary(done, JobStatus.FINISHED, end=1005.0), None, now=1020.0)]))
    assert value(samples, "flink_jobmanager_numRegisteredTaskManagers") == 2
    assert value(samples, "flink_jobmanager_taskSlotsAvailable") == 2
    assert value(samples, "flink_jobmanager_numRunningJobs") == 1
    assert value(samples, "flink_jobmanager_job_numRestarts", job_id=job, job_name="clicks", user="alice") == 2
    assert value(samples, "flink_jobmanager_job_numberOfCompletedCheckpoints", job_id=job) == 5
    assert value(samples, "flink_jobmanager_job_numberOfFailedCheckpoints", job_id=job) == 2
    assert value(samples, "flink_jobmanager_job_lastCheckpointDuration", job_id=job) == 250  # not the savepoint
    assert value(samples, "flink_jobmanager_job_lastCheckpointSize", job_id=job) == 4096
    assert value(samples, "flink_jobmanager_job_uptime", job_id=job) == 20_000
    assert value(samples, "flink_jobmanager_job_uptime", job_id=done) == -1
    assert value(samples, "flink_jobmanager_job_numberOfCompletedCheckpoints", job_id=done) == 0


@pytest.mark.parametrize("spec, ports", [("9249", [9249]), ("9250-9252", [9250, 9251, 9252]), (" 9250 - 9251 ", [9250, 9251])])
def test_the_port_key_takes_a_port_or_a_range(spec, ports):
    conf = Configuration({"metrics.reporter.prom.port": spec})
    assert list(port_range(conf.get("metrics.reporter.prom.port"))) == ports


@pytest.mark.parametrize("spec", ["abc", "9260-9250", "70000", "0", "9249,9250"])
def test_a_bad_port_value_is_refused_naming_the_key(spec):
    with pytest.raises(ConfigError, match="metrics.reporter.prom.port"):
        Configuration({"metrics.reporter.prom.port": spec})
