"""A subtask attempt keeps the Spark stages its reports bring (runtime.jobmanager.execution_graph.Execution):
the recent ones, bounded, while each report it keeps and publishes carries only the totals."""
from __future__ import annotations

from runtime.codec import decode, encode
from runtime.ids import ExecutionAttemptId, JobId
from runtime.jobmanager.execution_graph import RECENT_SPARK_STAGES, Execution
from runtime.messages import TaskMetrics
from runtime.spark_stages import SparkStageRecord, SparkWork


def report(first: int, count: int) -> TaskMetrics:
    stages = [SparkStageRecord(i, 0, [i], "WholeStageCodegen (1)", "COMPLETE", 0, 10, 1)
              for i in range(first, first + count)]
    work = SparkWork(stages, first + count, 10 * (first + count))
    return TaskMetrics(JobId("a" * 32), ExecutionAttemptId("b" * 32), spark=work)


def test_reports_add_their_stages_to_the_recent_ones_and_keep_only_the_totals():
    execution = Execution(ExecutionAttemptId("b" * 32), 0)
    kept = execution.note_metrics(report(0, 3))
    assert kept.spark.stages == [] and kept.spark.total_stages == 3 and execution.metrics is kept
    execution.note_metrics(report(3, RECENT_SPARK_STAGES))
    assert len(execution.spark_stages) == RECENT_SPARK_STAGES
    assert execution.spark_stages[0].stage_id == 3 and execution.spark_stages[-1].stage_id == RECENT_SPARK_STAGES + 2


def test_a_report_with_its_stages_crosses_the_wire_whole():
    sent = report(0, 2)
    assert decode(encode(sent), TaskMetrics) == sent
