"""Per-user slot quotas: how many slots each user's unfinished jobs may hold together.

Pure bookkeeping, kept by the ResourceManager (the place slots are allocated) on the JobManager's loop.
A job reserves the slots it needs (its highest parallelism, as slot sharing makes it) when it is
submitted and keeps them reserved until it ends, restarts included: a submission that would take its
user past the quota is refused then, with a message naming the quota, what the user's jobs hold and what
the job needs, instead of waiting for slots the user may not have. Jobs a new leader resumes are
reserved without the check (they were admitted before). Quotas come from the user table
(runtime.users); a user without one, and the cluster token's holder, are not limited.
"""
from __future__ import annotations

from dataclasses import dataclass

from runtime.errors import SubmissionError
from runtime.ids import JobId


class QuotaExceeded(SubmissionError):
    """The job would take its user past their slot quota."""


@dataclass(frozen=True)
class Reservation:
    user: str
    job_name: str
    slots: int


class SlotQuotas:
    """Each user's quota and the slots each unfinished job reserves."""

    def __init__(self) -> None:
        self.quotas: dict[str, int | None] = {}
        self.reservations: dict[JobId, Reservation] = {}

    def admit(self, job_id: JobId, user: str, job_name: str, slots: int, check: bool = True) -> None:
        """Reserve ``slots`` for the job; QuotaExceeded (with ``check``) when its user's jobs would then hold
        more than the user's quota. A job already reserved keeps its reservation (a retried submission)."""
        if job_id in self.reservations:
            return
        quota = self.quotas.get(user)
        if check and quota is not None and self.held(user) + slots > quota:
            raise QuotaExceeded(self.refusal(user, job_name, slots, quota))
        self.reservations[job_id] = Reservation(user, job_name, slots)

    def release(self, job_id: JobId) -> None:
        """The job ended (or left this leader): its slots no longer count against its user."""
        self.reservations.pop(job_id, None)

    def held(self, user: str) -> int:
        return sum(r.slots for r in self.reservations.values() if r.user == user)

    def user_of(self, job_id: JobId) -> str | None:
        found = self.reservations.get(job_id)
        return found.user if found else None

    def refusal(self, user: str, job_name: str, slots: int, quota: int) -> str:
        jobs = [f"'{r.job_name}' {r.slots}" for r in self.reservations.values() if r.user == user]
        holding = f"holds {self.held(user)} ({', '.join(jobs)})" if jobs else "holds none"
        return (f"slot quota exceeded: user '{user}' may hold {quota} slot{'s' * (quota != 1)} and {holding}; "
                f"job '{job_name}' needs {slots} more. Cancel one of their jobs, lower the job's parallelism, "
                "or ask an admin for a larger quota")
