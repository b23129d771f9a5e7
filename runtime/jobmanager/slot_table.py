"""The ResourceManager's table: one record per registered TaskManager, with its slots and what it
last said (heartbeat, connection, whether its Spark session is up). Plain data; the ResourceManager
(runtime.jobmanager.resource_manager) decides with it."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from runtime.ids import AllocationId, JobId, TaskManagerId
from runtime.jobmanager.gateways import ControlConnection


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

    @property
    def free_slots(self) -> list[Slot]:
        return [s for s in self.slots if s.free]

    @property
    def ready_free_slots(self) -> list[Slot]:
        """The free slots that can be handed out now (none while its Spark starts)."""
        return self.free_slots if self.ready else []
