"""The REST routes: one table, from which tornado's URL patterns and the OpenAPI description are made.

Paths are written the way Flink's REST reference writes them (``/jobs/:jobid``); every one is also
served under ``/v1`` (runtime.jobmanager.rest.gate strips the prefix). Order matters where a literal
segment could also be a parameter: ``/jobs/overview`` before ``/jobs/:jobid``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from runtime.jobmanager.rest import (checkpoint_details, cluster, data, jobs, logs, metrics, operations, savepoints,
                                     spark, spark_ui, users, vertices)
from runtime.jobmanager.rest.base import Operation
from runtime.jobmanager.rest.streams import EventsSocket

METHODS = ("get", "post", "put", "patch", "delete")
_PARAM = re.compile(r":(\w+)")
_REST = re.compile(r"\*(\w+)")  # the rest of the path, slashes included (a proxied site's pages)


@dataclass(frozen=True)
class Route:
    path: str
    handler: type
    websocket: bool = False

    @property
    def pattern(self) -> str:
        """Tornado's URL pattern: each ``:name`` becomes a named group of one path segment."""
        return _REST.sub(r"(?P<\1>.*)", _PARAM.sub(r"(?P<\1>[^/]+)", self.path)) + "$"

    @property
    def openapi_path(self) -> str:
        return _REST.sub(r"{\1}", _PARAM.sub(r"{\1}", self.path))

    @property
    def params(self) -> list[str]:
        return _PARAM.findall(self.path) + _REST.findall(self.path)

    def operations(self) -> dict[str, Operation]:
        return {method: getattr(self.handler, method).operation for method in METHODS
                if hasattr(getattr(self.handler, method, None), "operation")}


JOB = "/jobs/:jobid"
VERTEX = JOB + "/vertices/:vertexid"

ROUTES: tuple[Route, ...] = (
    Route("/healthz", cluster.HealthHandler),
    Route("/overview", cluster.OverviewHandler),
    Route("/jobmanagers", cluster.JobManagersHandler),
    Route("/config", cluster.ConfigHandler),
    Route("/jobmanager/config", cluster.JobManagerConfigHandler),
    Route("/jobmanager/metrics", metrics.JobManagerMetricsHandler),
    Route("/jobmanager/logs", logs.JobManagerLogsHandler),
    Route("/jobmanager/logs/:logname", logs.JobManagerLogFileHandler),
    Route("/jobmanager/log", logs.JobManagerLogHandler),
    Route("/jobmanager/stdout", logs.JobManagerStdoutHandler),
    Route("/jobmanager/kill", cluster.KillJobManagerHandler),
    Route("/jobmanager/hold-election", cluster.HoldElectionHandler),
    Route("/taskmanagers", cluster.TaskManagersHandler),
    Route("/taskmanagers/metrics", metrics.TaskManagersMetricsHandler),
    Route("/taskmanagers/:taskmanagerid", cluster.TaskManagerHandler),
    Route("/taskmanagers/:taskmanagerid/kill", cluster.KillTaskManagerHandler),
    Route("/login-links", cluster.LoginLinksHandler),
    Route("/taskmanagers/:taskmanagerid/metrics", metrics.TaskManagerMetricsHandler),
    Route("/taskmanagers/:taskmanagerid/spark-ui/*path", spark_ui.SparkUiProxyHandler),
    Route("/applications/overview", vertices.ApplicationsOverviewHandler),
    Route("/jobs", jobs.JobsHandler),
    Route("/jobs/overview", jobs.JobsOverviewHandler),
    Route("/jobs/metrics", metrics.JobsMetricsHandler),
    Route(JOB, jobs.JobHandler),
    Route(JOB + "/status", jobs.JobStatusHandler),
    Route(JOB + "/exceptions", jobs.JobExceptionsHandler),
    Route(JOB + "/plan", jobs.JobPlanHandler),
    Route(JOB + "/metrics", metrics.JobMetricsHandler),
    Route(JOB + "/config", vertices.JobConfigHandler),
    Route(VERTEX, jobs.VertexHandler),
    Route(VERTEX + "/backpressure", jobs.BackPressureHandler),
    Route(VERTEX + "/watermarks", jobs.WatermarksHandler),
    Route(VERTEX + "/metrics", metrics.VertexMetricsHandler),
    Route(VERTEX + "/subtasks/metrics", metrics.SubtasksMetricsHandler),
    Route(VERTEX + "/subtasks/accumulators", vertices.SubtasksAccumulatorsHandler),
    Route(VERTEX + "/subtasks/:subtaskindex", vertices.SubtaskHandler),
    Route(VERTEX + "/subtasks/:subtaskindex/metrics", metrics.SubtaskMetricsHandler),
    Route(VERTEX + "/subtasks/:subtaskindex/spark", spark.SubtaskSparkHandler),
    Route(VERTEX + "/subtasktimes", vertices.SubtaskTimesHandler),
    Route(VERTEX + "/taskmanagers", vertices.VertexTaskManagersHandler),
    Route(VERTEX + "/accumulators", vertices.VertexAccumulatorsHandler),
    Route(JOB + "/checkpoints", operations.JobCheckpointsHandler),
    Route(JOB + "/checkpoints/config", operations.JobCheckpointConfigHandler),
    Route(JOB + "/checkpoints/details/:checkpointid", checkpoint_details.CheckpointDetailsHandler),
    Route(JOB + "/checkpoints/details/:checkpointid/subtasks/:vertexid", checkpoint_details.CheckpointSubtaskDetailsHandler),
    Route(JOB + "/checkpoints/:triggerid", operations.CheckpointStatusHandler),
    Route(JOB + "/savepoints", operations.SavepointTriggerHandler),
    Route(JOB + "/savepoints/:triggerid", operations.SavepointStatusHandler),
    Route(JOB + "/stop", operations.StopHandler),
    Route("/savepoints", savepoints.SavepointsHandler),
    Route("/savepoints/details", savepoints.SavepointDetailsHandler),
    Route("/savepoints/compatibility", savepoints.CompatibilityHandler),
    Route("/savepoints/resume", savepoints.ResumeHandler),
    Route("/savepoint-disposal", operations.SavepointDisposalHandler),
    Route("/savepoint-disposal/:triggerid", operations.SavepointDisposalStatusHandler),
    Route(JOB + "/results", data.JobResultsHandler),
    Route(JOB + "/sources", data.PushSourcesHandler),
    Route(JOB + "/sources/:source/rows", data.PushRowsHandler),
    Route(JOB + "/sources/:source/close", data.CloseSourceHandler),
    Route("/users", users.UsersHandler),
    Route("/users/overview", users.ClassOverviewHandler),
    Route("/users/:name", users.UserHandler),
    Route("/events", EventsSocket, websocket=True),
)

#: the only path answered without the cluster token
OPEN_PATHS = frozenset({"/healthz"})
