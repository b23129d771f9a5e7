"""A task's life, from deployment to its last state, against a TaskServices double: no process, socket or
Spark session. Deploy and run to FINISHED; checkpoints that stage a collect sink's rows until the
checkpoint completes (or keep them past an aborted one); restore from a checkpoint; barriers aligned
across two inputs; stop-with-savepoint; cancel; failures that name their cause."""
from __future__ import annotations

import asyncio
import time
from typing import Any

import pyarrow as pa
import pytest

from runtime.config import Configuration
from runtime.connectors.base import SourceReader, python_connector_params
from runtime.connectors.collect import collect_params
from runtime.connectors.collection import collection_params
from runtime.ids import AllocationId, ExecutionAttemptId, JobId, JobVertexId, TaskManagerId
from runtime.jobgraph import OperatorSpec
from runtime.data_messages import CheckpointBarrier, EndOfPartition
from runtime.messages import (AcknowledgeCheckpoint, InputGateDescriptor, OutputDescriptor, ProducerLocation,
                              TaskDeploymentDescriptor, TaskStateChanged, TriggerCheckpoint)
from runtime.states import ExecutionState as S
from runtime.taskmanager.task import Task
from tests.unit.taskmanager.task_services import TestingTaskServices

JOB = JobId("job-1")
LET_OUT: dict[str, int] = {}  # feed name -> how many of its rows a ScriptedSource may read by now
QUICK = Configuration({"taskmanager.bundle.target-time": "10 ms"})  # an idle source looks again every 10 ms


class ScriptedSource(SourceReader):
    """Reads ``rows`` in order as far as the test lets it (LET_OUT); finishes at their end only if ``bounded``."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.position = 0

    def next_bundle(self, max_rows: int):
        params = self.ctx.params
        if params.get("fail"):
            raise RuntimeError(params["fail"])
        upto = min(LET_OUT.get(params["feed"], 0), len(params["rows"]), self.position + max_rows)
        piece, self.position = params["rows"][self.position:upto], max(self.position, upto)
        finished = bool(params.get("bounded")) and self.position >= len(params["rows"])
        return (pa.table({"n": piece}) if piece else None), len(piece), finished

    def snapshot(self) -> dict:
        return {"position": self.position}

    def restore(self, states: list[dict]) -> None:
        self.position = max(s["position"] for s in states)


def scripted(feed: str, rows: list[int], **options) -> OperatorSpec:
    return OperatorSpec("src", "Scripted", "source", params=python_connector_params(
        ScriptedSource, SourceReader, feed=feed, rows=rows, **options))


def collect() -> OperatorSpec:
    return OperatorSpec("snk", "Collect", "sink", params=collect_params())


def deployment(operators: list[OperatorSpec], attempt: str = "a-1", **fields: Any) -> TaskDeploymentDescriptor:
    return TaskDeploymentDescriptor(JOB, "job", JobVertexId("v"), "task", ExecutionAttemptId(attempt), 0, 0, 1, 128,
                                    AllocationId("slot"), operators, **fields)


def trigger(task: Task, checkpoint_id: int, directory, **options) -> None:
    task.trigger_checkpoint(TriggerCheckpoint(JOB, task.attempt_id, checkpoint_id, time.time(),
                                              target=f"file://{directory}/chk-{checkpoint_id}", **options))


async def until(condition, timeout: float = 3.0):
    """``condition()``'s value once it holds: it is re-read at every turn of the loop, the test's steps being
    the task's own (nothing else runs in these tests)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, "the task never got there"
        await asyncio.sleep(0.002)
    return value


def acknowledged(services: TestingTaskServices, checkpoint_id: int):
    return lambda: next((m for m in services.of_type(AcknowledgeCheckpoint) if m.checkpoint_id == checkpoint_id), None)


def n(*values: int) -> list[dict]:
    return [{"n": v} for v in values]


def test_a_deployed_source_task_runs_to_finished_and_publishes_every_row():
    services = TestingTaskServices(QUICK)
    rows = [{"n": i} for i in range(10)]
    task = Task(deployment([OperatorSpec("src", "Rows", "source", params=collection_params(rows, bundle_rows=3)),
                            collect()]), services)
    asyncio.run(task.run())
    assert services.states() == [S.INITIALIZING, S.RUNNING, S.FINISHED]
    assert services.collected() == rows
    assert task.metrics.bundles == 4 and task.metrics.records_out == 10


async def run_to_a_completed_checkpoint(tmp_path, services: TestingTaskServices) -> tuple[Task, asyncio.Task]:
    """A checkpointing source task that read 0..2, checkpoint 1 aborted after 0..1, checkpoint 2 completed."""
    LET_OUT["life"] = 2
    task = Task(deployment([scripted("life", list(range(6)), bounded=True), collect()], checkpointing=True), services)
    running = asyncio.get_running_loop().create_task(task.run())
    await until(lambda: task.metrics.records_out == 2)
    trigger(task, 1, tmp_path)
    await until(acknowledged(services, 1))
    task.notify_checkpoint_aborted(1)
    LET_OUT["life"] = 3
    await until(lambda: task.metrics.records_out == 3)
    trigger(task, 2, tmp_path)
    await until(acknowledged(services, 2))
    assert services.collected() == [], "nothing leaves the sink before its checkpoint completes"
    task.notify_checkpoint_complete(2)
    return task, running


def test_a_sink_publishes_what_it_staged_only_when_a_checkpoint_completes(tmp_path):
    async def scenario():
        services = TestingTaskServices(QUICK)
        task, running = await run_to_a_completed_checkpoint(tmp_path, services)
        # the aborted checkpoint's rows stay staged and go out with the next completed one
        assert services.collected(1) == n(0, 1) and services.collected(2) == n(2)
        LET_OUT["life"] = 6
        await asyncio.wait_for(running, 3)
        assert services.collected(None) == n(3, 4, 5)  # end of input: the rest goes out
        assert services.states()[-1] == S.FINISHED
    asyncio.run(scenario())


def test_a_task_restored_from_a_checkpoint_resumes_its_source_and_resends_what_its_sink_staged(tmp_path):
    async def scenario():
        first = TestingTaskServices(QUICK)
        task, running = await run_to_a_completed_checkpoint(tmp_path, first)
        task.cancel()
        await asyncio.wait_for(running, 3)
        pointer = acknowledged(first, 2)().state_pointer
        LET_OUT["life"] = 6
        services = TestingTaskServices(QUICK)
        again = Task(deployment([scripted("life", list(range(6)), bounded=True), collect()], attempt="a-2",
                                checkpointing=True, restore=[pointer], restore_checkpoint_id=2), services)
        await again.run()
        assert services.states() == [S.INITIALIZING, S.RUNNING, S.FINISHED]
        # staged for checkpoints 1 and 2 (the JobManager keeps one delivery of each), then rows 3.. only
        assert services.collected(1) == n(0, 1) and services.collected(2) == n(2)
        assert services.collected(None) == n(3, 4, 5)
    asyncio.run(scenario())


def test_barriers_align_across_two_inputs_before_the_snapshot(tmp_path):
    producers = [ProducerLocation(ExecutionAttemptId(f"p-{i}"), i, TaskManagerId("tm"), "127.0.0.1", 1) for i in (0, 1)]
    barrier = CheckpointBarrier(1, time.time(), target=f"file://{tmp_path}/chk-1")

    async def scenario():
        services = TestingTaskServices(QUICK)
        task = Task(deployment([collect()], inputs=[InputGateDescriptor(JobVertexId("up"), "forward", producers)],
                               checkpointing=True), services)
        running = asyncio.get_running_loop().create_task(task.run())
        feed = (await until(lambda: services.feeds))[0]
        for channel, item in [(0, pa.table({"n": [1]})), (0, barrier), (0, pa.table({"n": [3]})), (1, pa.table({"n": [2]}))]:
            await feed.send(channel, item)
        await until(lambda: task.metrics.records_in == 2)
        assert not services.of_type(AcknowledgeCheckpoint), "snapshot taken before the second input's barrier"
        await feed.send(1, barrier)
        await until(acknowledged(services, 1))
        await until(lambda: task.metrics.records_in == 3)  # the held-back channel goes on after the snapshot
        task.notify_checkpoint_complete(1)
        assert services.collected(1) == n(1, 2)
        for channel in (0, 1):
            await feed.send(channel, EndOfPartition())
        await asyncio.wait_for(running, 3)
        assert services.collected(None) == n(3) and services.states()[-1] == S.FINISHED
    asyncio.run(scenario())


@pytest.mark.parametrize("completed", [True, False], ids=["savepoint-completed", "savepoint-aborted"])
def test_a_task_stopped_with_a_savepoint_ends_with_that_savepoint(tmp_path, completed):
    async def scenario():
        services = TestingTaskServices(QUICK)
        LET_OUT["stop"] = 2
        task = Task(deployment([scripted("stop", [0, 1, 2]), collect()], checkpointing=True), services)
        running = asyncio.get_running_loop().create_task(task.run())
        await until(lambda: task.metrics.records_out == 2)
        trigger(task, 7, tmp_path, is_savepoint=True, stop=True)
        await until(acknowledged(services, 7))
        assert not running.done(), "a stopped task waits for its savepoint"
        (task.notify_checkpoint_complete if completed else task.notify_checkpoint_aborted)(7)
        await asyncio.wait_for(running, 3)
        return services
    services = asyncio.run(scenario())
    if completed:
        assert services.states()[-1] == S.FINISHED and services.collected(7) == n(0, 1)
    else:
        assert services.states()[-1] == S.FAILED
        assert "stop-with-savepoint 7 did not complete" in services.of_type(TaskStateChanged)[-1].error


def test_a_cancelled_task_reports_canceled_and_unregisters_its_result_partitions():
    async def scenario():
        services = TestingTaskServices(QUICK)
        LET_OUT["cancel"] = 1
        out = OutputDescriptor(JobVertexId("down"), "forward", [], 1)
        task = Task(deployment([scripted("cancel", [0, 1])], outputs=[out]), services)
        running = asyncio.get_running_loop().create_task(task.run())
        await until(lambda: task.metrics.records_out == 1)
        assert list(services.partitions) == [task.attempt_id]
        task.cancel()
        await asyncio.wait_for(running, 3)
        assert services.states() == [S.INITIALIZING, S.RUNNING, S.CANCELED]
        assert not services.partitions and len(services.registered) == 1
    asyncio.run(scenario())


@pytest.mark.parametrize("case, expected", [
    ("reader raises", "RuntimeError: disk on fire"),
    ("spark did not start", "Java gateway process exited before sending its port number"),
    ("unknown connector", "source 'Nowhere': unknown connector 'nowhere'"),
])
def test_a_failing_task_reports_failed_naming_the_cause(case, expected):
    services = TestingTaskServices(QUICK)
    source = scripted("fail", [0], fail="disk on fire")
    if case == "spark did not start":
        services.spark_failure = RuntimeError("Java gateway process exited before sending its port number")
    elif case == "unknown connector":
        source = OperatorSpec("src", "Nowhere", "source", params={"connector": "nowhere"})
    out = OutputDescriptor(JobVertexId("down"), "forward", [], 1)
    task = Task(deployment([source], outputs=[out]), services)
    asyncio.run(task.run())
    assert services.states()[-1] == S.FAILED
    assert expected in services.of_type(TaskStateChanged)[-1].error
    assert not services.partitions, "a failed task leaves no partition served"
