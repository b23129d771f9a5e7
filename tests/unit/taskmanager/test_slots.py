"""The TaskManager's slot table: allocation, the tasks in a slot, and what freeing returns."""
import pytest

from runtime.ids import AllocationId, ExecutionAttemptId, JobId
from runtime.messages import SlotStatus
from runtime.taskmanager.slots import SlotError, TaskSlotTable

A1, A2 = AllocationId("alloc-1"), AllocationId("alloc-2")
JOB = JobId("job-1")


def test_a_slot_is_allocated_once_and_found_by_its_allocation():
    table = TaskSlotTable(2)
    slot = table.allocate(1, A1, JOB)
    assert table.allocate(1, A1, JOB) is slot, "offering the same allocation again is idempotent"
    assert table.by_allocation(A1) is slot
    with pytest.raises(SlotError, match="slot 1 is already allocated to job job-1"):
        table.allocate(1, A2, JobId("job-2"))
    with pytest.raises(SlotError, match="no slot 2: this TaskManager has 2"):
        table.allocate(2, A2, JOB)
    with pytest.raises(SlotError, match="allocation alloc-2 is not held"):
        table.by_allocation(A2)


def test_freeing_returns_the_attempts_still_running_so_the_caller_cancels_them():
    table = TaskSlotTable(2)
    table.allocate(0, A1, JOB).tasks.update({ExecutionAttemptId("a"), ExecutionAttemptId("b")})
    table.allocate(1, A2, JOB).tasks.add(ExecutionAttemptId("c"))
    assert table.free(A1) == {"a", "b"}
    assert table.report() == [SlotStatus(0, None, None), SlotStatus(1, A2, JOB)]
    with pytest.raises(SlotError):
        table.free(A1)
    assert table.free_all() == {"c"} and table.report() == [SlotStatus(0), SlotStatus(1)]
    assert table.allocate(0, A2, JOB).tasks == set(), "a freed slot comes back empty"
