"""A TaskManager's slots: which allocation (job) holds each, and which task attempts run in it."""
from __future__ import annotations

from dataclasses import dataclass, field

from runtime.errors import ClusterError
from runtime.ids import AllocationId, ExecutionAttemptId, JobId
from runtime.messages import SlotStatus


class SlotError(ClusterError):
    """A request that does not fit the slot table (busy slot, unknown allocation)."""


@dataclass
class TaskSlot:
    """One slot: the allocation (and so the job) holding it, and the task attempts running in it."""
    index: int
    allocation_id: AllocationId | None = None
    job_id: JobId | None = None
    tasks: set[ExecutionAttemptId] = field(default_factory=set)


class TaskSlotTable:
    """The slots of this TaskManager; the ResourceManager's table is the cluster-wide view of the same.

    Runs on the TaskManager's loop. Errors are SlotErrors naming the slot or allocation."""

    def __init__(self, count: int):
        self.slots = [TaskSlot(i) for i in range(count)]

    def allocate(self, index: int, allocation_id: AllocationId, job_id: JobId) -> TaskSlot:
        """Give slot ``index`` to an allocation (again, if it already holds it: requests may repeat)."""
        if not 0 <= index < len(self.slots):
            raise SlotError(f"no slot {index}: this TaskManager has {len(self.slots)}")
        slot = self.slots[index]
        if slot.allocation_id not in (None, allocation_id):
            raise SlotError(f"slot {index} is already allocated to job {slot.job_id}")
        slot.allocation_id, slot.job_id = allocation_id, job_id
        return slot

    def by_allocation(self, allocation_id: AllocationId) -> TaskSlot:
        """The slot an allocation holds; where a deployment's tasks go."""
        for slot in self.slots:
            if slot.allocation_id == allocation_id:
                return slot
        raise SlotError(f"allocation {allocation_id} is not held by this TaskManager")

    def free(self, allocation_id: AllocationId) -> set[ExecutionAttemptId]:
        """Release the slot; returns the attempts still running in it (the caller cancels them)."""
        slot = self.by_allocation(allocation_id)
        running = set(slot.tasks)
        slot.allocation_id, slot.job_id, slot.tasks = None, None, set()
        return running

    def free_all(self) -> set[ExecutionAttemptId]:
        """Release every slot (the JobManager is gone); returns the attempts to cancel."""
        running: set[ExecutionAttemptId] = set()
        for slot in self.slots:
            if slot.allocation_id is not None:
                running |= self.free(slot.allocation_id)
        return running

    @property
    def in_use(self) -> bool:
        """Whether any slot is allocated to a job."""
        return any(slot.allocation_id is not None for slot in self.slots)

    def report(self) -> list[SlotStatus]:
        """Every slot's allocation, for registration and heartbeats (a new leader learns what is in use)."""
        return [SlotStatus(s.index, s.allocation_id, s.job_id) for s in self.slots]
