"""The ResourceManager's table: one record per registered TaskManager, with its slots and what it
last said (heartbeat, connection, whether its Spark session is up), and how slots are chosen from it.
The ResourceManager (runtime.jobmanager.resource_manager) decides with it."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from runtime.ids import AllocationId, JobId, TaskManagerId
from runtime.jobmanager.gateways import ControlConnection
from runtime.snapshots import SlotSnapshot, TaskManagerSnapshot
from runtime.messages import TaskManagerStatus


@dataclass
class Slot:
    """One slot of a registered TaskManager, as the ResourceManager's table holds it."""
    index: int
    allocation_id: AllocationId | None = None
    job_id: JobId | None = None
    job_name: str = ""
    tasks: list[str] = field(default_factory=list)

    @property
    def free(self) -> bool:
        return self.allocation_id is None


@dataclass
class TaskManagerRecord:
    """One registration of a TaskManager: where it is, its control connection and its slots."""
    tm_id: TaskManagerId
    host: str
    data_port: int
    pid: int
    spark_master: str
    connection: ControlConnection
    slots: list[Slot]
    registered_at: float = field(default_factory=time.time)
    last_heartbeat: float = field(default_factory=time.monotonic)
    disconnected_at: float | None = None  # when its control connection closed; it may come back
    ready: bool = True  # its Spark session is up: tasks deployed here start at once
    status: TaskManagerStatus | None = None  # its latest report about itself

    @property
    def free_slots(self) -> list[Slot]:
        return [s for s in self.slots if s.free]

    @property
    def ready_free_slots(self) -> list[Slot]:
        """The free slots that can be handed out now (none while its Spark starts)."""
        return self.free_slots if self.ready else []

    def snapshot(self) -> TaskManagerSnapshot:
        """The registration as the Dispatcher hands it out (runtime.snapshots)."""
        slots = tuple(SlotSnapshot(s.index, s.allocation_id, s.job_id, s.job_name, tuple(s.tasks)) for s in self.slots)
        return TaskManagerSnapshot(self.tm_id, self.host, self.data_port, self.pid, self.spark_master,
                                   len(self.slots), len(self.free_slots), slots, self.registered_at,
                                   time.monotonic() - self.last_heartbeat, status=self.status)

    def lost_snapshot(self, reason: str) -> TaskManagerSnapshot:
        """What is kept of the TaskManager once it is lost: where it was, when, and why it is gone."""
        return TaskManagerSnapshot(self.tm_id, self.host, self.data_port, self.pid, self.spark_master,
                                   0, 0, (), self.registered_at, None, reason, time.time(), self.status)


def choose_slots(records: dict[TaskManagerId, TaskManagerRecord], count: int) -> list[tuple[TaskManagerRecord, Slot]]:
    """``count`` free slots of ready TaskManagers, spread evenly: each taken from the ready TaskManager with the
    most free slots left (the caller has checked that there are enough)."""
    free = {tm_id: list(r.ready_free_slots) for tm_id, r in records.items() if r.ready_free_slots}
    chosen = []
    for _ in range(count):
        tm_id = max(free, key=lambda t: (len(free[t]), t))
        chosen.append((records[tm_id], free[tm_id].pop(0)))
    return chosen


def loss_reason(record: TaskManagerRecord, now: float, heartbeat_timeout: float, heartbeat_interval: float,
                rpc_failure_threshold: int) -> str | None:
    """Why ``record`` counts as lost at ``now`` (monotonic), or None: heartbeats too long silent, or unreachable."""
    silence = now - record.last_heartbeat
    if silence > heartbeat_timeout:
        return (f"TaskManager {record.tm_id} lost: no heartbeat for {silence:.1f} s "
                f"(heartbeat.timeout {heartbeat_timeout:g} s)")
    grace = rpc_failure_threshold * heartbeat_interval
    if rpc_failure_threshold and record.disconnected_at is not None and now - record.disconnected_at > grace:
        return (f"TaskManager {record.tm_id} lost: unreachable, its control connection closed "
                f"{now - record.disconnected_at:.1f} s ago (heartbeat.rpc-failure-threshold "
                f"{rpc_failure_threshold} x heartbeat.interval {heartbeat_interval:g} s)")
    return None


def held_by_user(records: Iterable[TaskManagerRecord], user_of: Callable[[JobId], str]) -> dict[str, int]:
    """How many allocated slots the jobs of each user hold."""
    held: dict[str, int] = {}
    for record in records:
        for slot in record.slots:
            if slot.job_id is not None:
                held[user_of(slot.job_id)] = held.get(user_of(slot.job_id), 0) + 1
    return held
