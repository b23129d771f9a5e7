"""The teacher's view of a class on one cluster: every user with their jobs, the slots each holds, its
restarts and latest exception, at a glance (``GET /users/overview``, the dashboard's Users page and
``%flink users`` read it). Pure: the user table and the Dispatcher's snapshots in, the message out."""
from __future__ import annotations

from collections.abc import Mapping

from runtime.errors import last_line
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.convert import ms
from runtime.snapshots import FailureRecord, JobSummary, TaskManagerSnapshot
from runtime.users import CLUSTER_ADMIN, User


def slots_by_job(task_managers: list[TaskManagerSnapshot]) -> dict[str, int]:
    """How many slots each job holds on the registered TaskManagers."""
    held: dict[str, int] = {}
    for tm in task_managers:
        for slot in tm.slots:
            if slot.job_id is not None and tm.lost_reason is None:
                held[slot.job_id] = held.get(slot.job_id, 0) + 1
    return held


def job_info(job: JobSummary, slots: int, latest: FailureRecord | None) -> m.UserJobInfo:
    return m.UserJobInfo(jid=job.job_id, name=job.name, state=job.state.value, restarts=job.restarts,
                         parallelism=job.parallelism, slots=slots,
                         last_exception=last_line(latest.stacktrace) if latest else None,
                         last_exception_time=ms(latest.timestamp) if latest else None)


def class_overview(users: list[User], jobs: list[JobSummary], slots: Mapping[str, int],
                   latest: Mapping[str, FailureRecord | None]) -> m.ClassOverview:
    """One entry per user of the table (with or without jobs), then per other owner of a job (the cluster
    token's holder, a user since removed); each user's jobs running first, newest first."""
    by_user: dict[str, list[JobSummary]] = {}
    for job in jobs:
        by_user.setdefault(job.user, []).append(job)
    table = {u.name: u for u in users}
    names = [u.name for u in users] + sorted(n for n in by_user if n not in table)
    entries = []
    for name in names:
        own = sorted(by_user.get(name, []), key=lambda j: (j.state.is_globally_terminal, -j.start_time))
        infos = [job_info(j, slots.get(j.job_id, 0), latest.get(j.job_id)) for j in own]
        user = table.get(name)
        entries.append(m.UserOverview(
            name=name, slots=user.slots if user else None, admin=user.admin if user else name == CLUSTER_ADMIN,
            slots_held=sum(i.slots for i in infos), known=user is not None, jobs=infos))
    return m.ClassOverview(users=entries)
