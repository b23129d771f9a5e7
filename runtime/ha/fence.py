"""A JobManager's fence for writes and deletes in checkpoint and HA storage: its leader session,
confirmed right before each operation (runtime.checkpoint.fencing asks it).

Two checks, cheapest first. The lease: the JobManager's own clock says its last confirmation is recent
enough that no successor can lead yet (after a pause longer than the lease it is not, whatever timer
wakes first). Then the HA store: it still names this session the leader's (a file read, or a ZooKeeper
read that also checks the leader znode belongs to this client's live session). Then the lease again, in
case the round trip itself was paused. Writes made on the JobManager's loop (collected rows, pushed
rows) check the lease alone: a store round trip there would stall every job, and a valid lease already
means no other JobManager leads.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

from runtime.ids import LeaderSessionId


class LeaseHolder(Protocol):
    """What the fence needs of the JobManager's leader election (no I/O, any thread)."""

    def holds_lease(self, session: LeaderSessionId) -> bool:
        """True while this JobManager serves as leader under ``session`` with a lease confirmed recently
        enough to still be valid."""
        ...


class LeadershipStore(Protocol):
    """What the fence asks of the HA store (a round trip; OSError when the store does not answer)."""

    def leads(self, session: LeaderSessionId) -> bool: ...


def leader_refusal(session: LeaderSessionId, lease_held: bool, store_leads: bool | None = None,
                   store_error: str | None = None) -> str | None:
    """Why a JobManager of ``session`` may not write now, or None: the decision, pure. ``store_leads``
    None: the store was not asked (or could not answer: ``store_error``)."""
    if not lease_held:
        return (f"leader session {session} holds no confirmed lease (lost it, or not confirmed in time: "
                "the process may have been paused)")
    if store_error is not None:
        return f"the HA store cannot confirm leader session {session}: {store_error}"
    if store_leads is False:
        return f"the HA store no longer names leader session {session} the leader"
    return None


@dataclass(frozen=True)
class LeaderFence:
    """The fence of everything a JobManager writes for its jobs under one leader session."""
    store: LeadershipStore
    lease: LeaseHolder
    session: LeaderSessionId
    ask_store: bool = True

    @property
    def token(self) -> dict[str, Any]:
        return {"role": "jobmanager", "session": self.session}

    def refusal(self) -> str | None:
        if not self.lease.holds_lease(self.session) or not self.ask_store:
            return leader_refusal(self.session, self.lease.holds_lease(self.session))
        try:
            leads = self.store.leads(self.session)
        except OSError as err:
            return leader_refusal(self.session, True, None, str(err) or type(err).__name__)
        return leader_refusal(self.session, self.lease.holds_lease(self.session), leads)

    def lease_only(self) -> LeaderFence:
        """The same fence without the store round trip, for writes made on the JobManager's loop."""
        return replace(self, ask_store=False)

    def leading(self) -> bool:
        """Whether the lease still holds (no I/O): timers that act check it first."""
        return self.lease.holds_lease(self.session)
