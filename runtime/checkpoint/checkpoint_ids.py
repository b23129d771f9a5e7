"""Which checkpoint ids a JobMaster may use: pure bookkeeping, no I/O (the lifecycle state machine holds one).

Without an HA store the JobMaster numbers its checkpoints itself, after the checkpoint it restored. With
one, ids come from the job's checkpoint-id counter in the store (Flink's CheckpointIDCounter): the
coordinator reserves a few ahead with one fenced, conditional update, and every id it uses was reserved
by this leader alone. A leader that takes over reserves after every id its predecessor reserved, so the
two never share a ``chk-<n>`` directory, even when the old one wakes up from a pause and carries on with
a checkpoint it had started::

    ids from the store     take()                 reserved ids left       the lowest one (and reserve more
                                                                          when fewer than REFILL_BELOW remain)
                                                  none left               None: the trigger waits or is refused
                           IdsReserved(first, n)  keep first..first+n-1 (those not below the floor)
                           ReserveFailed          the next trigger says why no id is there
                           raise_floor(n)         drop reserved ids below n (a restored checkpoint's successor)
"""
from __future__ import annotations

from runtime.checkpoint.lifecycle_events import ReserveIds

RESERVE_BATCH = 2  # ids reserved with one update of the store's counter
REFILL_BELOW = 2  # reserve more once fewer are left than this, so that two triggers in a row find one


class CheckpointIds:
    """The ids this JobMaster may give its next checkpoints, lowest first."""

    def __init__(self, from_store: bool):
        self.from_store = from_store
        self.floor = 1  # no id below it is used: ids used, restored or started from are below it
        self.reserved: list[int] = []  # from the store, not used yet
        self.reserving = False  # a reservation is in flight
        self.last_error: str | None = None  # why the last reservation failed

    def take(self) -> int | None:
        """The next id, or None while the store has given none."""
        if not self.from_store:
            taken = self.floor
        elif self.reserved:
            taken = self.reserved.pop(0)
        else:
            return None
        self.floor = taken + 1
        return taken

    def wanted(self) -> ReserveIds | None:
        """A reservation to start now, if ids run low and none is in flight."""
        if not self.from_store or self.reserving or len(self.reserved) >= REFILL_BELOW:
            return None
        self.reserving = True
        return ReserveIds(RESERVE_BATCH, self.floor)

    def reserved_ids(self, first: int, count: int) -> None:
        self.reserving = False
        self.last_error = None
        self.reserved = sorted({*self.reserved, *range(max(first, self.floor), first + count)})

    def reservation_failed(self, error: str) -> None:
        self.reserving = False
        self.last_error = error

    def raise_floor(self, at_least: int) -> None:
        """Ids below ``at_least`` are never used: a checkpoint with an id below it is restored or retained."""
        self.floor = max(self.floor, at_least)
        self.reserved = [i for i in self.reserved if i >= self.floor]

    def missing_reason(self) -> str:
        why = f" (the last reservation failed: {self.last_error})" if self.last_error else ""
        return f"no checkpoint id is reserved in the HA store yet{why}; retry shortly"
