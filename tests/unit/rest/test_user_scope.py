"""Users in the REST layer, against the fake Dispatcher whose one job is the admin's: a user's calls on
another's job are 404 as for a job that does not exist, lists and counts leave it out, a submission is
stamped with the caller, and the cluster's own operations are 403 for users (rest.scope)."""
from __future__ import annotations

import json

import pytest

from runtime.ids import AllocationId, JobId
from runtime.jobmanager.gateways import UnknownJob
from runtime.jobmanager.rest.scope import ScopedGateway
from runtime.snapshots import SlotSnapshot, TaskManagerSnapshot
from runtime.users import HIDDEN_JOB, HIDDEN_JOB_NAME, Caller
from tests.unit.rest.conftest import JOB, STUDENT_TOKEN, VERTEX, FakeDispatcher

JOB_PATHS = ("", "/status", "/exceptions", "/plan", "/checkpoints", "/checkpoints/config", f"/vertices/{VERTEX}",
             f"/vertices/{VERTEX}/watermarks", "/savepoints/" + "c" * 32, "/metrics", f"/vertices/{VERTEX}/metrics",
             "/config")


def answer(server, method, path, body=None, token=STUDENT_TOKEN):
    status, _, raw = server.call(method, path, json.dumps(body).encode() if body is not None else None, token=token)
    return status, json.loads(raw) if raw else {}


@pytest.mark.parametrize("path", JOB_PATHS)
def test_another_users_job_is_404_as_if_it_did_not_exist(server, path):
    theirs = answer(server, "GET", f"/v1/jobs/{JOB}{path}")
    missing = answer(server, "GET", f"/v1/jobs/{'f' * 32}{path}")
    assert theirs[0] == 404 and theirs[1]["errors"] == [f"Job {JOB} not found"], theirs
    assert missing[0] == 404
    assert answer(server, "GET", f"/v1/jobs/{JOB}{path}", token=server.admin_token)[0] != 404, "the admin sees it"


@pytest.mark.parametrize("path", ["/checkpoints/details/1", f"/checkpoints/details/1/subtasks/{VERTEX}"])
def test_another_users_checkpoint_details_are_those_of_a_job_that_does_not_exist(server, path):
    theirs = answer(server, "GET", f"/v1/jobs/{JOB}{path}")
    assert theirs[0] == 404 and theirs[1]["errors"] == [f"Job {JOB} not found"], theirs
    admin = answer(server, "GET", f"/v1/jobs/{JOB}{path}", token=server.admin_token)
    assert admin[1]["errors"] != [f"Job {JOB} not found"], "the admin reaches the job, whose checkpoint 1 is unknown"


def test_a_user_can_neither_cancel_savepoint_stop_nor_push_to_another_users_job(server):
    cancelled = list(server.dispatcher.cancelled)
    for method, path, body in (("PATCH", f"/jobs/{JOB}?mode=cancel", None), ("POST", f"/jobs/{JOB}/savepoints", {}),
                               ("POST", f"/jobs/{JOB}/stop", {}), ("POST", f"/jobs/{JOB}/checkpoints", {}),
                               ("POST", f"/jobs/{JOB}/sources/s/rows", {"rows": [{"a": 1}]})):
        status, body_out = answer(server, method, path, body)
        assert status == 404 and body_out["errors"] == [f"Job {JOB} not found"], (path, status, body_out)
    assert server.dispatcher.cancelled == cancelled


def test_lists_and_counts_leave_other_users_jobs_out(server):
    assert answer(server, "GET", "/jobs/overview")[1] == {"jobs": []}
    assert answer(server, "GET", "/jobs")[1] == {"jobs": []}
    assert answer(server, "GET", "/overview")[1]["jobs-running"] == 0
    assert answer(server, "GET", "/overview", token=server.admin_token)[1]["jobs-running"] == 1


def test_a_submission_is_stamped_with_the_caller_whatever_it_claims(server):
    status, _ = answer(server, "POST", "/jobs", {"job_graph": {"name": "g"}, "user": "admin"})
    assert status == 202 and server.dispatcher.submitted[-1]["user"] == "student"


@pytest.mark.parametrize("method, path, body", [
    ("POST", "/taskmanagers/tm-1/kill", None), ("POST", "/jobmanager/kill", None),
    ("POST", "/jobmanager/hold-election?seconds=1", None), ("POST", "/savepoint-disposal", {"savepoint-path": "/x"}),
    ("POST", "/users", {"name": "mallory", "admin": True}), ("DELETE", "/users/student", None),
    ("GET", "/jobmanager/logs", None), ("GET", "/jobmanager/log", None), ("GET", "/jobmanager/stdout", None),
    ("GET", "/savepoints", None), ("GET", "/savepoints/details?path=/x", None),
    ("POST", "/savepoints/resume", {"path": "/x"}), ("GET", "/taskmanagers/tm-1/spark-ui/", None),
    ("GET", "/users/overview", None)])
def test_the_clusters_own_operations_are_403_for_users(server, method, path, body):
    status, out = answer(server, method, path, body)
    assert status == 403 and "for admins" in out["errors"][0] and "'student'" in out["errors"][0], (status, out)


def test_other_users_slots_show_taken_without_their_job_and_their_events_are_left_out():
    dispatcher = FakeDispatcher()
    mine, theirs = JobId("1" * 32), JOB
    owners = {mine: "student", theirs: "admin"}

    def job_owner(job_id):
        if job_id not in owners:
            raise UnknownJob(job_id)
        return owners[job_id]
    dispatcher.job_owner = job_owner
    scope = ScopedGateway(dispatcher, Caller("student", False))
    slots = (SlotSnapshot(0, AllocationId("x"), theirs, "secret-job", ("Source",)),
             SlotSnapshot(1, AllocationId("y"), mine, "my-job", ("Map",)), SlotSnapshot(2, None, None, "", ()))
    dispatcher.request_task_managers = lambda: [TaskManagerSnapshot("tm-1", "h", 1, 2, "local", 3, 1, slots, 0.0, 0.1)]
    shown = scope.request_task_managers()[0].slots
    assert shown[0] == SlotSnapshot(0, AllocationId("x"), HIDDEN_JOB, HIDDEN_JOB_NAME, ())
    assert shown[1:] == slots[1:]
    allocated = {"type": "SlotAllocated", "tm_id": "tm-1", "slot_index": 0, "allocation_id": "x",
                 "job_id": theirs, "job_name": "secret-job"}
    assert scope.event(allocated) == {**allocated, "job_id": HIDDEN_JOB, "job_name": HIDDEN_JOB_NAME}
    assert scope.event({"type": "JobStatusChanged", "job_id": theirs, "name": "secret-job"}) is None
    assert scope.event({"type": "JobStatusChanged", "job_id": mine, "name": "my-job"}) is not None
    assert scope.event({"type": "JobStatusChanged", "job_id": "f" * 32}) is None, "an unknown job is nobody's"
    status = {"type": "TaskManagerStatusReported", "status": {"tm_id": "tm-1", "log_lines": ["secret-job ..."]}}
    assert scope.event(status)["status"]["log_lines"] == []
    admin = ScopedGateway(dispatcher, Caller("teacher", True))
    assert admin.event(allocated) == allocated and admin.request_task_managers()[0].slots == slots
