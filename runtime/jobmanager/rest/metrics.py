"""Flink's metric endpoints: the JobManager, jobs, a task's subtasks and TaskManagers, each by itself
(``?get=``) or aggregated over several (``?get=&agg=`` with ``subtasks=``, ``taskmanagers=``, ``jobs=``).

Names and readers come from runtime.metrics.catalog (the Prometheus endpoint uses the same), the query
language from runtime.metrics.query. A task's metrics are what its subtasks last reported (about once a
second), named ``<subtask>.<metric>`` as Flink's vertex scope names them.
"""
from __future__ import annotations

import time

from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, HTTPError, Query, operation
from runtime.jobmanager.rest.jobs import VertexHandlerBase
from runtime.snapshots import TaskManagerSnapshot, VertexSnapshot
from runtime.metrics import query
from runtime.metrics.catalog import (CLUSTER_METRICS, JOB_METRICS, PROCESS_METRICS, TASK_METRICS, JobView,
                                     ProcessView, values)
from runtime.process_info import rss_bytes

GET = Query("get", "comma-separated metric ids; without it, the ids there are")
AGG = Query("agg", "comma-separated aggregates: min, max, avg, sum, skew (default: all)")
SUBTASKS = Query("subtasks", "subtask indices and ranges, e.g. 0,2-4 (default: all)")
TASKMANAGERS = Query("taskmanagers", "comma-separated TaskManager ids (default: all)")
JOBS = Query("jobs", "comma-separated job ids (default: all)")


class MetricsHandler(ApiHandler):
    """Answers ``?get=`` over one entity's metrics, or aggregates over several."""

    def metrics(self, available: dict[str, float]) -> list[m.Metric]:
        return [m.Metric(**entry) for entry in query.pick(available, query.names(self.get_query_argument("get", None)))]

    def aggregated(self, entities: list[dict[str, float]]) -> list[m.AggregatedMetric]:
        wanted = query.names(self.get_query_argument("get", None))
        chosen = query.aggregates(self.get_query_argument("agg", None))
        return [m.AggregatedMetric(**entry) for entry in query.aggregate(entities, wanted, chosen)]


# -- the JobManager and jobs ------------------------------------------------------------------
class JobManagerMetricsHandler(MetricsHandler):
    @operation("The JobManager's metrics: TaskManagers, slots, running jobs, its memory.", list[m.Metric],
               query=(GET,))
    def get(self):
        return self.metrics({**values(CLUSTER_METRICS, self.gateway.cluster_overview()),
                             **values(PROCESS_METRICS, ProcessView(rss_bytes()))})


class JobMetricsHandler(MetricsHandler):
    @operation("A job's metrics: restarts, uptime, checkpoint counts, the last checkpoint's duration and size.",
               list[m.Metric], query=(GET,))
    def get(self, jobid):
        summary = self.gateway.request_job(jobid).summary
        return self.metrics(values(JOB_METRICS, JobView(summary, self.gateway.checkpoint_stats(jobid), time.time())))


class JobsMetricsHandler(MetricsHandler):
    @operation("Job metrics aggregated over every job, or those ``jobs=`` names.", list[m.AggregatedMetric],
               query=(GET, AGG, JOBS))
    def get(self):
        chosen = query.ids(self.get_query_argument("jobs", None))
        now = time.time()
        return self.aggregated([values(JOB_METRICS, JobView(s, self.gateway.checkpoint_stats(s.job_id), now))
                                for s in self.gateway.list_jobs() if chosen is None or s.job_id in chosen])


# -- a task and its subtasks ------------------------------------------------------------------
def subtask_metrics(v: VertexSnapshot) -> dict[int, dict[str, float]]:
    """Each subtask's metrics, by index; subtasks that have not reported yet have none."""
    return {s.index: values(TASK_METRICS, s.metrics) for s in v.subtasks if s.metrics is not None}


class VertexMetricsHandler(MetricsHandler, VertexHandlerBase):
    @operation("A task's metrics, each subtask's as ``<subtask>.<metric>`` (Flink's vertex scope).",
               list[m.Metric], query=(GET,))
    def get(self, jobid, vertexid):
        per_subtask = subtask_metrics(self.vertex(jobid, vertexid))
        return self.metrics({f"{i}.{name}": value for i, found in per_subtask.items() for name, value in found.items()})


class SubtasksMetricsHandler(MetricsHandler, VertexHandlerBase):
    @operation("A task's metrics aggregated over its subtasks, or those ``subtasks=`` selects.",
               list[m.AggregatedMetric], query=(GET, AGG, SUBTASKS))
    def get(self, jobid, vertexid):
        chosen = query.indices(self.get_query_argument("subtasks", None))
        per_subtask = subtask_metrics(self.vertex(jobid, vertexid))
        return self.aggregated([found for i, found in per_subtask.items() if chosen is None or i in chosen])


class SubtaskMetricsHandler(MetricsHandler, VertexHandlerBase):
    @operation("One subtask's metrics.", list[m.Metric], query=(GET,))
    def get(self, jobid, vertexid, subtaskindex):
        vertex = self.vertex(jobid, vertexid)
        index = subtask_index(vertex, subtaskindex)
        return self.metrics(subtask_metrics(vertex).get(index, {}))


def subtask_index(v: VertexSnapshot, raw: str) -> int:
    """A subtask index from the path: 404 when the task has no such subtask."""
    if not raw.isdigit() or int(raw) >= v.parallelism:
        raise HTTPError(404, f"task {v.id} has subtasks 0 to {v.parallelism - 1}, not {raw!r}")
    return int(raw)


# -- TaskManagers -----------------------------------------------------------------------------
def taskmanager_metrics(tm: TaskManagerSnapshot) -> dict[str, float]:
    """What a TaskManager last reported about itself (its process, its Spark JVM's ``Status.JVM.*``);
    nothing before its first report."""
    if tm.status is None:
        return {}
    return {**values(PROCESS_METRICS, ProcessView(tm.status.rss_bytes)), **tm.status.jvm}


class TaskManagerMetricsHandler(MetricsHandler):
    @operation("A TaskManager's metrics, from its latest status report (every few heartbeats).", list[m.Metric],
               query=(GET,))
    def get(self, taskmanagerid):
        return self.metrics(taskmanager_metrics(self.gateway.request_task_manager(taskmanagerid)))


class TaskManagersMetricsHandler(MetricsHandler):
    @operation("TaskManager metrics aggregated over every registered TaskManager, or those ``taskmanagers=`` names.",
               list[m.AggregatedMetric], query=(GET, AGG, TASKMANAGERS))
    def get(self):
        chosen = query.ids(self.get_query_argument("taskmanagers", None))
        return self.aggregated([taskmanager_metrics(tm) for tm in self.gateway.request_task_managers()
                                if tm.lost_reason is None and (chosen is None or tm.tm_id in chosen)])
