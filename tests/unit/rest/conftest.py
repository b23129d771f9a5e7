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
from runtime.jobmanager.gateways import OperationRefused, UnknownCheckpoint, UnknownJob, UnknownTaskManager
from runtime.snapshots import (CheckpointConfigSnapshot, CheckpointDetailsSnapshot, CheckpointRecord,
                               CheckpointStatsSnapshot, ClusterOverview, JobSnapshot, JobSummary,
                               OperationState, OperationStatus, PlanNode, SlotSnapshot,
                               SubtaskCheckpointStats, SubtaskSnapshot, TaskManagerSnapshot,
                               VertexSnapshot)
from runtime.messages import TaskManagerStatus, TaskMetrics
from runtime.spark_stages import SparkStageRecord, SparkWork
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


#: Subtask 2's recent Spark stages: two plans, the exchange one taking 80 % of their time
SPARK_STAGES = (SparkStageRecord(10, 0, [5], "WholeStageCodegen (1) > Exchange", "COMPLETE", 1_700_000_000_000, 300, 2,
                                 shuffle_write_bytes=4096),
                SparkStageRecord(11, 0, [5], "Exchange > WholeStageCodegen (2)", "COMPLETE", 1_700_000_000_300, 100, 2),
                SparkStageRecord(12, 0, [6], "WholeStageCodegen (1) > Exchange", "COMPLETE", 1_700_000_001_000, 500, 2,
                                 disk_spilled_bytes=1 << 20))


def spark_subtask(i: int, now: float) -> SubtaskSnapshot:
    report = metrics(100 * (i + 1), [0.05, 0.3, 0.9][i], 1_700_000_000.5 + i)
    stages = SPARK_STAGES if i == 2 else ()
    if stages:
        report.accumulated_busy_ms, report.phase_s = 1000, {"spark_action": 0.9, "exchange_send": 0.05}
        report.spark = SparkWork([], 3, 900, "WholeStageCodegen (1) > Exchange", 0.889, 0.9)
    return SubtaskSnapshot(i, ExecutionState.RUNNING, 0, f"att{i}", "tm-1", "127.0.0.1", i,
                           {ExecutionState.DEPLOYING: now - 5, ExecutionState.RUNNING: now - 4}, report, None, stages)


def job_snapshot() -> JobSnapshot:
    now = time.time()
    subtasks = tuple(spark_subtask(i, now) for i in range(3))
    counts = {s: (3 if s == ExecutionState.RUNNING else 0) for s in ExecutionState}
    summary = JobSummary(JOB, "fake", JobStatus.RUNNING, now - 10, None, now - 4, 3, 0, counts, 12.5, False)
    vertex = VertexSnapshot(VERTEX, "Source -> Sink", 3, 128, ExecutionState.RUNNING, ("Source", "Sink"), subtasks)
    return JobSnapshot(summary, {JobStatus.RUNNING: now - 4}, (vertex,),
                       (PlanNode(VERTEX, "Source -> Sink", 3, (("s", "Source", "source"),), ()),), 128, True)


CHECKPOINT = 7
TRIGGERED = 1_700_000_000.0


def checkpoint_details() -> CheckpointDetailsSnapshot:
    """Checkpoint 7 of the fake job, in progress: subtasks 0 and 1 acknowledged, subtask 2 not yet."""
    subtasks = (SubtaskCheckpointStats(VERTEX, 0, TRIGGERED + 0.5, 1000, 400, 3, 120, 10, 2),
                SubtaskCheckpointStats(VERTEX, 1, TRIGGERED + 0.8, 3000, 600, 5, 300, None, 4),
                SubtaskCheckpointStats(VERTEX, 2))
    record = CheckpointRecord(CHECKPOINT, "IN_PROGRESS", False, TRIGGERED, TRIGGERED + 0.8, 0.9, 4000, 3, 2,
                              checkpointed_size=1000)
    return CheckpointDetailsSnapshot(record, subtasks)


def task_managers() -> list[TaskManagerSnapshot]:
    status = TaskManagerStatus("tm-1", 2_000_000, "2g")
    slot = SlotSnapshot(0, None, None, "", ())
    return [TaskManagerSnapshot("tm-1", "127.0.0.1", 1, 11, "local[2]", 1, 1, (slot,), 1.0, 0.1, status=status),
            TaskManagerSnapshot("tm-2", "127.0.0.1", 2, 12, "local[2]", 1, 1, (slot,), 1.0, 0.1,
                                status=TaskManagerStatus("tm-2", 4_000_000, "2g")),
            TaskManagerSnapshot("tm-3", "127.0.0.1", None, 13, "local[2]", 0, 0, (), 1.0, None, "lost", 2.0)]


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

    def checkpoint_details(self, job_id, checkpoint_id):
        self._job(job_id)
        if checkpoint_id != CHECKPOINT:
            raise UnknownCheckpoint(job_id, checkpoint_id)
        return checkpoint_details()

    def request_task_managers(self):
        return task_managers()

    def request_task_manager(self, tm_id):
        found = [tm for tm in task_managers() if tm.tm_id == tm_id]
        if not found:
            raise UnknownTaskManager(tm_id)
        return found[0]

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
