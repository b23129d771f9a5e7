"""The JobMaster and its checkpoint coordinator executing their state machines' actions, against
testing gateways instead of processes: what each sends where, and what the job's event stream says."""
import asyncio

from runtime.config import Configuration
from runtime.gateways import TaskManagerGone
from runtime.ids import AllocationId, JobId, TaskManagerId
from runtime.jobgraph import EdgeSpec, JobGraph, OperatorSpec
from runtime.jobmanager.event_bus import EventBus
from runtime.jobmanager.gateways import AllocatedSlot
from runtime.jobmanager.job_master import JobMaster
from runtime.messages import (AcknowledgeCheckpoint, DeclineCheckpoint, NotifyCheckpointAborted,
                              NotifyCheckpointComplete, TaskStateChanged, TriggerCheckpoint)
from runtime.states import ExecutionState as E
from runtime.states import JobStatus as J


class TestingTaskExecutor:
    """Records what a JobMaster sends one TaskManager; ``gone`` makes it behave like a lost one."""
    __test__ = False

    def __init__(self, tm_id):
        self.tm_id, self.sent, self.gone = TaskManagerId(tm_id), [], False

    def _record(self, what, message):
        if self.gone:
            raise TaskManagerGone(f"TaskManager {self.tm_id} is gone")
        self.sent.append((what, message))

    def submit_task(self, descriptor):
        self._record("submit", descriptor)

    def cancel_task(self, attempt_id):
        self._record("cancel", attempt_id)

    def trigger_checkpoint(self, message):
        self._record("trigger", message)

    def confirm_checkpoint(self, message):
        self._record("confirm", message)

    def abort_checkpoint(self, message):
        self._record("abort", message)


class TestingResourceManager:
    """Grants every request at once from two TaskManagers and remembers what was freed."""
    __test__ = False
    heartbeat_interval, heartbeat_timeout = 1.0, 10.0

    def __init__(self):
        self.executors = [TestingTaskExecutor("tm-a"), TestingTaskExecutor("tm-b")]
        self.requests, self.freed = 0, 0
        self.ended: list = []  # jobs whose quota reservation ended

    async def request_slots(self, job_id, job_name, count, timeout):
        self.requests += 1
        return [AllocatedSlot(AllocationId(f"a{self.requests}-{i}"), ex.tm_id, i, "127.0.0.1", 1, ex)
                for i, ex in zip(range(count), self.executors)]

    def cancel_requests(self, job_id):
        pass

    def assign_tasks(self, allocation_id, task_names):
        pass

    def free_slots(self, job_id):
        self.freed += 1

    def end_reservation(self, job_id):
        self.ended.append(job_id)


def job_master(tmp_path, **conf) -> tuple[JobMaster, TestingResourceManager, EventBus]:
    graph = JobGraph("g", [OperatorSpec("src", "src", "source", 2), OperatorSpec("snk", "snk", "sink", 1)],
                     [EdgeSpec("src", "snk", "hash", ["k"])])
    graph.validate(1)
    rm, bus = TestingResourceManager(), EventBus()
    config = Configuration({"state.checkpoints.dir": str(tmp_path / "ck"), **conf})
    return JobMaster(JobId("job-1"), graph, config, rm, bus, str(tmp_path)), rm, bus


def sent(rm, what):
    return [m for ex in rm.executors for w, m in ex.sent if w == what]


def report(master, attempt, state, error=None):
    master.update_task_execution_state(TaskStateChanged(master.job_id, attempt, state, error))


async def settle():
    for _ in range(20):
        await asyncio.sleep(0)


async def running_job(tmp_path, **conf):
    master, rm, bus = job_master(tmp_path, **conf)
    master.start()
    await settle()
    for d in sent(rm, "submit"):
        report(master, d.attempt_id, E.RUNNING)
    assert master.status == J.RUNNING and master.all_running()
    return master, rm, bus


def test_a_job_is_deployed_through_the_slot_gateways_and_restarted_after_a_failure(tmp_path):
    async def body():
        master, rm, bus = await running_job(tmp_path, **{"restart-strategy.type": "fixed-delay",
                                                          "restart-strategy.fixed-delay.delay": "0 s"})
        deployed = sent(rm, "submit")
        assert sorted(d.task_name for d in deployed) == ["snk", "src", "src"]
        assert {d.allocation_id for d in deployed} == {"a1-0", "a1-1"}
        failed, *others = [d.attempt_id for d in deployed]
        report(master, failed, E.FAILED, "Traceback...\nValueError: boom")
        assert master.status == J.RESTARTING and sorted(sent(rm, "cancel")) == sorted(others)
        for attempt in others:
            report(master, attempt, E.CANCELED)
        await settle()
        assert rm.freed == 1 and rm.requests == 2 and master.restarts == 1
        assert rm.ended == [], "a restart keeps the job's slots reserved against its user's quota"
        assert len(sent(rm, "submit")) == 6 and master.status == J.RUNNING
        assert master.failure_history()[0].exception_name == "ValueError"
        statuses = [e["status"] for e in bus.history if e["type"] == "JobStatusChanged"]
        assert statuses == ["CREATED", "RUNNING", "RESTARTING", "CREATED", "RUNNING"]
    asyncio.run(body())


def test_a_task_manager_gone_at_deployment_fails_the_attempt_and_cancel_ends_the_job(tmp_path):
    async def body():
        master, rm, _ = job_master(tmp_path)
        rm.executors[1].gone = True
        master.start()
        await settle()
        assert master.status == J.FAILING, "no restart strategy without checkpointing: the job fails"
        await confirm_cancels(master, rm)
        assert master.status == J.FAILED and len(sent(rm, "submit")) == 2
        assert "tm-b is gone" in master.failure_history()[0].stacktrace
        again, rm2, _ = await running_job(tmp_path)
        await asyncio.wait_for(asyncio.gather(again.cancel(), confirm_cancels(again, rm2)), 5)
        assert again.status == J.CANCELED and rm2.freed == 1 and rm2.ended == [again.job_id]
    asyncio.run(body())


async def confirm_cancels(master, rm):
    await settle()
    for attempt in sent(rm, "cancel"):
        report(master, attempt, E.CANCELED)


def test_a_checkpoint_goes_from_the_sources_to_metadata_to_the_sinks_commit(tmp_path):
    async def body():
        master, rm, _ = await running_job(tmp_path, **{"execution.checkpointing.interval": "1 h"})
        done = master.checkpoints.trigger()
        triggers = sent(rm, "trigger")
        assert [type(t) for t in triggers] == [TriggerCheckpoint, TriggerCheckpoint], "only the two sources"
        for attempt in master.all_attempts():
            master.acknowledge_checkpoint(AcknowledgeCheckpoint(master.job_id, attempt, 1, f"{tmp_path}/s-{attempt}", 7))
        completed = await asyncio.wait_for(done, 5)
        assert completed.size == 21 and (tmp_path / "ck" / "job-1" / "chk-1" / "_metadata").exists()
        assert sorted(m.attempt_id for m in sent(rm, "confirm")) == sorted(master.all_attempts())
        assert all(isinstance(m, NotifyCheckpointComplete) for m in sent(rm, "confirm"))
        assert master.checkpoint_stats().completed == 1
    asyncio.run(body())


def test_a_declined_checkpoint_is_aborted_everywhere_and_its_future_fails(tmp_path):
    async def body():
        master, rm, _ = await running_job(tmp_path, **{"execution.checkpointing.interval": "1 h"})
        done = master.checkpoints.trigger()
        master.decline_checkpoint(DeclineCheckpoint(master.job_id, master.all_attempts()[0], 1, "not ready"))
        await settle()
        assert done.done() and "declined by a subtask: not ready" in str(done.exception())
        assert len(sent(rm, "abort")) == 3 and all(isinstance(m, NotifyCheckpointAborted) for m in sent(rm, "abort"))
        assert master.checkpoint_stats().failed == 1 and master.status == J.RUNNING
    asyncio.run(body())


def test_a_restore_point_whose_files_are_gone_fails_the_job_within_two_rounds_naming_it(tmp_path):
    from runtime.checkpoint.lifecycle_events import CompletedCheckpoint

    async def body():
        master, rm, _ = job_master(tmp_path, **{"restart-strategy.type": "fixed-delay",
                                                 "restart-strategy.fixed-delay.delay": "0 s"})
        (tmp_path / "ck").mkdir()  # the storage is there (not an outage); the checkpoint's files are not
        master.checkpoints.recover(CompletedCheckpoint(7, 1.0, False, "file:///ck/chk-7", [], 0.0, 0))
        master.start()
        for _ in range(10):  # restarts are unlimited; the restore attempts are not
            await settle()
            deployed = [d for d in sent(rm, "submit") if master.eg.find(d.attempt_id)[1] is not None]
            if master.status.is_globally_terminal or not deployed:
                break
            assert all(d.restore_checkpoint_id == 7 for d in deployed)
            report(master, deployed[0].attempt_id, E.FAILED,
                   "Traceback...\nruntime.errors.RestoreFailed: checkpoint 7: cannot read the snapshot x: missing")
            for d in deployed[1:]:
                report(master, d.attempt_id, E.CANCELED)
        assert master.status == J.FAILED and master.restarts == 1
        assert "cannot restore checkpoint 7 (file:///ck/chk-7) in 2 attempts" in master.failover.cause
        assert "no older retained checkpoint" in master.failover.cause
    asyncio.run(body())
