"""One checkpoint in detail (Flink's ``/jobs/:jobid/checkpoints/details/:checkpointid`` and
``.../subtasks/:vertexid``): each task's part, and each subtask's acknowledgement with its sync and async
snapshot time, barrier alignment, start delay and sizes. The JobManager keeps the details of its recent
checkpoints (runtime.checkpoint.details); older ids are 404."""
from __future__ import annotations

import dataclasses

from runtime.jobmanager.rest import convert
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, HTTPError, operation
from runtime.snapshots import CheckpointDetailsSnapshot, SubtaskCheckpointStats

UNMEASURED = -1


def _checkpoint_id(raw: str) -> int:
    if not raw.isdigit():
        raise HTTPError(400, f"checkpoint id must be a non-negative integer, got {raw!r}")
    return int(raw)


def _ms(value: int | None) -> int:
    return UNMEASURED if value is None else value


def task_part(d: CheckpointDetailsSnapshot, subtasks: list[SubtaskCheckpointStats]) -> m.TaskCheckpointStatistics:
    acked = [s for s in subtasks if s.ack_time is not None]
    latest = max((s.ack_time for s in acked if s.ack_time is not None), default=None)
    status = "COMPLETED" if len(acked) == len(subtasks) else d.record.status
    return m.TaskCheckpointStatistics(
        id=d.record.checkpoint_id, status=status, latest_ack_timestamp=convert.ms(latest),
        checkpointed_size=sum(s.checkpointed_size for s in acked), state_size=sum(s.state_size for s in acked),
        end_to_end_duration=round((latest - d.record.trigger_time) * 1000) if latest is not None else UNMEASURED,
        num_subtasks=len(subtasks), num_acknowledged_subtasks=len(acked))


def by_vertex(d: CheckpointDetailsSnapshot) -> dict[str, list[SubtaskCheckpointStats]]:
    out: dict[str, list[SubtaskCheckpointStats]] = {}
    for s in d.subtasks:
        out.setdefault(s.vertex_id, []).append(s)
    return out


def checkpoint_with_tasks(d: CheckpointDetailsSnapshot, retained: dict[int, str]) -> m.CheckpointStatisticsWithTasks:
    base = convert.checkpoint(d.record, retained=retained)
    return m.CheckpointStatisticsWithTasks(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)},
                                           tasks={vid: task_part(d, subs) for vid, subs in by_vertex(d).items()})


def subtask_part(d: CheckpointDetailsSnapshot, s: SubtaskCheckpointStats) -> m.SubtaskCheckpointStatistics:
    if s.ack_time is None:
        return m.SubtaskCheckpointStatistics(index=s.index, status="pending_or_failed")
    return m.SubtaskCheckpointStatistics(
        index=s.index, status="completed", ack_timestamp=convert.ms(s.ack_time),
        end_to_end_duration=round((s.ack_time - d.record.trigger_time) * 1000), state_size=s.state_size,
        checkpointed_size=s.checkpointed_size,
        checkpoint=m.CheckpointDuration(sync=_ms(s.sync_ms), asynchronous=_ms(s.async_ms)),
        alignment=m.CheckpointAlignment(duration=_ms(s.alignment_ms)), start_delay=_ms(s.start_delay_ms),
        unaligned_checkpoint=False, aborted=False)


def subtasks_summary(d: CheckpointDetailsSnapshot, subtasks: list[SubtaskCheckpointStats]) -> m.TaskCheckpointSubtasksSummary:
    acked = [s for s in subtasks if s.ack_time is not None]
    measured = lambda name: convert.summary([getattr(s, name) for s in acked if getattr(s, name) is not None])  # noqa: E731
    none = convert.summary([0 for _ in acked])
    return m.TaskCheckpointSubtasksSummary(
        checkpointed_size=convert.summary([s.checkpointed_size for s in acked]),
        state_size=convert.summary([s.state_size for s in acked]),
        end_to_end_duration=convert.summary([round(((s.ack_time or 0.0) - d.record.trigger_time) * 1000) for s in acked]),
        checkpoint_duration=m.CheckpointDurationSummary(sync=measured("sync_ms"), asynchronous=measured("async_ms")),
        alignment=m.CheckpointAlignmentSummary(buffered=none, processed=none, persisted=none,
                                               duration=measured("alignment_ms")),
        start_delay=measured("start_delay_ms"))


class CheckpointDetailsHandler(ApiHandler):
    @operation("One recent checkpoint with each task's part (by vertex id).", m.CheckpointStatisticsWithTasks)
    def get(self, jobid, checkpointid):
        details = self.gateway.checkpoint_details(jobid, _checkpoint_id(checkpointid))
        return checkpoint_with_tasks(details, self.gateway.checkpoint_stats(jobid).retained_paths)


class CheckpointSubtaskDetailsHandler(ApiHandler):
    @operation("One task's part in a recent checkpoint, subtask by subtask, with a summary over them.",
               m.TaskCheckpointStatisticsWithSubtaskDetails)
    def get(self, jobid, checkpointid, vertexid):
        details = self.gateway.checkpoint_details(jobid, _checkpoint_id(checkpointid))
        subtasks = by_vertex(details).get(vertexid)
        if subtasks is None:
            raise HTTPError(404, f"checkpoint {checkpointid} of job {jobid} has no task (vertex) {vertexid}")
        part = task_part(details, subtasks)
        return m.TaskCheckpointStatisticsWithSubtaskDetails(
            **{f.name: getattr(part, f.name) for f in dataclasses.fields(part)},
            summary=subtasks_summary(details, subtasks), subtasks=[subtask_part(details, s) for s in subtasks])
