"""ResourceManager slot logic with a testing gateway that offers slots the way a TaskManager does."""
import asyncio

import pytest

from runtime.ids import JobId, TaskManagerId
from runtime.jobmanager.event_bus import EventBus
from runtime.gateways import TaskManagerGone
from runtime.jobmanager.quotas import QuotaExceeded
from runtime.jobmanager.resource_manager import NoResourceAvailable, ResourceManager
from runtime.messages import CancelTask, FreeSlot, RegisterTaskManager, RequestSlot, SlotOffer


class TestingGateway:
    __test__ = False

    def __init__(self, rm, tm_id):
        self.rm, self.tm_id, self.sent, self.closed = rm, tm_id, [], None

    def send(self, message):
        self.sent.append(message)
        if isinstance(message, RequestSlot):
            asyncio.get_running_loop().call_soon(self.rm.offer_received, self.tm_id, SlotOffer(
                message.allocation_id, message.job_id, message.slot_index, True))

    def close(self, reason):
        self.closed = reason


def register(rm, name, slots, ready=True):
    tm = TaskManagerId(name)
    gw = TestingGateway(rm, tm)
    rm.register(RegisterTaskManager(tm, "127.0.0.1", 1, slots, 1, "local", ready=ready), gw)
    return gw


def run(coro):
    return asyncio.run(coro)


def test_slots_spread_evenly_over_task_managers():
    async def body():
        rm = ResourceManager(EventBus(), 0.1, 1.0)
        register(rm, "tm-a", 2)
        register(rm, "tm-b", 2)
        slots = await rm.request_slots(JobId.new(), "j", 2, 1.0)
        assert sorted(s.tm_id for s in slots) == ["tm-a", "tm-b"]
        assert rm.free_slot_count == 2
    run(body())


def test_request_waits_for_a_task_manager_then_times_out_with_numbers():
    async def body():
        rm = ResourceManager(EventBus(), 0.1, 1.0)
        register(rm, "tm-a", 2)
        waiting = asyncio.ensure_future(rm.request_slots(JobId.new(), "j", 3, 5.0))
        await asyncio.sleep(0)
        assert not waiting.done()
        register(rm, "tm-b", 2)
        assert len(await waiting) == 3
        with pytest.raises(NoResourceAvailable, match="needs 4 slots, 1 of 4 are available"):
            await rm.request_slots(JobId.new(), "k", 4, 0.2)
    run(body())


def test_free_slots_tells_the_task_manager_and_lost_task_managers_notify_listeners():
    async def body():
        bus = EventBus()
        rm = ResourceManager(bus, 0.05, 0.2)
        lost = []
        noticed = asyncio.Event()
        rm.on_task_manager_lost(lambda tm, reason: (lost.append((tm, reason)), noticed.set()))
        gw = register(rm, "tm-a", 1)
        job = JobId.new()
        await rm.request_slots(job, "j", 1, 1.0)
        rm.free_slots(job)
        assert any(isinstance(m, FreeSlot) for m in gw.sent) and rm.free_slot_count == 1
        rm.start()
        await asyncio.wait_for(noticed.wait(), 2.0)
        rm.stop()
        assert lost and "no heartbeat" in lost[0][1] and rm.total_slots == 0
        assert [e["type"] for e in bus.history][-1] == "TaskManagerLost"
    run(body())


def test_a_closed_control_connection_makes_the_task_manager_lost_after_the_failure_threshold():
    async def body():
        rm = ResourceManager(EventBus(), 0.05, 60.0, 2)
        lost = []
        noticed = asyncio.Event()
        rm.on_task_manager_lost(lambda tm, reason: (lost.append(reason), noticed.set()))
        gw = register(rm, "tm-a", 1)
        register(rm, "tm-b", 1)
        rm.start()
        rm.connection_closed("tm-a", gw)
        await asyncio.wait_for(noticed.wait(), 2.0)  # long before the 60 s heartbeat timeout
        rm.stop()
        assert len(lost) == 1 and "unreachable" in lost[0] and "heartbeat.rpc-failure-threshold 2" in lost[0]
        assert list(rm.task_managers) == ["tm-b"]
    run(body())


def test_an_allocated_slot_carries_the_gateway_to_its_task_manager_until_that_one_is_lost():
    async def body():
        rm = ResourceManager(EventBus(), 0.1, 1.0)
        gw = register(rm, "tm-a", 1)
        (slot,) = await rm.request_slots(JobId.new(), "j", 1, 1.0)
        slot.gateway.cancel_task("att-1")
        assert isinstance(gw.sent[-1], CancelTask) and gw.sent[-1].attempt_id == "att-1"
        rm.release_task_manager(TaskManagerId("tm-a"), "killed")
        with pytest.raises(TaskManagerGone, match="tm-a is gone"):
            slot.gateway.cancel_task("att-1")
        register(rm, "tm-a", 1)  # the same id registering anew is another TaskManager to its old slots
        with pytest.raises(TaskManagerGone):
            slot.gateway.cancel_task("att-1")
    run(body())


def test_a_task_manager_whose_spark_is_starting_gets_no_slot_while_started_ones_have_room():
    """A new leader recovering a job, or a job restarting after a loss, must not wait for a replacement's
    Spark JVM: the started TaskManagers take the job, whichever registered first or has most room."""
    async def body():
        rm = ResourceManager(EventBus(), 0.1, 1.0)
        register(rm, "tm-z", 2, ready=False)  # the most free slots, and first by id: what the spread picks
        register(rm, "tm-a", 2)
        waiting = asyncio.ensure_future(rm.request_slots(JobId.new(), "j", 3, 5.0))
        await asyncio.sleep(0.01)
        assert not waiting.done(), "two ready slots do not serve three, and the starting ones are not handed out"
        register(rm, "tm-b", 2)
        slots = await waiting
        assert len(slots) == 3 and {s.tm_id for s in slots} == {"tm-a", "tm-b"}
        assert rm.free_slot_count == 3 and rm.ready_free_slot_count == 1
    run(body())


def test_a_request_waits_for_starting_task_managers_past_its_timeout_and_gets_them_once_ready():
    async def body():
        rm = ResourceManager(EventBus(), 0.1, 1.0)
        register(rm, "tm-a", 2, ready=False)
        waiting = asyncio.ensure_future(rm.request_slots(JobId.new(), "j", 2, 0.05))
        await asyncio.sleep(0.2)
        assert not waiting.done(), "slots that are coming: no failure at the timeout"
        assert rm.heartbeat(TaskManagerId("tm-a"), [], ready=True)  # its Spark came up: sent at once
        assert [s.tm_id for s in await asyncio.wait_for(waiting, 1.0)] == ["tm-a", "tm-a"]
    run(body())


def test_a_request_past_its_timeout_fails_once_the_starting_task_managers_it_waits_for_go():
    async def body():
        rm = ResourceManager(EventBus(), 0.1, 1.0)
        register(rm, "tm-a", 2, ready=False)
        register(rm, "tm-b", 1)
        waiting = asyncio.ensure_future(rm.request_slots(JobId.new(), "j", 3, 0.05))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        rm.release_task_manager(TaskManagerId("tm-a"), "killed")
        with pytest.raises(NoResourceAvailable, match="needs 3 slots, 1 of 1 are available"):
            await asyncio.wait_for(waiting, 1.0)
        with pytest.raises(NoResourceAvailable, match="needs 2 slots"):  # nothing starting: fails at the timeout
            await rm.request_slots(JobId.new(), "k", 2, 0.05)
    run(body())


def test_a_jobmanager_that_does_not_serve_or_was_itself_paused_declares_no_taskmanager_lost():
    async def body():
        rm = ResourceManager(EventBus(), 0.05, 0.2)
        lost = []
        rm.on_task_manager_lost(lambda tm, reason: lost.append(tm))
        register(rm, "tm-a", 1)
        serving = False
        rm.leading = lambda: serving
        rm.start()
        await asyncio.sleep(0.5)  # silent for more than the timeout, while this JobManager does not serve
        assert not lost and rm.total_slots == 1
        serving = True
        time_before = asyncio.get_running_loop().time()
        await asyncio.sleep(0.1)
        assert not lost, "the time it did not serve is not the TaskManager's silence"
        while not lost and asyncio.get_running_loop().time() - time_before < 2.0:
            await asyncio.sleep(0.02)
        rm.stop()
        assert lost == ["tm-a"], "silent while this JobManager serves: lost after the timeout"
    run(body())


def test_a_task_manager_that_deregisters_left_on_purpose_its_jobs_are_told_and_it_is_not_lost():
    async def body():
        bus = EventBus()
        published = []
        bus.publish = published.append  # type: ignore[method-assign]
        rm = ResourceManager(bus, 0.05, 0.2, rpc_failure_threshold=2)
        told, departed = [], []
        rm.on_task_manager_lost(lambda tm, reason: told.append((tm, reason)))
        rm.on_task_manager_departure(departed.append)
        gw = register(rm, "tm-a", 2)
        other = TestingGateway(rm, TaskManagerId("tm-a"))
        rm.deregister(TaskManagerId("tm-a"), other, "stopped (pid 7)")  # not its connection: ignored
        assert rm.total_slots == 2 and not told
        await rm.request_slots(JobId.new(), "j", 1, 1.0)
        rm.deregister(TaskManagerId("tm-a"), gw, "stopped (pid 7)")
        assert departed == ["tm-a"] and told == [("tm-a", "TaskManager tm-a left: stopped (pid 7)")]
        assert rm.total_slots == 0 and rm.lost == {} and [s.lost_reason for s in rm.snapshots()] == []
        kinds = [type(e).__name__ for e in published]
        assert "TaskManagerDeregistered" in kinds and "TaskManagerLost" not in kinds
    run(body())


def test_a_freed_slot_goes_to_the_waiting_user_who_holds_fewest_not_to_the_first_in_line():
    async def body():
        rm = ResourceManager(EventBus(), 0.1, 1.0)
        register(rm, "tm-a", 2)
        first, second, third = JobId.new(), JobId.new(), JobId.new()
        for job, user in ((first, "alice"), (second, "alice"), (third, "bob")):
            rm.admit(job, user, "j", 1)
        await rm.request_slots(first, "a1", 1, 1.0)
        await rm.request_slots(second, "a2", 1, 1.0)
        alice_again, bob = JobId.new(), third
        rm.admit(alice_again, "alice", "j", 1)
        waiting_alice = asyncio.ensure_future(rm.request_slots(alice_again, "a3", 1, 5.0))
        await asyncio.sleep(0)
        waiting_bob = asyncio.ensure_future(rm.request_slots(bob, "b1", 1, 5.0))
        await asyncio.sleep(0)
        assert rm.held_by_user() == {"alice": 2}
        rm.free_slots(first)
        assert len(await asyncio.wait_for(waiting_bob, 2)) == 1, "bob holds none: the freed slot is his"
        assert not waiting_alice.done()
        rm.free_slots(second)
        assert len(await asyncio.wait_for(waiting_alice, 2)) == 1
        assert rm.held_by_user() == {"alice": 1, "bob": 1}
    run(body())


def test_a_submission_past_the_quota_is_refused_and_an_ended_job_gives_its_slots_back():
    rm = ResourceManager(EventBus(), 0.1, 1.0)
    rm.quotas.quotas = {"alice": 2}
    one, two = JobId.new(), JobId.new()
    rm.admit(one, "alice", "clicks", 2)
    with pytest.raises(QuotaExceeded, match="user 'alice' may hold 2 slots and holds 2 \\('clicks' 2\\)"):
        rm.admit(two, "alice", "orders", 1)
    rm.end_reservation(one)
    rm.admit(two, "alice", "orders", 1)
