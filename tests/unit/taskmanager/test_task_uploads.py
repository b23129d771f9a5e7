"""A task that ends while its last snapshot is still being written reports FINISHED only after the
acknowledgement: an upload that outlived its job would leave files that no sweep deletes. An upload its
fence refuses (a TaskManager unheard for longer than the heartbeat timeout) writes nothing and declines."""
import asyncio
import threading
from types import SimpleNamespace

from runtime.checkpoint.task_state import WrittenSnapshot
from runtime.ids import ExecutionAttemptId, JobId
from runtime.data_messages import CheckpointBarrier
from runtime.messages import AcknowledgeCheckpoint, DeclineCheckpoint, TaskStateChanged
from runtime.states import ExecutionState
from runtime.taskmanager import snapshot_uploads
from runtime.taskmanager import task as task_module
from runtime.taskmanager.task import Task
from tests.unit.taskmanager.task_services import TestingTaskServices


def test_a_task_reports_finished_only_after_its_pending_snapshot_is_acknowledged(monkeypatch):
    release = threading.Event()

    def slow_write(target, name, meta, tables, base):
        assert release.wait(10), "the test never let the write finish"
        return WrittenSnapshot(f"{target}/{name}", 1, 1, {})
    monkeypatch.setattr(task_module, "take_snapshot", lambda *args: ({}, {}))
    monkeypatch.setattr(snapshot_uploads, "write_snapshot", slow_write)
    tdd = SimpleNamespace(job_id=JobId("j"), attempt_id=ExecutionAttemptId("a"), vertex_id="v", subtask_index=0,
                          task_name="t", operators=[SimpleNamespace(kind="map")], incremental_checkpoints=False)
    services = TestingTaskServices()
    task = Task(tdd, services)
    task.chain = SimpleNamespace(stateful=[], late_records=0, state_rows=0)

    async def prepare():
        pass

    async def scenario():
        inputs_ended = asyncio.Event()

        async def inputs_end_right_after_a_barrier():
            await task.checkpoint(CheckpointBarrier(5, 0.0, target="file:///nowhere/chk-5"))
            inputs_ended.set()
        task._prepare, task._finish_outputs = prepare, prepare
        task.input_loop = SimpleNamespace(run=inputs_end_right_after_a_barrier, gate=SimpleNamespace(close=prepare))
        run = asyncio.get_running_loop().create_task(task.run())
        await inputs_ended.wait()
        for _ in range(5):  # the steps to FINISHED suspend nowhere else: a task that did not wait would be done
            await asyncio.sleep(0)
        assert not any(getattr(m, "state", None) == ExecutionState.FINISHED for m in services.sent)
        release.set()
        await asyncio.wait_for(run, 10)
    asyncio.run(scenario())
    kinds = [(type(m).__name__, getattr(m, "state", None)) for m in services.sent
             if isinstance(m, (AcknowledgeCheckpoint, TaskStateChanged))]
    assert kinds[-2:] == [("AcknowledgeCheckpoint", None), ("TaskStateChanged", ExecutionState.FINISHED)]


def test_an_upload_of_a_taskmanager_unheard_past_the_heartbeat_timeout_writes_nothing_and_declines(monkeypatch, tmp_path):
    monkeypatch.setattr(task_module, "take_snapshot", lambda *args: ({"subtask": 0}, {}))
    tdd = SimpleNamespace(job_id=JobId("j"), attempt_id=ExecutionAttemptId("a"), vertex_id="v", subtask_index=0,
                          task_name="t", operators=[SimpleNamespace(kind="map")], incremental_checkpoints=False)
    services = TestingTaskServices()
    services.heartbeats.timeout_s = 3.0
    services.heartbeats.silence = lambda: 9.0  # woken from a pause: the JobManager may have superseded the attempt
    task = Task(tdd, services)
    task.chain = SimpleNamespace(stateful=[], late_records=0, state_rows=0)

    async def scenario():
        await task.checkpoint(CheckpointBarrier(5, 0.0, target=f"file://{tmp_path}/chk-5"))
        await task.uploads.all_written()
    asyncio.run(scenario())
    (decline,) = [m for m in services.sent if isinstance(m, DeclineCheckpoint)]
    assert "fenced write refused" in decline.reason and "heartbeat" in decline.reason
    assert not (tmp_path / "chk-5").exists()
