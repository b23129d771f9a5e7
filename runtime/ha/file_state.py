"""What file HA's JobManagers agree on, and every change to it, as pure functions: no I/O, no clock.

One document holds the leader's lease and every entry a leader writes under its fence: the jobs whose
graphs are stored, each job's checkpoint pointer (the retained checkpoints, the latest last) and its
checkpoint-id counter, and the cluster's user table. runtime.ha.file keeps it in a compare-and-set
register (runtime.ha.file_register) and applies these functions to the version it read; a change made on
a version that is no longer the newest is never written, so a check made here (does this session still
hold the lease?) holds at the moment the change lands. A function returns the next document, or None
when nothing changes.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from runtime.ids import JobId, LeaderSessionId


@dataclass(frozen=True)
class Lease:
    contender_id: str
    address: str
    session_id: LeaderSessionId
    expires: float  # wall clock, seconds


@dataclass(frozen=True)
class StoreState:
    lease: Lease | None = None
    jobs: tuple[JobId, ...] = ()  # jobs whose graph is stored and that have not ended
    checkpoints: dict[JobId, dict] = field(default_factory=dict)  # job -> {"directory", "retained"}
    counters: dict[JobId, int] = field(default_factory=dict)  # job -> the next id no leader has reserved
    users: dict | None = None  # the cluster's user table (runtime.users), None before any user was added

    @classmethod
    def from_json(cls, data: dict) -> StoreState:
        lease = data.get("lease")
        return cls(Lease(lease["contender_id"], lease["address"], LeaderSessionId(lease["session_id"]),
                         float(lease["expires"])) if lease else None,
                   tuple(JobId(j) for j in data.get("jobs", ())),
                   {JobId(j): p for j, p in data.get("checkpoints", {}).items()},
                   {JobId(j): int(n) for j, n in data.get("counters", {}).items()}, data.get("users"))

    def to_json(self) -> dict:
        lease = self.lease
        return {"lease": {"contender_id": lease.contender_id, "address": lease.address,
                          "session_id": str(lease.session_id), "expires": lease.expires} if lease else None,
                "jobs": list(self.jobs), "checkpoints": dict(self.checkpoints), "counters": dict(self.counters),
                "users": self.users}


# -- the lease ------------------------------------------------------------------------------------
def valid_lease(state: StoreState, now: float) -> Lease | None:
    """The lease while it has not expired at ``now``."""
    return state.lease if state.lease is not None and state.lease.expires > now else None


def take_lease(state: StoreState, contender_id: str, address: str, now: float, duration: float,
               fresh: LeaderSessionId) -> tuple[StoreState | None, LeaderSessionId | None]:
    """Take or renew the lease for ``contender_id``: (next document, its session), or (None, None) while
    another holds a valid lease. A lease renewed in time keeps its session; one taken (or retaken after it
    lapsed) gets ``fresh``, so whatever the earlier holder does under its old session is fenced off."""
    lease = valid_lease(state, now)
    if lease is not None and lease.contender_id != contender_id:
        return None, None
    session = lease.session_id if lease is not None else fresh
    return replace(state, lease=Lease(contender_id, address, session, now + duration)), session


def resign(state: StoreState, session: LeaderSessionId) -> StoreState | None:
    """Drop the lease if ``session`` holds it, so a standby need not wait for it to lapse."""
    if state.lease is None or state.lease.session_id != session:
        return None
    return replace(state, lease=None)


def leads(state: StoreState, session: LeaderSessionId, now: float) -> bool:
    lease = valid_lease(state, now)
    return lease is not None and lease.session_id == session


def refusal(state: StoreState, session: LeaderSessionId) -> str | None:
    """Why ``session`` may not change the fenced entries, or None: it must hold the lease (lapsed or not:
    nobody else has taken it, or the lease would name them)."""
    if state.lease is not None and state.lease.session_id == session:
        return None
    holder = state.lease.address if state.lease is not None else "nobody"
    return f"leader session {session} no longer holds the lease (held by {holder})"


# -- fenced entries (the caller has checked refusal() on the same document) ----------------------
def with_job(state: StoreState, job_id: JobId) -> StoreState | None:
    return None if job_id in state.jobs else replace(state, jobs=(*state.jobs, job_id))


def with_pointer(state: StoreState, job_id: JobId, directory: str, retained: tuple[str, ...]) -> StoreState:
    pointer = {"directory": directory, "retained": list(retained or (directory,))}
    return replace(state, checkpoints={**state.checkpoints, job_id: pointer})


def with_ids_reserved(state: StoreState, job_id: JobId, count: int, at_least: int) -> tuple[StoreState, int]:
    """Reserve ``count`` ids for ``job_id``: (next document, the first id), never below ``at_least`` nor
    below any id reserved before."""
    first = max(state.counters.get(job_id, 1), at_least)
    return replace(state, counters={**state.counters, job_id: first + count}), first


def with_users(state: StoreState, table: dict) -> StoreState:
    return replace(state, users=table)


def without_job(state: StoreState, job_id: JobId) -> StoreState | None:
    """The job ended: its graph, pointer and counter go."""
    if job_id not in state.jobs and job_id not in state.checkpoints and job_id not in state.counters:
        return None
    return replace(state, jobs=tuple(j for j in state.jobs if j != job_id),
                   checkpoints={j: p for j, p in state.checkpoints.items() if j != job_id},
                   counters={j: n for j, n in state.counters.items() if j != job_id})
