"""ResourceManager: the slot table of the cluster.

TaskManagers register their slots and heartbeat; one silent for longer than ``heartbeat.timeout``, or
whose control connection stays closed for ``heartbeat.rpc-failure-threshold`` heartbeat intervals (a
killed process), is declared lost, its slots leave the table and the JobMasters of the jobs on it are
told. JobMasters ask for slots with :meth:`ResourceManager.request_slots`, which waits up to
``slot.request.timeout`` for enough free slots, then asks the chosen TaskManagers to offer them
(RequestSlot -> SlotOffer). Each AllocatedSlot carries a TaskExecutorGateway to its TaskManager: the
only way a JobMaster reaches one. Other roles see this class as a ResourceManagerGateway.

Only TaskManagers whose Spark session is up (``ready``) are given slots: one still starting its JVM
(tens of seconds on a loaded machine) would hold a restarting job's tasks, or those of a job a new
leader recovers, that long while started TaskManagers have room. Its slots still count for the
timeout: a request they would serve waits for them instead of failing.

Slots are also where users are kept to their share (runtime.users): each user's slot quota is checked
when a job is admitted (runtime.jobmanager.quotas), and when jobs of several users wait, free slots go
to the user holding fewest first (runtime.jobmanager.fair_share).

Runs on the JobManager's loop; all state is touched from there only.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import dataclass
from collections.abc import Callable

from runtime import events
from runtime.errors import ClusterError
from runtime.ids import AllocationId, JobId, TaskManagerId
from runtime.jobmanager import fair_share
from runtime.jobmanager.gateways import AllocatedSlot, ControlConnection
from runtime.jobmanager.quotas import SlotQuotas
from runtime.jobmanager.slot_table import Slot, TaskManagerRecord, choose_slots, held_by_user, loss_reason
from runtime.jobmanager.task_executor import TaskExecutor
from runtime.snapshots import TaskManagerSnapshot
from runtime.messages import FreeSlot, RegisterTaskManager, RequestSlot, SlotOffer, SlotStatus, TaskManagerStatus
from runtime.users import CLUSTER_ADMIN

log = logging.getLogger(__name__)


class NoResourceAvailable(ClusterError):
    """Not enough slots arrived within ``slot.request.timeout``."""


__all__ = ["AllocatedSlot", "NoResourceAvailable", "ResourceManager", "TaskManagerRecord"]


@dataclass
class _PendingRequest:
    job_id: JobId
    job_name: str
    count: int
    future: asyncio.Future
    timeout: float
    user: str = CLUSTER_ADMIN
    seq: int = 0
    overdue: bool = False  # past its timeout, waiting for TaskManagers that are still starting


class ResourceManager:
    """The cluster's slot table and TaskManager liveness; one per JobManager, on its loop."""

    def __init__(self, bus, heartbeat_interval: float, heartbeat_timeout: float, rpc_failure_threshold: int = 0):
        self._bus = bus
        self.heartbeat_interval = heartbeat_interval
        self.heartbeat_timeout = heartbeat_timeout
        self.rpc_failure_threshold = rpc_failure_threshold
        self.task_managers: dict[TaskManagerId, TaskManagerRecord] = {}
        self.lost: dict[TaskManagerId, TaskManagerSnapshot] = {}
        self._pending: list[_PendingRequest] = []
        self._fair = fair_share.FairShare()
        self._seq = itertools.count(1)
        self.quotas = SlotQuotas()
        self._offers: dict[AllocationId, asyncio.Future] = {}
        self._loss_listeners: list[Callable[[TaskManagerId, str], None]] = []
        self._change_listeners: list[Callable[[], None]] = []
        self._departure_listeners: list[Callable[[TaskManagerId], None]] = []
        self.shortage_note: Callable[[int], str | None] | None = None  # the resource provider's word on a timeout
        self.leading: Callable[[], bool] = lambda: True  # only a serving leader declares TaskManagers lost
        self._monitor: asyncio.Task | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self._monitor = asyncio.get_running_loop().create_task(self._watch_heartbeats())

    def stop(self) -> None:
        if self._monitor:
            self._monitor.cancel()
        for req in self._pending:
            if not req.future.done():
                req.future.set_exception(NoResourceAvailable("the JobManager is shutting down"))

    def on_task_manager_lost(self, listener: Callable[[TaskManagerId, str], None]) -> None:
        self._loss_listeners.append(listener)

    def on_task_manager_departure(self, listener: Callable[[TaskManagerId], None]) -> None:
        """Call ``listener(tm_id)`` when a TaskManager deregisters (leaves on purpose), before it leaves the table."""
        self._departure_listeners.append(listener)

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after TaskManagers come or go, slots are allocated or freed, or requests wait."""
        self._change_listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._change_listeners):
            listener()

    # -- registration and heartbeats ----------------------------------------------------------
    def register(self, msg: RegisterTaskManager, connection: ControlConnection) -> None:
        """Add a TaskManager; slots it reports as still allocated (after a leader change) stay so."""
        if msg.tm_id in self.task_managers:
            self._drop(msg.tm_id, "re-registered under the same id", notify=True)
        slots = [Slot(i) for i in range(msg.slots)]
        for status in msg.slot_report:
            if 0 <= status.index < msg.slots and status.allocation_id:
                slots[status.index].allocation_id = status.allocation_id
                slots[status.index].job_id = status.job_id
        record = TaskManagerRecord(msg.tm_id, msg.host, msg.data_port, msg.pid, msg.spark_master, connection, slots,
                                   ready=msg.ready)
        self.task_managers[msg.tm_id] = record
        self.lost.pop(msg.tm_id, None)
        self._bus.publish(events.TaskManagerRegistered(msg.tm_id, msg.host, msg.data_port, msg.slots, msg.pid))
        log.info("TaskManager %s registered with %d slots%s", msg.tm_id, msg.slots,
                 "" if msg.ready else " (its Spark session is starting: no slot of it is handed out yet)")
        self._fulfil_pending()
        self._changed()

    def heartbeat(self, tm_id: TaskManagerId, slot_report: list[SlotStatus], ready: bool = True) -> bool:
        """Record a heartbeat; False if the TaskManager is not registered (it must register again)."""
        record = self.task_managers.get(tm_id)
        if record is None:
            return False
        record.last_heartbeat = time.monotonic()
        if ready and not record.ready:
            record.ready = True
            log.info("TaskManager %s: Spark session up, its slots can be handed out", tm_id)
            self._fulfil_pending()
            self._changed()
        return True

    def deregister(self, tm_id: TaskManagerId, connection: ControlConnection, reason: str) -> None:
        """The TaskManager leaves on purpose (it is being stopped): out of the table at once, not lost; the jobs
        on it restart elsewhere as after a loss, but no replacement is started for it."""
        record = self.task_managers.get(tm_id)
        if record is None or record.connection is not connection:
            return  # released already (stopped for idleness), or a stale connection of a re-registered one
        for listener in list(self._departure_listeners):
            listener(tm_id)
        self._drop(tm_id, f"TaskManager {tm_id} left: {reason}", notify=True, lost=False)
        self._bus.publish(events.TaskManagerDeregistered(tm_id, reason))

    def status_reported(self, tm_id: TaskManagerId, status: TaskManagerStatus) -> None:
        """Keep what a TaskManager last said about itself (memory, log lines) for its REST views."""
        record = self.task_managers.get(tm_id)
        if record is not None:
            record.status = status

    def connection_closed(self, tm_id: TaskManagerId, connection: ControlConnection) -> None:
        """A control connection went away: lost unless it comes back within the failure threshold."""
        record = self.task_managers.get(tm_id)
        if record is not None and record.connection is connection:
            record.disconnected_at = time.monotonic()
            log.info("control connection of %s closed; lost after %d heartbeat intervals without it",
                     tm_id, self.rpc_failure_threshold)

    async def _watch_heartbeats(self) -> None:
        """Every quarter interval, drop the TaskManagers silent too long. Time this JobManager did not serve,
        or was itself stopped (a loop that woke up far later than asked), is nobody's silence but its own."""
        tick = min(self.heartbeat_interval, self.heartbeat_timeout) / 4
        last = time.monotonic()
        while True:
            await asyncio.sleep(tick)
            now, before = time.monotonic(), last
            last = now
            if not self.leading() or now - before - tick > self.heartbeat_timeout / 2:
                for record in self.task_managers.values():
                    record.last_heartbeat = min(now, record.last_heartbeat + now - before)
                continue
            for tm_id, record in list(self.task_managers.items()):
                reason = loss_reason(record, time.monotonic(), self.heartbeat_timeout, self.heartbeat_interval,
                                     self.rpc_failure_threshold)
                if reason:
                    self._drop(tm_id, reason, notify=True)

    def _drop(self, tm_id: TaskManagerId, reason: str, notify: bool, lost: bool = True) -> None:
        record = self.task_managers.pop(tm_id, None)
        if record is None:
            return
        if lost:
            self.lost[tm_id] = record.lost_snapshot(reason)
        log.log(logging.WARNING if lost else logging.INFO, "%s", reason)
        record.connection.close(reason)
        for alloc_id, fut in list(self._offers.items()):
            if not fut.done() and any(s.allocation_id == alloc_id for s in record.slots):
                fut.set_exception(NoResourceAvailable(reason))
        if lost:
            self._bus.publish(events.TaskManagerLost(tm_id, reason))
        self._fail_overdue()
        if notify:
            for listener in list(self._loss_listeners):
                listener(tm_id, reason)
        self._changed()

    def disconnect_all(self, reason: str) -> None:
        """Leadership lost: let every TaskManager go (it cancels its tasks and registers with the leader)
        and fail waiting slot requests. Nobody is notified: the jobs are already suspended."""
        for tm_id in list(self.task_managers):
            self._drop(tm_id, reason, notify=False)
        self.lost.clear()
        for req in self._pending:
            if not req.future.done():
                req.future.set_exception(NoResourceAvailable(reason))
        self._pending.clear()
        self._fair = fair_share.FairShare()
        self.quotas.reservations.clear()  # the next leader admits the jobs again

    def release_task_manager(self, tm_id: TaskManagerId, reason: str, lost: bool = True) -> None:
        """Forget a TaskManager at once: it is known to be gone (killed, its process exited), or with
        ``lost=False`` it is being stopped on purpose (idle), which is not a loss."""
        self._drop(tm_id, reason, notify=True, lost=lost)

    def _holds(self, record: TaskManagerRecord) -> bool:
        """Whether ``record`` is still this ResourceManager's registration of its TaskManager."""
        return self.task_managers.get(record.tm_id) is record

    @property
    def pending_slot_count(self) -> int:
        """Slots that waiting requests need in total."""
        return sum(r.count for r in self._pending if not r.future.done())

    def slot_usage(self) -> dict[TaskManagerId, tuple[int, int]]:
        """Every registered TaskManager's (slots, slots allocated)."""
        return {tm_id: (len(r.slots), len(r.slots) - len(r.free_slots)) for tm_id, r in self.task_managers.items()}

    # -- slots --------------------------------------------------------------------------------
    @property
    def total_slots(self) -> int:
        return sum(len(r.slots) for r in self.task_managers.values())

    @property
    def free_slot_count(self) -> int:
        """Free slots, also those of TaskManagers whose Spark is still starting."""
        return sum(len(r.free_slots) for r in self.task_managers.values())

    @property
    def ready_free_slot_count(self) -> int:
        return sum(len(r.ready_free_slots) for r in self.task_managers.values())

    async def request_slots(self, job_id: JobId, job_name: str, count: int, timeout: float) -> list[AllocatedSlot]:
        """Wait until ``count`` slots are free, then allocate them all at once to ``job_id``.

        Raises NoResourceAvailable naming the slots needed and available when ``timeout`` passes, unless
        free slots of TaskManagers still starting their Spark would serve it: then it waits for them (and
        fails as soon as they go). Allocating all or nothing keeps two waiting jobs from each holding half
        of what they need.
        """
        loop = asyncio.get_running_loop()
        request = _PendingRequest(job_id, job_name, count, loop.create_future(), timeout,
                                  self.quotas.user_of(job_id) or CLUSTER_ADMIN, next(self._seq))
        self._pending.append(request)
        self._fair.handle(fair_share.Requested(request.seq, request.user, count))
        self._fulfil_pending()
        self._changed()
        try:
            try:
                chosen = await asyncio.wait_for(asyncio.shield(request.future), timeout)
            except asyncio.TimeoutError:
                request.overdue = True
                self._fail_overdue()
                if not request.future.done():
                    log.info("job %s waits beyond slot.request.timeout for TaskManagers whose Spark is starting",
                             job_id)
                chosen = await request.future
        finally:
            if request in self._pending:
                self._pending.remove(request)
            self._fair.handle(fair_share.Withdrawn(request.seq))
            if not request.future.done():
                request.future.cancel()
            self._changed()
        return await self._confirm_offers(job_id, chosen)

    def _fail_overdue(self) -> None:
        """Fail each request past its timeout that the free slots, counting starting TaskManagers, cannot serve."""
        for req in self._pending:
            if req.overdue and not req.future.done() and self.free_slot_count < req.count:
                req.future.set_exception(self._shortage(req))

    def _shortage(self, req: _PendingRequest) -> NoResourceAvailable:
        note = self.shortage_note(req.count) if self.shortage_note else None
        return NoResourceAvailable(
            f"Could not acquire the minimum required resources: the job needs {req.count} slots, "
            f"{self.free_slot_count} of {self.total_slots} are available "
            f"({len(self.task_managers)} TaskManagers) after waiting {req.timeout:g} s "
            f"(slot.request.timeout){'; ' + note if note else ''}")

    def held_by_user(self) -> dict[str, int]:
        """How many allocated slots each user's jobs hold."""
        return held_by_user(self.task_managers.values(), lambda job: self.quotas.user_of(job) or CLUSTER_ADMIN)

    def admit(self, job_id: JobId, user: str, job_name: str, slots: int, check: bool = True) -> None:
        """Reserve a job's slots against its user's quota (QuotaExceeded names quota, holdings and need)."""
        self.quotas.admit(job_id, user, job_name, slots, check)

    def end_reservation(self, job_id: JobId) -> None:
        self.quotas.release(job_id)

    def cancel_requests(self, job_id: JobId) -> None:
        for req in list(self._pending):
            if req.job_id == job_id and not req.future.done():
                req.future.set_exception(NoResourceAvailable("the job was cancelled while waiting for slots"))

    def _fulfil_pending(self) -> None:
        """Serve the waiting requests the ready free slots allow, in fair-share order (runtime.jobmanager.fair_share)."""
        waiting = {req.seq: req for req in self._pending if not req.future.done()}
        for done in (req for req in self._pending if req.future.done()):
            self._fair.handle(fair_share.Withdrawn(done.seq))
        for grant in self._fair.handle(fair_share.Capacity(self.ready_free_slot_count, self.held_by_user())):
            if grant.request not in waiting:
                continue
            req = waiting[grant.request]
            chosen = choose_slots(self.task_managers, req.count)
            for _record, slot in chosen:
                slot.allocation_id = AllocationId.new()
                slot.job_id, slot.job_name = req.job_id, req.job_name
            self._pending.remove(req)
            req.future.set_result(chosen)
            self._changed()

    async def _confirm_offers(self, job_id: JobId, chosen) -> list[AllocatedSlot]:
        """Ask each TaskManager to offer its slot to the job and wait for the offers."""
        loop = asyncio.get_running_loop()
        waits = []
        for record, slot in chosen:
            fut = loop.create_future()
            self._offers[slot.allocation_id] = fut
            record.connection.send(RequestSlot(slot.allocation_id, job_id, slot.index))
            waits.append(fut)
            self._bus.publish(events.SlotAllocated(record.tm_id, slot.index, slot.allocation_id, job_id, slot.job_name))
        try:
            await asyncio.wait_for(asyncio.gather(*waits), self.heartbeat_timeout)
        except (asyncio.TimeoutError, NoResourceAvailable) as err:
            self.free_slots(job_id)
            raise NoResourceAvailable(f"TaskManagers did not offer the requested slots: {err or 'timed out'}") from None
        finally:
            for _record, slot in chosen:
                self._offers.pop(slot.allocation_id, None)
        return [AllocatedSlot(slot.allocation_id, record.tm_id, slot.index, record.host, record.data_port,
                              TaskExecutor(record, self._holds)) for record, slot in chosen]

    def offer_received(self, tm_id: TaskManagerId, offer: SlotOffer) -> None:
        fut = self._offers.get(offer.allocation_id)
        if fut is None or fut.done():
            return
        if offer.accepted:
            fut.set_result(offer)
        else:
            fut.set_exception(NoResourceAvailable(f"{tm_id} declined slot {offer.slot_index}: {offer.reason}"))

    def assign_tasks(self, allocation_id: AllocationId, task_names: list[str]) -> None:
        for record in self.task_managers.values():
            for slot in record.slots:
                if slot.allocation_id == allocation_id:
                    slot.tasks = list(task_names)

    def free_slots(self, job_id: JobId) -> None:
        """Give back every slot of ``job_id`` and tell its TaskManagers."""
        for record in self.task_managers.values():
            for slot in record.slots:
                if slot.job_id == job_id and slot.allocation_id is not None:
                    record.connection.send(FreeSlot(slot.allocation_id))
                    self._bus.publish(events.SlotFreed(record.tm_id, slot.index, slot.allocation_id, job_id))
                    slot.allocation_id, slot.job_id, slot.job_name, slot.tasks = None, None, "", []
        self._fulfil_pending()
        self._changed()

    # -- snapshots -----------------------------------------------------------------------------
    def snapshots(self) -> list[TaskManagerSnapshot]:
        """Every registered TaskManager, then every lost one."""
        return [r.snapshot() for r in self.task_managers.values()] + list(self.lost.values())

    def snapshot(self, tm_id: str) -> TaskManagerSnapshot | None:
        record = self.task_managers.get(tm_id)  # type: ignore[call-overload]
        return record.snapshot() if record is not None else self.lost.get(tm_id)  # type: ignore[call-overload]
