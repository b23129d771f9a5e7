"""One JobManager's leadership as a pure state machine: events in, actions out, no I/O.

The JobManager feeds it what the HA services report (a lease confirmed or held by another, the store's
connection suspended, back, or its session lost) and carries out the actions it returns. It follows
Flink's rule: leadership is either held and served, or released so that another JobManager can take it.

    STANDBY --LeaseConfirmed(s)--> LEADING(s)                 serve s, recover the stored jobs
    LEADING(s) --ConnectionSuspended--> SUSPENDED(s)          stop serving, keep the jobs
    SUSPENDED(s) --Reconnected--> SUSPENDED(s)                contend now (confirm or lose)
    SUSPENDED(s) --LeaseConfirmed(s)--> LEADING(s)            serve s again: the same session, same jobs
    LEADING|SUSPENDED(s) --LeaseConfirmed(t), t != s--> LEADING(t)
                                                             revoke s's jobs, serve t, recover the jobs
    LEADING|SUSPENDED(s) --LeaseHeldByOther--> STANDBY        stop serving, revoke s's jobs
    LEADING|SUSPENDED(s) --SessionLost--> STANDBY             stop serving, revoke s's jobs, contend now
    STANDBY --Reconnected|SessionLost--> STANDBY              contend now

"Revoke" means the JobMasters of the old session stop acting at once (no deployments, checkpoints or
store writes); the jobs stay in the HA store for whichever JobManager leads next, this one included.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from runtime.ids import LeaderSessionId


class Role(str, enum.Enum):
    STANDBY = "standby"
    LEADING = "leader"
    SUSPENDED = "suspended"  # led until the store's connection dropped; serves nothing until confirmed


# -- events ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LeaseConfirmed:
    """The store says this contender leads with ``session`` (just won, renewed, or confirmed)."""
    session: LeaderSessionId


@dataclass(frozen=True)
class LeaseHeldByOther:
    """The store says another contender leads (or holds the lease until it lapses)."""


@dataclass(frozen=True)
class ConnectionSuspended:
    """The store cannot be reached, or the lease was not renewed in time: the session may survive."""


@dataclass(frozen=True)
class Reconnected:
    """The store's connection is back with the session alive: confirm the leadership before serving."""


@dataclass(frozen=True)
class SessionLost:
    """The store ended this contender's session: whatever it held (an ephemeral leader node) is gone."""


Event = LeaseConfirmed | LeaseHeldByOther | ConnectionSuspended | Reconnected | SessionLost


# -- actions --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StartServing:
    """Act as leader under ``session``; ``new`` when the session was not served before (announce it)."""
    session: LeaderSessionId
    new: bool


@dataclass(frozen=True)
class StopServing:
    """Refuse leader work (REST, registrations) from now on."""


@dataclass(frozen=True)
class RevokeJobs:
    """The JobMasters of ``session`` must stop acting; the HA store keeps their jobs."""
    session: LeaderSessionId


@dataclass(frozen=True)
class RecoverJobs:
    """Resume every job the HA store holds, under ``session``."""
    session: LeaderSessionId


@dataclass(frozen=True)
class ContendNow:
    """Ask the store at once rather than at the next renewal."""


Action = StartServing | StopServing | RevokeJobs | RecoverJobs | ContendNow


@dataclass(frozen=True)
class Leadership:
    """The state: a role and the session this JobManager leads (or led, while suspended) with."""
    role: Role = Role.STANDBY
    session: LeaderSessionId | None = None

    @property
    def serving(self) -> bool:
        return self.role is Role.LEADING


STANDBY = Leadership()


def advance(state: Leadership, event: Event) -> tuple[Leadership, list[Action]]:
    """The next state and what to do, for one event: every event is legal in every state."""
    held = state.session if state.role is not Role.STANDBY else None
    if isinstance(event, LeaseConfirmed):
        if held == event.session:
            return Leadership(Role.LEADING, held), [StartServing(held, new=False)]
        revoke: list[Action] = [StopServing(), RevokeJobs(held)] if held is not None else []
        return Leadership(Role.LEADING, event.session), [*revoke, StartServing(event.session, new=True),
                                                         RecoverJobs(event.session)]
    if isinstance(event, LeaseHeldByOther):
        return STANDBY, ([StopServing(), RevokeJobs(held)] if held is not None else [])
    if isinstance(event, ConnectionSuspended):
        if state.role is Role.LEADING:
            return Leadership(Role.SUSPENDED, held), [StopServing()]
        return state, []
    if isinstance(event, Reconnected):
        return state, [ContendNow()]
    if isinstance(event, SessionLost):
        return STANDBY, ([StopServing(), RevokeJobs(held)] if held is not None else []) + [ContendNow()]
    raise TypeError(f"not a leadership event: {event!r}")
