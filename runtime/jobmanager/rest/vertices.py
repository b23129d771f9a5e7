"""A task's (vertex's) sub-resources as Flink's web dashboard reads them: one subtask, subtask times,
the TaskManagers its subtasks run on, accumulators; and the job's execution configuration and
applications, which the dashboard asks for beside them."""
from __future__ import annotations

import time

from runtime.jobmanager.rest import convert
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, operation
from runtime.jobmanager.rest.jobs import VertexHandlerBase
from runtime.jobmanager.rest.metrics import subtask_index
from runtime.snapshots import JobSnapshot, SubtaskSnapshot, VertexSnapshot
from runtime.states import ExecutionState


class SubtaskHandler(VertexHandlerBase):
    @operation("One subtask's current attempt: state, TaskManager, times and counters.",
               m.SubtaskExecutionAttemptDetailsInfo)
    def get(self, jobid, vertexid, subtaskindex):
        vertex = self.vertex(jobid, vertexid)
        return convert.subtask_info(vertex.subtasks[subtask_index(vertex, subtaskindex)], time.time())


class SubtaskTimesHandler(VertexHandlerBase):
    @operation("When each subtask entered each state.", m.SubtasksTimesInfo)
    def get(self, jobid, vertexid):
        return subtask_times(self.vertex(jobid, vertexid), time.time())


def subtask_times(v: VertexSnapshot, now: float) -> m.SubtasksTimesInfo:
    return m.SubtasksTimesInfo(id=v.id, name=v.name, now=convert.ms(now), subtasks=[m.SubtaskTimeInfo(
        subtask=s.index, host=s.host, endpoint=s.host,
        duration=int(((s.end_time or now) - s.start_time) * 1000) if s.start_time else -1,
        timestamps={state.value: convert.ms(t) for state, t in s.state_times.items()}) for s in v.subtasks])


class VertexTaskManagersHandler(VertexHandlerBase):
    @operation("The TaskManagers a task's subtasks run on, with their counters summed per TaskManager.",
               m.JobVertexTaskManagersInfo)
    def get(self, jobid, vertexid):
        return vertex_taskmanagers(self.vertex(jobid, vertexid), time.time())


def vertex_taskmanagers(v: VertexSnapshot, now: float) -> m.JobVertexTaskManagersInfo:
    groups: dict[str | None, list[SubtaskSnapshot]] = {}
    for s in v.subtasks:
        groups.setdefault(s.tm_id, []).append(s)
    return m.JobVertexTaskManagersInfo(id=v.id, name=v.name, now=convert.ms(now),
                                       taskmanagers=[_on_taskmanager(subs, now) for subs in groups.values()])


def _on_taskmanager(subtasks: list[SubtaskSnapshot], now: float) -> m.TaskManagerOfVertex:
    counts = {state: sum(1 for s in subtasks if s.state == state) for state in ExecutionState}
    starts = [s.start_time for s in subtasks if s.start_time is not None]
    ends = [s.end_time for s in subtasks]
    start = min(starts) if starts else None
    end = max(e for e in ends if e is not None) if all(e is not None for e in ends) else None
    return m.TaskManagerOfVertex(
        endpoint=subtasks[0].host, host=subtasks[0].host, taskmanager_id=subtasks[0].tm_id,
        status=max(counts, key=lambda state: counts[state]).value, start_time=convert.ms(start),
        end_time=convert.ms(end), duration=int(((end or now) - start) * 1000) if start else -1,
        metrics=convert.io_metrics([s.metrics for s in subtasks if s.metrics is not None]),
        status_counts={state.value: n for state, n in counts.items()})


class VertexAccumulatorsHandler(VertexHandlerBase):
    @operation("A task's user accumulators (Flinkbench has none: always empty).", m.JobVertexAccumulatorsInfo)
    def get(self, jobid, vertexid):
        return m.JobVertexAccumulatorsInfo(id=self.vertex(jobid, vertexid).id)


class SubtasksAccumulatorsHandler(VertexHandlerBase):
    @operation("Each subtask's user accumulators (Flinkbench has none: always empty).", m.SubtasksAllAccumulatorsInfo)
    def get(self, jobid, vertexid):
        v = self.vertex(jobid, vertexid)
        return m.SubtasksAllAccumulatorsInfo(id=v.id, parallelism=v.parallelism, subtasks=[
            m.SubtaskAccumulatorsInfo(subtask=s.index, attempt=s.attempt, endpoint=s.host, host=s.host)
            for s in v.subtasks])


class JobConfigHandler(ApiHandler):
    @operation("The job's execution configuration: mode, restart strategy, parallelism, its own settings.",
               m.JobConfigInfo)
    def get(self, jobid):
        return job_config(self.gateway.request_job(jobid))


def job_config(job: JobSnapshot) -> m.JobConfigInfo:
    s = job.summary
    return m.JobConfigInfo(jid=s.job_id, name=s.name, execution_config=m.ExecutionConfigInfo(
        execution_mode="BATCH" if s.batch else "PIPELINED", restart_strategy=job.restart_strategy,
        job_parallelism=s.parallelism, user_config=dict(job.settings)))


class ApplicationsOverviewHandler(ApiHandler):
    @operation("Flink 2.3's applications: Flinkbench runs jobs, not applications, so there are none.",
               m.ApplicationsOverview)
    def get(self):
        return m.ApplicationsOverview()
