"""Typed snapshots (runtime.snapshots) to REST messages: the one place that decides how
the JobManager's state looks in Flink's shapes. Times go out as milliseconds since the epoch, -1 for
"not yet"."""
from __future__ import annotations

import time

from runtime.version import version
from runtime.jobmanager.rest import messages as m
from runtime.snapshots import (CheckpointConfigSnapshot, CheckpointRecord, CheckpointStatsSnapshot,
                                          ClusterOverview, FailureRecord, JobSnapshot, JobSummary, OperationState,
                                          OperationStatus, PlanNode, PushSourceSnapshot, SubtaskSnapshot,
                                          VertexSnapshot)
from runtime.messages import TaskMetrics
from runtime.states import ExecutionState

LONG_MAX = 0x7FFFFFFFFFFFFFFF
#: Flink's backpressure levels: a ratio up to 0.10 is ok, up to 0.5 low, above that high
BACKPRESSURE_LEVELS = ((0.10, "ok"), (0.5, "low"), (1.0, "high"))


def ms(t: float | None) -> int:
    return int(t * 1000) if t is not None else -1


def now_ms() -> int:
    return int(time.time() * 1000)


# -- cluster ---------------------------------------------------------------------------------
def leadership(view: dict) -> m.JobManagersInfo:
    leader = view.get("leader")
    return m.JobManagersInfo(
        leader=m.LeaderInfo(url=leader["url"], session_id=leader.get("session-id")) if leader else None,
        jobmanagers=[m.JobManagerInfo(id=j["id"], address=j["address"], url=j.get("url", j["address"]),
                                      pid=j.get("pid"), role=j["role"]) for j in view.get("jobmanagers", [])],
        role=view.get("role"))


def cluster_overview(ov: ClusterOverview, leaders: m.JobManagersInfo) -> m.ClusterOverviewWithVersion:
    return m.ClusterOverviewWithVersion(
        taskmanagers=ov.taskmanagers, slots_total=ov.slots_total, slots_available=ov.slots_available,
        jobs_running=ov.jobs_running, jobs_finished=ov.jobs_finished, jobs_cancelled=ov.jobs_cancelled,
        jobs_failed=ov.jobs_failed, flinkbench_version=version(), leader=leaders.leader,
        jobmanagers=leaders.jobmanagers, role=leaders.role)


# -- jobs ------------------------------------------------------------------------------------
def lower_case_counts(counts: dict[ExecutionState, int]) -> dict[str, int]:
    """Flink's JobDetails ``tasks``: lower-case state names and ``total``."""
    return {**{s.value.lower(): n for s, n in counts.items()}, "total": sum(counts.values())}


def job_details(job: JobSummary, now: float) -> m.JobDetails:
    return m.JobDetails(
        jid=job.job_id, name=job.name, job_type="BATCH" if job.batch else "STREAMING",
        start_time=ms(job.start_time), end_time=ms(job.end_time), duration=int(job.duration(now) * 1000),
        state=job.state.value, last_modification=ms(job.last_modification), tasks=lower_case_counts(job.task_counts),
        parallelism=job.parallelism, restarts=job.restarts, records_out_per_s=job.records_out_per_s)


def job_details_info(job: JobSnapshot, now: float) -> m.JobDetailsInfo:
    s = job.summary
    return m.JobDetailsInfo(
        jid=s.job_id, name=s.name, is_stoppable=job.stoppable, state=s.state.value,
        job_type="BATCH" if s.batch else "STREAMING", start_time=ms(s.start_time), end_time=ms(s.end_time),
        duration=int(s.duration(now) * 1000), max_parallelism=job.max_parallelism, now=ms(now),
        timestamps={k.value: ms(t) for k, t in job.status_times.items()},
        vertices=[vertex_info(v, now) for v in job.vertices],
        status_counts={st.value: n for st, n in s.task_counts.items()},
        plan=job_plan(job),
        last_modification=ms(s.last_modification), parallelism=s.parallelism, restarts=s.restarts,
        records_out_per_s=s.records_out_per_s, tasks=lower_case_counts(s.task_counts))


def job_plan(job: JobSnapshot) -> dict:
    s = job.summary
    return {**plan(job.plan, s.job_id, s.name, "BATCH" if s.batch else "STREAMING"), "statement": job.statement}


def plan(nodes: tuple[PlanNode, ...], job_id: str, name: str, job_type: str) -> dict:
    return {"jid": job_id, "name": name, "type": job_type, "nodes": [{
        "id": n.vertex_id, "description": n.description, "parallelism": n.parallelism,
        "operator": n.operators[0][2] if n.operators else "", "operator_strategy": "",
        "optimizer_properties": {},
        "operators": [{"id": op_id, "name": op_name, "kind": kind} for op_id, op_name, kind in n.operators],
        "inputs": [{"num": i, "id": inp.vertex_id, "ship_strategy": inp.ship_strategy, "exchange": "pipelined_bounded",
                    "keys": list(inp.keys)} for i, inp in enumerate(n.inputs)]} for n in nodes]}


def vertex_info(v: VertexSnapshot, now: float) -> m.JobVertexDetailsInfo:
    starts = [s.start_time for s in v.subtasks if s.start_time is not None]
    ends = [s.end_time for s in v.subtasks]
    start = min(starts) if starts else None
    end = max(e for e in ends if e is not None) if ends and all(e is not None for e in ends) else None
    return m.JobVertexDetailsInfo(
        id=v.id, name=v.name, max_parallelism=v.max_parallelism, parallelism=v.parallelism, status=v.state.value,
        start_time=ms(start), end_time=ms(end), duration=int(((end or now) - start) * 1000) if start else -1,
        tasks={s.value: n for s, n in v.task_counts().items()},
        metrics=io_metrics([s.metrics for s in v.subtasks if s.metrics is not None]), now=ms(now),
        operators=list(v.operators), subtasks=[subtask_info(s, now) for s in v.subtasks])


def subtask_info(s: SubtaskSnapshot, now: float) -> m.SubtaskExecutionAttemptDetailsInfo:
    start, end = s.start_time, s.end_time
    return m.SubtaskExecutionAttemptDetailsInfo(
        subtask=s.index, status=s.state.value, attempt=s.attempt, endpoint=s.host, start_time=ms(start),
        compatible_start_time=ms(start), end_time=ms(end),
        duration=int(((end or now) - start) * 1000) if start else -1,
        metrics=io_metrics([s.metrics]) if s.metrics is not None else None, taskmanager_id=s.tm_id,
        status_duration=_status_durations(s, now), attempt_id=s.attempt_id, host=s.host, slot=s.slot,
        failure_cause=s.failure)


def _status_durations(s: SubtaskSnapshot, now: float) -> dict[str, int]:
    entered = sorted(s.state_times.items(), key=lambda kv: kv[1])
    out = {}
    for i, (state, t) in enumerate(entered):
        left = entered[i + 1][1] if i + 1 < len(entered) else (t if state.is_terminal else now)
        out[state.value] = int((left - t) * 1000)
    return out


def io_metrics(reports: list[TaskMetrics]) -> m.IOMetricsInfo:
    """Counters of one subtask, or of several summed (a task's); complete when every subtask reported."""
    total = lambda name: sum(getattr(r, name) for r in reports)  # noqa: E731
    marks = [r.watermark for r in reports if r.watermark is not None]
    sent: dict[str, int] = {}
    for r in reports:
        for channel, n in r.sent_to.items():
            sent[channel] = sent.get(channel, 0) + n
    most = lambda name: max((getattr(r, name) for r in reports), default=0.0)  # noqa: E731
    ids = [r.last_checkpoint_id for r in reports if r.last_checkpoint_id is not None]
    sizes = [r.last_checkpoint_size for r in reports if r.last_checkpoint_size is not None]
    durations = [r.last_checkpoint_duration_s for r in reports if r.last_checkpoint_duration_s is not None]
    pending = [r.pending_records for r in reports if r.pending_records is not None]
    return m.IOMetricsInfo(
        read_bytes=total("bytes_in"), read_bytes_complete=bool(reports), write_bytes=total("bytes_out"),
        write_bytes_complete=bool(reports), read_records=total("records_in"), read_records_complete=bool(reports),
        write_records=total("records_out"), write_records_complete=bool(reports),
        accumulated_busy_time=total("accumulated_busy_ms"), accumulated_idle_time=total("accumulated_idle_ms"),
        accumulated_backpressured_time=total("accumulated_backpressured_ms"), records_in=total("records_in"),
        records_out=total("records_out"),
        bytes_in=total("bytes_in"), bytes_out=total("bytes_out"), records_in_per_s=total("records_in_per_s"),
        records_out_per_s=total("records_out_per_s"),
        backpressure_ratio=max((r.backpressure_ratio for r in reports), default=0.0),
        watermark=min(marks) if marks and len(marks) == len(reports) else None,
        bundle_time_s=max((r.bundle_time_s for r in reports), default=0.0), bundles=total("bundles"),
        sent_to=sent, late_records=total("late_records"), state_rows=total("state_rows"),
        busy_time_ms_per_s=most("busy_time_ms_per_s"), idle_time_ms_per_s=most("idle_time_ms_per_s"),
        backpressured_time_ms_per_s=most("backpressured_time_ms_per_s"), last_checkpoint_id=max(ids, default=None),
        last_checkpoint_duration_s=max(durations, default=None), last_checkpoint_size=sum(sizes) if sizes else None,
        phase_s=_merged([r.phase_s for r in reports], sum), phase_count=_merged([r.phase_count for r in reports], sum),
        phase_max_s=_merged([r.phase_max_s for r in reports], max), pending_records=sum(pending) if pending else None,
        spark=_spark_totals(reports[0]) if len(reports) == 1 else None)


def _spark_totals(report: TaskMetrics) -> dict | None:
    """One subtask's Spark totals and dominant plan (its stages are its drill-down's: .../subtasks/:i/spark)."""
    work = report.spark
    return None if work is None else {"total_stages": work.total_stages, "total_stage_ms": work.total_stage_ms,
                                      "dominant_plan": work.dominant_plan, "dominant_share": work.dominant_share,
                                      "explained": work.explained, "driver_share": work.driver_share}


def _merged(dicts: list[dict], combine) -> dict:
    """Per-key ``combine`` of the values several subtasks reported (sum of totals, max of maxima)."""
    keys = sorted({k for d in dicts for k in d})
    return {k: combine(d[k] for d in dicts if k in d) for k in keys}


def backpressure_level(ratio: float) -> str:
    return next(level for bound, level in BACKPRESSURE_LEVELS if ratio <= bound or bound == 1.0)


def _share(s, name: str, otherwise: float) -> float:
    """A running subtask's share of time in a state (Flink's busyRatio, idleRatio); ``otherwise`` when not running."""
    if s.state != ExecutionState.RUNNING or s.metrics is None:
        return otherwise
    return min(1.0, max(0.0, getattr(s.metrics, name) / 1000.0))


def backpressure(v: VertexSnapshot, now: float) -> m.JobVertexBackPressureInfo:
    subtasks = []
    for s in v.subtasks:
        ratio = s.metrics.backpressure_ratio if s.metrics is not None else 0.0
        level = backpressure_level(ratio)
        subtasks.append(m.SubtaskBackPressureInfo(
            subtask=s.index, attempt_number=s.attempt, backpressure_level=level, deprecated_backpressure_level=level,
            ratio=ratio, idle_ratio=_share(s, "idle_time_ms_per_s", 1.0), busy_ratio=_share(s, "busy_time_ms_per_s", 0.0)))
    worst = backpressure_level(max((s.ratio for s in subtasks), default=0.0))
    return m.JobVertexBackPressureInfo(backpressure_level=worst, deprecated_backpressure_level=worst,
                                       end_timestamp=ms(now), subtasks=subtasks)


def watermarks(v: VertexSnapshot) -> list[m.Metric]:
    """Each subtask's current input watermark in ms, as Flink's ``<subtask>.currentInputWatermark``."""
    return [m.Metric(id=f"{s.index}.currentInputWatermark", value=str(int(s.metrics.watermark * 1000)))
            for s in v.subtasks if s.metrics is not None and s.metrics.watermark is not None]


def exceptions(records: list[FailureRecord]) -> m.JobExceptionsInfoWithHistory:
    entries = [m.ExceptionInfo(exception_name=r.exception_name, stacktrace=r.stacktrace, timestamp=ms(r.timestamp),
                               task_name=r.task_name, endpoint=r.endpoint, location=r.endpoint,
                               task_manager_id=r.tm_id, attempt=r.attempt) for r in records]
    root = records[0] if records else None
    return m.JobExceptionsInfoWithHistory(
        exception_history=m.JobExceptionHistory(entries=entries, truncated=False),
        root_exception=root.stacktrace if root else None, timestamp=ms(root.timestamp) if root else None)


# -- checkpoints and operations --------------------------------------------------------------
def checkpoint(r: CheckpointRecord, path: str | None = None, retained: dict[int, str] | None = None) -> m.CheckpointStatistics:
    """One checkpoint; with ``retained`` (the retained checkpoints' paths) a completed one says if it was discarded."""
    discarded = None
    if retained is not None and r.status == "COMPLETED" and not r.is_savepoint:
        discarded = r.checkpoint_id not in retained
    return m.CheckpointStatistics(discarded=discarded,
        id=r.checkpoint_id, status=r.status, is_savepoint=r.is_savepoint,
        checkpoint_type="SAVEPOINT" if r.is_savepoint else "CHECKPOINT", trigger_timestamp=ms(r.trigger_time),
        latest_ack_timestamp=ms(r.latest_ack_time), state_size=r.size, checkpointed_size=_written(r),
        end_to_end_duration=int(r.duration_s * 1000), num_subtasks=r.num_subtasks,
        num_acknowledged_subtasks=r.num_acknowledged, external_path=path or r.external_path,
        failure_message=r.failure, failure_timestamp=ms(r.latest_ack_time) if r.status == "FAILED" else None)


def checkpoint_stats(s: CheckpointStatsSnapshot) -> m.CheckpointingStatistics:
    done = [r for r in s.history if r.status == "COMPLETED"]
    completed = next((r for r in done if not r.is_savepoint), None)
    savepoint = next((r for r in done if r.is_savepoint), None)
    restored = s.latest_restored
    return m.CheckpointingStatistics(
        counts=m.CheckpointCounts(restored=s.restored, total=s.triggered, in_progress=s.in_progress,
                                  completed=s.completed, failed=s.failed),
        summary=m.CheckpointSummary(end_to_end_duration=summary([int(r.duration_s * 1000) for r in done]),
                                    state_size=summary([r.size for r in done]),
                                    checkpointed_size=summary([_written(r) for r in done])),
        latest=m.LatestCheckpoints(
            completed=checkpoint(completed, s.retained_paths.get(completed.checkpoint_id), s.retained_paths)
            if completed else None,
            savepoint=checkpoint(savepoint) if savepoint else None,
            failed=checkpoint(s.latest_failed) if s.latest_failed else None,
            restored=m.RestoredCheckpointStatistics(id=restored.checkpoint_id, restore_timestamp=ms(restored.restore_time),
                                                    is_savepoint=restored.is_savepoint, external_path=restored.path)
            if restored else None),
        history=[checkpoint(r, retained=s.retained_paths) for r in s.history])


def _written(r: CheckpointRecord) -> int:
    """Bytes uploaded for a checkpoint (Flink's checkpointed_size): all of state_size unless incremental."""
    return r.size if r.checkpointed_size is None else r.checkpointed_size


def summary(values: list[int]) -> m.StatsSummary:
    if not values:
        return m.StatsSummary(min=0, max=0, avg=0, p50=0, p90=0, p95=0, p99=0, p999=0)
    ordered = sorted(values)
    pick = lambda q: float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])  # noqa: E731
    return m.StatsSummary(min=ordered[0], max=ordered[-1], avg=sum(ordered) // len(ordered), p50=pick(0.5),
                          p90=pick(0.9), p95=pick(0.95), p99=pick(0.99), p999=pick(0.999))


def checkpoint_config(c: CheckpointConfigSnapshot) -> m.CheckpointConfigInfo:
    return m.CheckpointConfigInfo(
        interval=int(c.interval_s * 1000) if c.interval_s > 0 else LONG_MAX, timeout=int(c.timeout_s * 1000),
        min_pause=int(c.min_pause_s * 1000), max_concurrent=c.max_concurrent, checkpoint_storage=c.storage,
        savepoints_dir=c.savepoints_dir, tolerable_failed_checkpoints=c.tolerable_failures)


def _failure(op: OperationStatus, kind: str) -> m.SerializedThrowable | None:
    return m.SerializedThrowable(cls=kind, stack_trace=op.failure) if op.failure is not None else None


def savepoint_result(op: OperationStatus) -> m.SavepointOperationResult:
    if op.state == OperationState.IN_PROGRESS:
        return m.SavepointOperationResult(status=m.QueueStatus(id=op.state.value))
    return m.SavepointOperationResult(status=m.QueueStatus(id=op.state.value), operation=m.SavepointInfo(
        location=op.result if op.failure is None else None, failure_cause=_failure(op, "CheckpointException")))


def checkpoint_result(op: OperationStatus) -> m.CheckpointOperationResult:
    if op.state == OperationState.IN_PROGRESS:
        return m.CheckpointOperationResult(status=m.QueueStatus(id=op.state.value))
    return m.CheckpointOperationResult(status=m.QueueStatus(id=op.state.value), operation=m.CheckpointInfo(
        checkpoint_id=op.result if op.failure is None else None, failure_cause=_failure(op, "CheckpointException")))


def disposal_result(op: OperationStatus) -> m.AsynchronousOperationResult:
    if op.state == OperationState.IN_PROGRESS:
        return m.AsynchronousOperationResult(status=m.QueueStatus(id=op.state.value))
    return m.AsynchronousOperationResult(status=m.QueueStatus(id=op.state.value), operation=m.AsynchronousOperationInfo(
        failure_cause=_failure(op, "SavepointDisposalException")))


def push_source(s: PushSourceSnapshot) -> m.PushSourceInfo:
    return m.PushSourceInfo(id=s.source_id, name=s.name, schema=s.schema, rows=s.rows, closed=s.closed)
