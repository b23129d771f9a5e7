"""The JobManager's side of leader election: contend through the HA services, feed what they say to
runtime.ha.leadership's state machine, and carry out the actions it returns.

A loop asks the store every third of ``high-availability.lease-duration`` (at once after a reconnect or
a lost session) whether this JobManager leads, and refreshes the leader and the member list that REST
answers from, so no request handler waits on the store. The loop never ends on an error: whatever a
call raises counts as an unreachable store (the connection is suspended) and the next round asks again.
A lease not confirmed within one lease duration also suspends serving, so a paused process that wakes
up never acts on a lease it may have lost: :meth:`holds_lease` (what the fences of its writes and its
acting timers ask first) is false from the moment the lease ran out on this process's monotonic clock,
whichever callback runs first after the pause. Runs on the JobManager's loop; store calls go to threads.

Fault injection (``cluster.fault-injection.enabled``) can :meth:`hold` the election for a while: rounds
and the store's connection events wait, as in a JobManager woken from a pause whose timers run before
its election notices the lost lease. What it writes meanwhile is refused by its fences.
"""
from __future__ import annotations

import asyncio
import logging
import math
import os
import time
from typing import Protocol

from runtime.checkpoint import trace
from runtime.ha import leadership as lead
from runtime.ha.services import HaServices, LeaderInfo
from runtime.ids import LeaderSessionId

log = logging.getLogger(__name__)


class LeadershipTarget(Protocol):
    """What the JobManager does when leadership moves (its Dispatcher and ResourceManager)."""

    def leadership_granted(self, session: LeaderSessionId, new: bool) -> None: ...

    def revoke_jobs(self, session: LeaderSessionId) -> None: ...

    def recover_jobs(self, session: LeaderSessionId) -> None: ...


class LeaderElection:
    def __init__(self, ha: HaServices, contender_id: str, target: LeadershipTarget):
        self.ha = ha
        self.contender_id = contender_id
        self.address = ""  # this JobManager's REST address, known once it listens
        self.target = target
        self.state = lead.STANDBY
        self.lease_until = 0.0  # monotonic: serving stops at this time unless the lease is confirmed again
        self._read_leader: LeaderInfo | None = None  # as last read from the store
        self.members: list[dict] = []
        self._loop_task: asyncio.Task | None = None
        self._wake = asyncio.Event()
        self._held_until = 0.0  # monotonic: fault injection holds rounds and events back until then
        self._held: list[lead.Event] = []
        self._round_started = time.time()  # wall clock: the trace says a session led from the round that won it

    @property
    def serving(self) -> bool:
        return self.state.serving and time.monotonic() < self.lease_until

    @property
    def session(self) -> LeaderSessionId | None:
        return self.state.session

    def holds_lease(self, session: LeaderSessionId) -> bool:
        """True while this JobManager serves under ``session`` (the fences' lease check; any thread)."""
        return self.state.session == session and self.serving

    @property
    def known_leader(self) -> LeaderInfo | None:
        """The leader as last read from the store; never this JobManager while it does not serve."""
        leader = self._read_leader
        if leader is not None and leader.contender_id == self.contender_id and not self.serving:
            return None
        return leader

    @known_leader.setter
    def known_leader(self, leader: LeaderInfo | None) -> None:
        self._read_leader = leader

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self, address: str) -> None:
        self.address = address
        if self.ha.lease_duration is None:  # the only JobManager: it leads for good
            self._confirmed(self.ha.try_lead(self.contender_id, self.address), math.inf)
            self.ha.announce(self.contender_id, self.address, os.getpid())
            self.known_leader, self.members = self._read_view()
            return
        loop = asyncio.get_running_loop()
        self.ha.watch_connection(lambda event: loop.call_soon_threadsafe(self.handle, event))
        self._loop_task = loop.create_task(self._contend())

    def stop(self) -> None:
        """Stop contending; a leader resigns so a standby need not wait for the lease to lapse."""
        if self._loop_task is None:
            return
        self._loop_task.cancel()
        if self.serving:
            try:
                self.ha.resign(self.state.session)
            except OSError as err:
                log.warning("cannot resign the leadership: %s", err)

    def hold(self, seconds: float) -> None:
        """Fault injection: hold rounds and connection events back for ``seconds`` (then handle them); 0
        ends a hold at once."""
        self._held_until = time.monotonic() + seconds
        log.warning("fault injection: leader election of %s held for %g s", self.contender_id, seconds)
        asyncio.get_running_loop().call_later(seconds, self._release)

    def _release(self) -> None:
        if time.monotonic() < self._held_until:
            return  # a later, longer hold
        held, self._held = self._held, []
        for event in held:
            self.handle(event)
        self._wake.set()

    # -- the state machine and its actions ---------------------------------------------------
    def handle(self, event: lead.Event) -> None:
        if time.monotonic() < self._held_until:
            self._held.append(event)
            return
        before = self.state
        self.state, actions = lead.advance(self.state, event)
        if self.state != before:
            log.info("leadership of %s: %s -> %s on %s", self.contender_id, before.role.value,
                     self.state.role.value, type(event).__name__)
        for action in actions:
            self._execute(action)

    def _execute(self, action: lead.Action) -> None:
        if isinstance(action, lead.StartServing):
            self.known_leader = LeaderInfo(self.contender_id, self.address, action.session)
            if action.new:
                trace.record("leading", session=action.session, contender=self.contender_id, t=self._round_started)
            self.target.leadership_granted(action.session, action.new)
        elif isinstance(action, lead.StopServing):
            self.lease_until = 0.0
        elif isinstance(action, lead.RevokeJobs):
            self.target.revoke_jobs(action.session)
        elif isinstance(action, lead.RecoverJobs):
            self.target.recover_jobs(action.session)
        elif isinstance(action, lead.ContendNow):
            self._wake.set()

    def _confirmed(self, session: LeaderSessionId | None, lease_until: float) -> None:
        if session is None:
            self.handle(lead.LeaseHeldByOther())
            return
        self.lease_until = lease_until  # set first: serving resumes as the event is handled
        self.handle(lead.LeaseConfirmed(session))

    # -- contending ---------------------------------------------------------------------------
    async def _contend(self) -> None:
        interval = self.ha.lease_duration / 3
        while True:
            try:
                await self._round()
            except asyncio.CancelledError:
                raise
            except Exception as err:  # noqa: BLE001 - the loop outlives any failure of the store
                log.warning("leader election round failed (the HA store is unreachable?): %s", err)
                self.handle(lead.ConnectionSuspended())
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), interval)
            except asyncio.TimeoutError:
                pass

    async def _round(self) -> None:
        if time.monotonic() < self._held_until:
            return
        if self.state.serving and time.monotonic() >= self.lease_until:
            log.warning("lease of leader session %s not confirmed for %.1f s past its end (a pause?): serving stops "
                        "until the HA store confirms it", self.state.session, time.monotonic() - self.lease_until)
            self.handle(lead.ConnectionSuspended())  # not confirmed in time: stop before it may be lost
        asked_at, self._round_started = time.monotonic(), time.time()
        session, self.known_leader, self.members = await asyncio.get_running_loop().run_in_executor(None, self._ask)
        self._confirmed(session, asked_at + self.ha.lease_duration)

    def _ask(self) -> tuple[LeaderSessionId | None, LeaderInfo | None, list[dict]]:
        """Contend, say this JobManager is alive, and read who leads and who lives (blocking: a thread)."""
        session = self.ha.try_lead(self.contender_id, self.address)
        self.ha.announce(self.contender_id, self.address, os.getpid())
        return (session, *self._read_view())

    def _read_view(self) -> tuple[LeaderInfo | None, list[dict]]:
        return self.ha.leader(), self.ha.members()
