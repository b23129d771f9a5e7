"""A subtask's drill-down into its Spark work: ``GET .../vertices/:vertexid/subtasks/:subtaskindex/spark``.

Its TaskManager reads the stages each subtask's bundles ran from its Spark driver and sends them with the
subtask's metrics (runtime.taskmanager.spark_work); the JobMaster keeps the recent ones per subtask. Served
here slowest first, grouped by plan, beside the subtask's busy time and phase times, and its busy time in parts
(runtime.spark_stages.busy_parts: its stages, Spark's driver outside them, the rest of its Spark actions, the
TaskManager's own work), so that a reader can see which part explains its time, and which stage does.
"""
from __future__ import annotations

from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import operation
from runtime.jobmanager.rest.jobs import VertexHandlerBase
from runtime.jobmanager.rest.metrics import subtask_index
from runtime.snapshots import SubtaskSnapshot
from runtime.spark_stages import (PARTS, SparkStageRecord, busy_parts, dominant_part, measured_share, slowest_first,
                                  time_by_plan)


class SubtaskSparkHandler(VertexHandlerBase):
    @operation("One subtask's recent Spark stages, slowest first, with its time per plan, busy time and phase times.",
               m.SubtaskSparkInfo)
    def get(self, jobid, vertexid, subtaskindex):
        vertex = self.vertex(jobid, vertexid)
        return subtask_spark(vertex.subtasks[subtask_index(vertex, subtaskindex)])


def subtask_spark(s: SubtaskSnapshot, spark_ui: str | None = None) -> m.SubtaskSparkInfo:
    report = s.metrics
    work = report.spark if report is not None else None
    stages = list(s.spark_stages)
    by_plan = time_by_plan(stages)
    whole = sum(by_plan.values()) or 1
    counts = {plan: sum(1 for st in stages if st.plan == plan) for plan in by_plan}
    busy = report.accumulated_busy_ms if report is not None else 0
    stage_ms = work.total_stage_ms if work is not None else 0
    parts = busy_parts(stage_ms, report.phase_s if report is not None else {})
    return m.SubtaskSparkInfo(
        subtask=s.index, attempt=s.attempt, status=s.state.value, taskmanager_id=s.tm_id, host=s.host,
        busy_time=busy, stage_time=stage_ms,
        stage_count=work.total_stages if work is not None else 0,
        dominant_plan=work.dominant_plan if work is not None else None,
        dominant_share=work.dominant_share if work is not None else 0.0,
        phases=dict(report.phase_s) if report is not None else {},
        plans=[m.SparkPlanTime(plan=plan, stages=counts[plan], duration=ms, share=round(ms / whole, 4))
               for plan, ms in by_plan.items()],
        stages=[stage_info(st) for st in slowest_first(stages)], spark_ui=spark_ui,
        driver_time=parts["driver"], transfer_time=parts["transfer"], taskmanager_time=parts["taskmanager"],
        parts=[m.SparkTimePart(part=k, description=PARTS[k], time=ms, share=round(ms / busy, 4) if busy else 0.0)
               for k, ms in parts.items()],
        dominant_part=dominant_part(parts), measured_share=round(measured_share(parts, busy), 4))


def stage_info(st: SparkStageRecord) -> m.SparkStageInfo:
    return m.SparkStageInfo(
        stage_id=st.stage_id, attempt=st.attempt, job_ids=list(st.job_ids), plan=st.plan, status=st.status,
        submission_time=st.submitted_ms, duration=st.duration_ms, tasks=st.tasks, failed_tasks=st.failed_tasks,
        executor_run_time=st.executor_run_ms, executor_cpu_time=st.executor_cpu_ms, input_bytes=st.input_bytes,
        shuffle_read_bytes=st.shuffle_read_bytes, shuffle_write_bytes=st.shuffle_write_bytes,
        memory_spilled_bytes=st.memory_spilled_bytes, disk_spilled_bytes=st.disk_spilled_bytes)
