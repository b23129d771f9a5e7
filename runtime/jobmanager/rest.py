"""The Dispatcher's REST API and event stream, with Flink's paths and field names.

Every handler requires the cluster token (``Authorization: Bearer`` or the dashboard's cookie) except
``/healthz``. Errors are JSON ``{"errors": [message]}`` with a 4xx/5xx status; nothing a client sends
can take the process down.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import signal

import pyarrow as pa
import tornado.web
import tornado.websocket

from runtime.arrow_ipc import table_from_b64
from runtime.codec import to_plain
from runtime.config import ConfigError
from runtime.connectors.push import PushError
from runtime.jobmanager.dispatcher import SubmissionError, UnknownJob
from runtime.jobmanager.push import SourceRefused, UnknownSource
from runtime.security import COOKIE_NAME, bearer, tokens_match

log = logging.getLogger(__name__)

RESULT_PAGE_ROWS = 10_000


class HTTPError(tornado.web.HTTPError):
    """An error whose message the client sees."""

    def __init__(self, status: int, message: str, **fields):
        super().__init__(status, reason=None)
        self.message = message
        self.fields = fields  # extra members of the error body, e.g. ``leader`` on a standby's refusal


def presented_token(handler: tornado.web.RequestHandler) -> str | None:
    return bearer(handler.request.headers.get("Authorization")) or handler.get_cookie(COOKIE_NAME)


class ApiHandler(tornado.web.RequestHandler):
    """Base for REST handlers: token check, JSON in and out, readable errors."""

    def initialize(self, jm) -> None:
        self.jm = jm

    @property
    def dispatcher(self):
        return self.jm.dispatcher

    def prepare(self) -> None:
        if not tokens_match(self.jm.token, presented_token(self)):
            raise HTTPError(401, "missing or invalid cluster token: send 'Authorization: Bearer <token>' "
                                 "(the token is in the cluster's token file)")
        if not self.standby_serves and not self.jm.is_leader:
            leader = self.jm.known_leader()
            raise HTTPError(503, self.jm.not_leader_message(), leader=leader.address if leader else None)

    #: whether a standby JobManager answers this route itself; every other route it refuses with 503,
    #: the error naming the leader's address (``leader`` in the body), which clients follow
    standby_serves = False

    def check_xsrf_cookie(self) -> None:
        """Cookie-authenticated writes come from the dashboard page; bearer calls need no XSRF token."""

    def json_body(self) -> dict:
        if not self.request.body:
            return {}
        try:
            data = json.loads(self.request.body)
        except (ValueError, UnicodeDecodeError) as err:
            raise HTTPError(400, f"request body is not valid JSON: {err}") from None
        if not isinstance(data, dict):
            raise HTTPError(400, "request body must be a JSON object")
        return data

    def reply(self, data, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(to_plain(data), default=str))

    def write_error(self, status_code: int, **kwargs) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        fields = {}
        if isinstance(exc, HTTPError):
            message, fields = exc.message, exc.fields
        elif isinstance(exc, tornado.web.HTTPError):
            message = exc.log_message or self._reason
        else:
            message = f"internal error: {type(exc).__name__}: {exc}" if exc else self._reason
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"errors": [message], **fields}))

    def job(self, job_id: str):
        try:
            return self.dispatcher.job(job_id)
        except UnknownJob as err:
            raise HTTPError(404, str(err)) from None


class OverviewHandler(ApiHandler):
    standby_serves = True

    def get(self):
        self.reply({**self.dispatcher.overview(), **self.jm.leadership_view()})


class JobManagersHandler(ApiHandler):
    """``GET /jobmanagers``: every live JobManager (id, address, pid, role leader/standby) and the leader."""
    standby_serves = True

    def get(self):
        self.reply(self.jm.leadership_view())


class ConfigHandler(ApiHandler):
    standby_serves = True

    def get(self):
        self.reply({"refresh-interval": 3000, "timezone-name": "UTC", "timezone-offset": 0,
                    "flink-version": self.dispatcher.overview()["flink-version"],
                    "features": {"web-submit": False, "web-cancel": True,
                                 "fault-injection": self.jm.conf.get("cluster.fault-injection.enabled")},
                    "entries": self.jm.conf.as_flink_entries()})


class JobManagerConfigHandler(ApiHandler):
    standby_serves = True

    def get(self):
        self.reply(self.jm.conf.as_flink_entries())


class JobsHandler(ApiHandler):
    def get(self):
        self.reply({"jobs": [{"id": j["jid"], "status": j["state"]} for j in self.dispatcher.jobs_overview()]})

    def post(self):
        try:
            job_id = self.dispatcher.submit(self.json_body())
        except (SubmissionError, ConfigError) as err:
            raise HTTPError(400, str(err)) from None
        self.reply({"jobid": job_id}, 202)


class JobsOverviewHandler(ApiHandler):
    def get(self):
        self.reply({"jobs": self.dispatcher.jobs_overview()})


class JobHandler(ApiHandler):
    def get(self, job_id):
        self.reply(self.job(job_id).details())

    async def patch(self, job_id):
        master = self.job(job_id)
        mode = self.get_query_argument("mode", "cancel")
        if mode != "cancel":
            raise HTTPError(400, f"unsupported mode {mode!r}: expected 'cancel'")
        asyncio.get_running_loop().create_task(master.cancel())
        self.reply({}, 202)


class JobExceptionsHandler(ApiHandler):
    def get(self, job_id):
        self.reply(self.job(job_id).exceptions_view())


class JobPlanHandler(ApiHandler):
    def get(self, job_id):
        self.reply({"plan": self.job(job_id).details()["plan"]})


class JobCheckpointsHandler(ApiHandler):
    def get(self, job_id):
        self.reply(self.job(job_id).checkpoints.stats())


class JobCheckpointConfigHandler(ApiHandler):
    def get(self, job_id):
        self.reply(self.job(job_id).checkpoints.config_view())


class SavepointTriggerHandler(ApiHandler):
    """``POST /jobs/<id>/savepoints`` (Flink: target-directory, cancel-job) and ``POST /jobs/<id>/stop``
    (Flink: targetDirectory, drain); both answer with a request id to poll."""

    def post(self, job_id, action):
        master = self.job(job_id)
        body = self.json_body()
        if master.status.value != "RUNNING":
            raise HTTPError(409, f"job {job_id} is {master.status.value}; savepoints need a RUNNING job")
        if action == "stop":
            target, stop = body.get("targetDirectory"), True
            if body.get("drain"):
                raise HTTPError(400, "stop with drain is not supported: stop keeps windows open for the resumed job")
        else:
            target, stop = body.get("target-directory"), bool(body.get("cancel-job", False))
        if target is not None and not isinstance(target, str):
            raise HTTPError(400, "the target directory must be a string path or URL")
        self.reply({"request-id": master.trigger_savepoint(target, stop)}, 202)


class SavepointStatusHandler(ApiHandler):
    def get(self, job_id, trigger_id):
        status = self.job(job_id).savepoint_status(trigger_id)
        if status is None:
            raise HTTPError(404, f"savepoint trigger {trigger_id} not found for job {job_id}")
        self.reply(status)


class JobResultsHandler(ApiHandler):
    """Rows of the job's collect sink from ``offset``; JSON records, or Arrow IPC with ``format=arrow``."""

    def get(self, job_id):
        master = self.job(job_id)
        offset = self._int_arg("offset", 0)
        limit = min(self._int_arg("limit", RESULT_PAGE_ROWS), RESULT_PAGE_ROWS * 10)
        table, next_offset = master.results.read(offset, limit)
        done = master.status.is_globally_terminal and next_offset >= master.results.total_rows
        if self.get_query_argument("format", "json") == "arrow":
            self._reply_arrow(table, next_offset, done, master)
            return
        self.reply({"offset": offset, "next": next_offset, "total": master.results.total_rows,
                    "dropped": master.results.dropped_rows, "finished": done, "job-state": master.status.value,
                    "columns": table.column_names if table is not None else
                    (master.results.schema.names if master.results.schema else []),
                    "rows": table.to_pylist() if table is not None else []})

    def _reply_arrow(self, table, next_offset, done, master):
        schema = table.schema if table is not None else (master.results.schema or pa.schema([]))
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, schema) as writer:
            if table is not None:
                writer.write_table(table)
        self.set_header("Content-Type", "application/vnd.apache.arrow.stream")
        self.set_header("X-Next-Offset", str(next_offset))
        self.set_header("X-Finished", "true" if done else "false")
        self.set_header("X-Job-State", master.status.value)
        self.finish(sink.getvalue().to_pybytes())

    def _int_arg(self, name: str, default: int) -> int:
        raw = self.get_query_argument(name, str(default))
        try:
            value = int(raw)
        except ValueError:
            raise HTTPError(400, f"query parameter '{name}' must be an integer, got {raw!r}") from None
        if value < 0:
            raise HTTPError(400, f"query parameter '{name}' must not be negative")
        return value


class PushSourcesHandler(ApiHandler):
    """``GET /jobs/<id>/sources``: the job's push sources and how many rows each has taken."""

    def get(self, job_id):
        self.reply({"sources": self.job(job_id).push_sources.view()})


class PushSourceHandler(ApiHandler):
    """Base for ``/jobs/<id>/sources/<name or operator id>/...``."""

    def push_log(self, job_id: str, source: str):
        master = self.job(job_id)
        try:
            return master, master.push_sources.find(source)
        except UnknownSource as err:
            raise HTTPError(404, f"job {job_id}: {err}") from None
        except SourceRefused as err:
            raise HTTPError(400, str(err)) from None


class PushRowsHandler(PushSourceHandler):
    """``POST /jobs/<id>/sources/<source>/rows`` with ``{"rows": [{...}, ...]}`` or ``{"arrow": "<base64
    Arrow IPC stream>"}``: the source takes every row, or none and the reply names what does not fit."""

    def post(self, job_id, source):
        master, log = self.push_log(job_id, source)
        if master.status.is_globally_terminal:
            raise HTTPError(409, f"job {job_id} is {master.status.value}: its sources take no more rows")
        rows = self._rows()
        try:
            first, end = log.append(rows)
        except PushError as err:
            raise HTTPError(400, str(err)) from None
        except SourceRefused as err:
            raise HTTPError(409, str(err)) from None
        self.reply({"source": log.source_id, "name": log.name, "rows": end - first, "offsets": [first, end],
                    "total": log.total_rows})

    def _rows(self):
        body = self.json_body()
        if ("rows" in body) == ("arrow" in body):
            raise HTTPError(400, "the body needs one of 'rows' (a list of objects) or 'arrow' "
                                 "(a base64 Arrow IPC stream)")
        if "rows" in body:
            if not isinstance(body["rows"], list):
                raise HTTPError(400, "'rows' must be a list of objects, one per row")
            return body["rows"]
        try:
            return table_from_b64(body["arrow"])
        except (TypeError, ValueError) as err:
            raise HTTPError(400, f"'arrow' is not a base64 Arrow IPC stream: {err}") from None


class CloseSourceHandler(PushSourceHandler):
    """``POST /jobs/<id>/sources/<source>/close``: no more rows; its subtasks finish once they read the rest."""

    def post(self, job_id, source):
        _, log = self.push_log(job_id, source)
        log.close()
        self.reply({"source": log.source_id, "name": log.name, "closed": True, "total": log.total_rows})


class TaskManagersHandler(ApiHandler):
    def get(self):
        self.reply({"taskmanagers": self.dispatcher.taskmanagers()})


class TaskManagerHandler(ApiHandler):
    def get(self, tm_id):
        try:
            self.reply(self.dispatcher.taskmanager(tm_id))
        except KeyError:
            raise HTTPError(404, f"TaskManager {tm_id} not found") from None


class FaultInjectionHandler(ApiHandler):
    """Kill a TaskManager or this JobManager, for teaching failover; off unless the cluster enables it."""

    def prepare(self) -> None:
        super().prepare()
        if not self.jm.conf.get("cluster.fault-injection.enabled"):
            raise HTTPError(403, "fault injection is disabled on this cluster "
                                 "(set cluster.fault-injection.enabled: true)")


class KillTaskManagerHandler(FaultInjectionHandler):
    def post(self, tm_id):
        record = self.jm.rm.task_managers.get(tm_id)
        if record is None:
            raise HTTPError(404, f"TaskManager {tm_id} not found or already lost")
        _kill(record.pid)
        self.reply({"killed": tm_id, "pid": record.pid}, 202)


class KillJobManagerHandler(FaultInjectionHandler):
    def post(self):
        self.reply({"killed": "jobmanager", "pid": os.getpid()}, 202)
        asyncio.get_running_loop().call_later(0.1, _kill, os.getpid())


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class HealthHandler(tornado.web.RequestHandler):
    """Unauthenticated liveness check: says only that the process answers."""

    def get(self):
        self.finish({"status": "ok"})


class EventsSocket(tornado.websocket.WebSocketHandler):
    """The event stream: a snapshot of the cluster first, then every event as it happens."""

    def initialize(self, jm) -> None:
        self.jm = jm
        self._pump: asyncio.Task | None = None
        self._sub = None

    def check_origin(self, origin: str) -> bool:
        return True  # the token, not the origin, is the guard

    async def get(self, *args, **kwargs):
        if not tokens_match(self.jm.token, presented_token(self) or self.get_query_argument("token", None)):
            self.set_status(401)
            self.finish(json.dumps({"errors": ["missing or invalid cluster token"]}))
            return
        await super().get(*args, **kwargs)

    def open(self):
        self._sub = self.jm.bus.subscribe()
        self.write_message(json.dumps(self.jm.snapshot(), default=str))
        self._pump = asyncio.get_running_loop().create_task(self._forward())

    async def _forward(self):
        while True:
            event = await self._sub.next()
            if event is None:
                self.close(1013, "event subscriber fell behind; reconnect")
                return
            try:
                await self.write_message(json.dumps(event, default=str))
            except tornado.websocket.WebSocketClosedError:
                return

    def on_message(self, message):
        pass  # the stream is one-way

    def on_close(self):
        if self._sub:
            self._sub.close()
        if self._pump:
            self._pump.cancel()


def routes(jm) -> list:
    """Every REST route of the JobManager; the security test walks this list."""
    from runtime.jobmanager.control import ControlSocket

    args = {"jm": jm}
    job = r"/jobs/(?P<job_id>[^/]+)"
    return [
        (r"/healthz", HealthHandler),
        (r"/overview", OverviewHandler, args),
        (r"/jobmanagers", JobManagersHandler, args),
        (r"/config", ConfigHandler, args),
        (r"/jobmanager/config", JobManagerConfigHandler, args),
        (r"/jobs", JobsHandler, args),
        (r"/jobs/overview", JobsOverviewHandler, args),
        (job, JobHandler, args),
        (job + r"/exceptions", JobExceptionsHandler, args),
        (job + r"/plan", JobPlanHandler, args),
        (job + r"/results", JobResultsHandler, args),
        (job + r"/checkpoints", JobCheckpointsHandler, args),
        (job + r"/checkpoints/config", JobCheckpointConfigHandler, args),
        (job + r"/(?P<action>savepoints|stop)", SavepointTriggerHandler, args),
        (job + r"/savepoints/(?P<trigger_id>[^/]+)", SavepointStatusHandler, args),
        (job + r"/sources", PushSourcesHandler, args),
        (job + r"/sources/(?P<source>[^/]+)/rows", PushRowsHandler, args),
        (job + r"/sources/(?P<source>[^/]+)/close", CloseSourceHandler, args),
        (r"/taskmanagers", TaskManagersHandler, args),
        (r"/taskmanagers/(?P<tm_id>[^/]+)", TaskManagerHandler, args),
        (r"/taskmanagers/(?P<tm_id>[^/]+)/kill", KillTaskManagerHandler, args),
        (r"/jobmanager/kill", KillJobManagerHandler, args),
        (r"/events", EventsSocket, args),
        (r"/control", ControlSocket, args),
    ]
