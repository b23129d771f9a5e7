"""Spark stages as a subtask's drill-down reads them (runtime.spark_stages), from the JSON a Spark 4 driver's
status store gave for a grouped count (two stages: the scan with partial aggregation and its exchange, then the
final aggregation)."""
from __future__ import annotations

from runtime.spark_stages import (DOMINANT_SHARE, PARTS, SparkStageRecord, busy_parts, dominant, dominant_part,
                                  measured_share, plan_of, slowest_first, stage_record)

FIRST = {"status": "COMPLETE", "stageId": 118, "attemptId": 0, "numTasks": 2, "numFailedTasks": 0,
         "submissionTime": 1795859699926, "completionTime": 1795859700217, "executorRunTime": 222,
         "executorCpuTime": 176861952, "inputBytes": 0, "shuffleReadBytes": 0, "shuffleWriteBytes": 374,
         "memoryBytesSpilled": 0, "diskBytesSpilled": 0, "name": "toArrow at NativeMethodAccessorImpl.java:0",
         "description": "Count (1/2) [0123456789abcdef0123456789abcdef]", "rddIds": [416, 414, 415, 413]}
RUNNING = {**FIRST, "status": "ACTIVE", "completionTime": None}
GRAPH = {"stageId": 118, "rootCluster": {"id": "stage_118", "name": "Stage 118", "childNodes": [], "childClusters": [
    {"id": "spark_plan_1847", "name": "WholeStageCodegen (1)", "childNodes": [{"id": 413, "name": "ParallelCollectionRDD"}],
     "childClusters": []},
    {"id": "spark_plan_1848", "name": "Exchange", "childNodes": [{"id": 416, "name": "MapPartitionsRDD"}],
     "childClusters": []}]}}


def record(plan: str, ms: int, stage: int = 1) -> SparkStageRecord:
    return SparkStageRecord(stage, 0, [stage], plan, "COMPLETE", 0, ms, 1)


def test_a_stage_that_ended_is_recorded_with_spark_figures():
    r = stage_record(FIRST, [59], plan_of(GRAPH))
    assert r is not None
    assert (r.stage_id, r.job_ids, r.status, r.tasks) == (118, [59], "COMPLETE", 2)
    assert r.duration_ms == 291 and r.executor_run_ms == 222 and r.executor_cpu_ms == 176
    assert r.shuffle_write_bytes == 374 and r.plan == "WholeStageCodegen (1) > Exchange"


def test_a_stage_still_running_is_not_recorded_yet():
    assert stage_record(RUNNING, [59], "x") is None


def test_a_plan_outside_any_sql_scope_is_named_by_its_rdds():
    graph = {"rootCluster": {"childClusters": [], "childNodes": [{"name": "ParallelCollectionRDD"}]}}
    assert plan_of(graph) == "ParallelCollectionRDD"
    assert plan_of({}) == "stage"


def test_a_plan_dominates_with_half_of_the_stage_time_or_more():
    stages = [record("a", 600), record("b", 300), record("a", 100)]
    plan, share = dominant(stages)
    assert plan == "a" and share == 0.7
    assert dominant([record("a", 40), record("b", 35), record("c", 25)]) is None
    assert dominant([record("a", 50), record("b", 50)]) == ("a", DOMINANT_SHARE)
    assert dominant([]) is None


def test_stages_are_listed_slowest_first():
    assert [s.duration_ms for s in slowest_first([record("a", 5), record("b", 50), record("c", 20)])] == [50, 20, 5]


def test_busy_time_splits_into_stages_driver_transfer_and_the_taskmanagers_own_work():
    phases = {"spark_action": 10.0, "spark_driver": 8.5, "window_merge": 1.2, "exchange_send": 0.3,
              "schedule_wait": 0.1, "input_wait": 4.0}  # a buffer's wait in the gate is no busy time of the task
    parts = busy_parts(1_000, phases)
    assert parts == {"stages": 1_000, "driver": 8_500, "transfer": 500, "taskmanager": 1_600} and list(parts) == list(PARTS)
    assert dominant_part(parts) == "driver"
    assert measured_share(parts, 12_000) == (1_000 + 8_500 + 1_600) / 12_000, "transfer is what is left: not counted"
    assert measured_share(parts, 0) == 0.0


def test_stages_longer_than_their_actions_leave_no_negative_transfer_and_no_part_may_dominate():
    parts = busy_parts(3_000, {"spark_action": 2.9, "spark_driver": 0.1, "window_merge": 2.5})
    assert parts["transfer"] == 0
    assert dominant_part(parts) == "stages"
    assert dominant_part({"stages": 40, "driver": 30, "transfer": 0, "taskmanager": 30}) is None
    assert dominant_part({"stages": 0, "driver": 0, "transfer": 0, "taskmanager": 0}) is None
