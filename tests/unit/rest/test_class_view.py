"""The teacher's view, pure: users with their jobs, slots held, restarts and latest exceptions."""
from __future__ import annotations

from runtime.ids import AllocationId, JobId
from runtime.jobmanager.rest.class_view import class_overview, slots_by_job
from runtime.jobmanager.rest.fields import encode
from runtime.snapshots import FailureRecord, JobSummary, SlotSnapshot, TaskManagerSnapshot
from runtime.states import JobStatus
from runtime.users import UserTable

A1, A2, B1, T1 = (JobId(c * 32) for c in "12ab")


def summary(job_id, name, user, state=JobStatus.RUNNING, start=100.0, restarts=0):
    return JobSummary(job_id, name, state, start, None, start, 2, restarts, {}, 0.0, False, user)


def task_manager(tm_id, jobs, lost=None):
    slots = tuple(SlotSnapshot(i, AllocationId(f"x{i}") if j else None, j, "", ()) for i, j in enumerate(jobs))
    return TaskManagerSnapshot(tm_id, "h", 1, 1, "local", len(jobs), 0, slots, 0.0, 0.1, lost)


def test_every_user_with_their_jobs_slots_restarts_and_latest_exception():
    table, _ = UserTable().add("alice", 2, False)
    table, _ = table.add("bob", 1, False)
    table, _ = table.add("teacher", None, True)
    jobs = [summary(A1, "old", "alice", JobStatus.FAILED, start=50.0), summary(A2, "clicks", "alice", restarts=3),
            summary(B1, "orders", "bob"), summary(T1, "demo", "admin")]
    slots = slots_by_job([task_manager("tm-1", [A2, A2, B1]), task_manager("tm-2", [B1], lost="gone")])
    failure = FailureRecord("ValueError", "Traceback...\nValueError: bad row", 123.0, None, None, None, 3)
    view = encode(class_overview(sorted(table.users.values(), key=lambda u: u.name), jobs, slots, {A2: failure}))
    alice, bob, teacher, admin = view["users"]
    assert [(u["name"], u["slots"], u["admin"], u["known"]) for u in view["users"]] == [
        ("alice", 2, False, True), ("bob", 1, False, True), ("teacher", None, True, True), ("admin", None, True, False)]
    assert [j["name"] for j in alice["jobs"]] == ["clicks", "old"], "running first"
    assert alice["slots-held"] == 2 and alice["jobs"][0]["restarts"] == 3
    assert alice["jobs"][0]["last-exception"] == "ValueError: bad row" and alice["jobs"][0]["last-exception-time"] == 123000
    assert bob["slots-held"] == 1, "a lost TaskManager's slots are held by nobody"
    assert teacher["jobs"] == [] and [j["jid"] for j in admin["jobs"]] == [T1]
