"""The REST layer in-process, in front of a fake Dispatcher: a real tornado server on 127.0.0.1 with
the gate, the route table and the handlers, but no JobManager roles behind them."""
from __future__ import annotations

import asyncio
import threading
import time
import urllib.error
import urllib.request

import pytest
import tornado.httpserver
import tornado.netutil
import tornado.web

from runtime.config import Configuration
from runtime.ids import JobId, TriggerId
from runtime.jobmanager import rest
from runtime.jobmanager.gateways import OperationRefused, UnknownJob, UnknownTaskManager
from runtime.snapshots import (CheckpointConfigSnapshot, CheckpointStatsSnapshot, ClusterOverview,
                                          JobSnapshot, JobSummary, OperationState, OperationStatus, PlanNode,
                                          SubtaskSnapshot, VertexSnapshot)
from runtime.messages import TaskMetrics
from runtime.states import ExecutionState, JobStatus
from runtime.users import CLUSTER_ADMIN, Caller

TOKEN = "t" * 43
STUDENT_TOKEN = "s" * 43  # a user's: sees their own jobs only (the fake's one job is the admin's)
JOB = JobId("a" * 32)
VERTEX = "b" * 32
LIMIT = 4096


def metrics(records_in: int, backpressure: float, watermark: float | None) -> TaskMetrics:
    return TaskMetrics(JOB, "att", records_in=records_in, records_out=records_in // 2, bytes_in=10 * records_in,
                       bytes_out=5 * records_in, backpressure_ratio=backpressure, watermark=watermark)


def job_snapshot() -> JobSnapshot:
    now = time.time()
    subtasks = tuple(SubtaskSnapshot(i, ExecutionState.RUNNING, 0, f"att{i}", "tm-1", "127.0.0.1", i,
                                     {ExecutionState.DEPLOYING: now - 5, ExecutionState.RUNNING: now - 4},
                                     metrics(100 * (i + 1), [0.05, 0.3, 0.9][i], 1_700_000_000.5 + i), None)
                     for i in range(3))
    counts = {s: (3 if s == ExecutionState.RUNNING else 0) for s in ExecutionState}
    summary = JobSummary(JOB, "fake", JobStatus.RUNNING, now - 10, None, now - 4, 3, 0, counts, 12.5, False)
    vertex = VertexSnapshot(VERTEX, "Source -> Sink", 3, 128, ExecutionState.RUNNING, ("Source", "Sink"), subtasks)
    return JobSnapshot(summary, {JobStatus.RUNNING: now - 4}, (vertex,),
                       (PlanNode(VERTEX, "Source -> Sink", 3, (("s", "Source", "source"),), ()),), 128, True)


class FakeDispatcher:
    """Answers for one RUNNING job; anything else is unknown."""

    def __init__(self):
        self.submitted: list[dict] = []
        self.cancelled: list[str] = []
        self.checkpoints_full: list[bool] = []

    def _job(self, job_id):
        if job_id != JOB:
            raise UnknownJob(job_id)
        return job_snapshot()

    def cluster_overview(self):
        return ClusterOverview(1, 4, 1, 1, 0, 0, 0)

    def list_jobs(self):
        return [job_snapshot().summary]

    def request_job(self, job_id):
        return self._job(job_id)

    def job_owner(self, job_id):
        return self._job(job_id).summary.user

    def job_status(self, job_id):
        return self._job(job_id).summary.state

    def job_exceptions(self, job_id):
        self._job(job_id)
        return []

    def checkpoint_stats(self, job_id):
        self._job(job_id)
        return CheckpointStatsSnapshot(0, 0, 0, 0, 0, ())

    def checkpoint_config(self, job_id):
        self._job(job_id)
        return CheckpointConfigSnapshot(1.0, 600.0, 0.0, 1, 0, "file:///cp", "file:///sp")

    def request_task_managers(self):
        return []

    def request_task_manager(self, tm_id):
        raise UnknownTaskManager(tm_id)

    def cancel_job(self, job_id):
        self._job(job_id)
        self.cancelled.append(job_id)

    def trigger_savepoint(self, job_id, target, cancel_job):
        self._job(job_id)
        return TriggerId("c" * 32)

    def stop_with_savepoint(self, job_id, target, drain):
        self._job(job_id)
        raise OperationRefused(f"job {job_id} is FINISHED")

    def savepoint_status(self, job_id, trigger_id):
        self._job(job_id)
        return OperationStatus(OperationState.COMPLETED, "file:///sp/x") if trigger_id == "c" * 32 else None

    def trigger_checkpoint(self, job_id, full=False):
        self._job(job_id)
        self.checkpoints_full.append(full)
        return TriggerId("d" * 32)

    def checkpoint_status(self, job_id, trigger_id):
        self._job(job_id)
        return OperationStatus(OperationState.COMPLETED, 7) if trigger_id == "d" * 32 else None

    def dispose_savepoint(self, path):
        return TriggerId("e" * 32)

    def disposal_status(self, trigger_id):
        return OperationStatus(OperationState.COMPLETED, failure="no _metadata") if trigger_id == "e" * 32 else None

    def job_results(self, job_id, offset, limit):
        raise UnknownJob(job_id)

    def push_sources(self, job_id):
        raise UnknownJob(job_id)

    def push_rows(self, job_id, source, rows):
        raise UnknownJob(job_id)

    def close_push_source(self, job_id, source):
        raise UnknownJob(job_id)

    def subscribe_events(self):
        raise NotImplementedError

    def submit(self, payload):
        self.submitted.append(payload)
        return JOB


class Tokens:
    """The cluster token is the admin's; STUDENT_TOKEN is user 'student''s."""

    def identify(self, token):
        return {TOKEN: Caller(CLUSTER_ADMIN, True), STUDENT_TOKEN: Caller("student", False)}.get(token)


class Leader:
    is_leader = True

    def leader_address(self):
        return "http://127.0.0.1:1"

    def not_leader_message(self):
        return "standby"

    def leadership_view(self):
        return {"leader": {"url": "http://127.0.0.1:1", "session-id": "s"}, "jobmanagers": [], "role": "leader"}

    def hold_election(self, seconds):
        raise AssertionError("fault injection is off on this server: the election is never held")


class Server:
    admin_token = TOKEN

    def __init__(self):
        self.dispatcher = FakeDispatcher()
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        asyncio.set_event_loop(self._loop)
        conf = Configuration({"rest.server.max-content-length": LIMIT})
        app = tornado.web.Application(rest.rules(rest.RestContext(self.dispatcher, Leader(), conf)))
        server = tornado.httpserver.HTTPServer(rest.gate(app, Tokens(), LIMIT), max_body_size=1 << 62)
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        server.add_sockets(sockets)
        self.url = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
        self._ready.set()
        self._loop.run_forever()

    def __enter__(self):
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc):
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def call(self, method: str, path: str, body: bytes | None = None, token: str | None = TOKEN,
             headers: dict | None = None) -> tuple[int, dict, bytes]:
        req = urllib.request.Request(self.url + path, data=body, method=method)
        if token is not None:
            req.add_header("Authorization", f"Bearer {token}")
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read()


@pytest.fixture(scope="module")
def server():
    with Server() as s:
        yield s
