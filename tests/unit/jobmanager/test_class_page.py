"""The teacher's view without a server or a browser: the dashboard's Users table and its cancel choices, and
the rows '%flink users' shows, from a class overview as GET /users/overview answers it."""
from __future__ import annotations

from kernel_magics.commands.users import rows_of
from runtime.jobmanager.dashboard.class_page import NONE, chosen, running_jobs, users_table

OVERVIEW = {"users": [
    {"name": "alice", "slots": 2, "admin": False, "slots-held": 2, "known": True, "jobs": [
        {"jid": "a" * 32, "name": "clicks <b>", "state": "RUNNING", "restarts": 3, "parallelism": 2, "slots": 2,
         "last-exception": "ValueError: bad row", "last-exception-time": 1_700_000_000_000},
        {"jid": "b" * 32, "name": "old", "state": "FAILED", "restarts": 0, "parallelism": 1, "slots": 0,
         "last-exception": None, "last-exception-time": None}]},
    {"name": "bob", "slots": None, "admin": False, "slots-held": 0, "known": True, "jobs": []},
    {"name": "admin", "slots": None, "admin": True, "slots-held": 1, "known": False, "jobs": [
        {"jid": "c" * 32, "name": "demo", "state": "RESTARTING", "restarts": 1, "parallelism": 1, "slots": 1}]}]}


def test_the_users_table_shows_each_users_jobs_slots_restarts_and_latest_exception_escaped():
    table = users_table(OVERVIEW)
    assert "data-name='users'" in table and "clicks &lt;b&gt;" in table and "clicks <b>" not in table
    assert "2 of 2" in table and "0 of no limit" in table and "ValueError: bad row" in table
    assert "no jobs" in table and "(not in the user table)" in table and "(admin)" in table


def test_only_jobs_not_yet_ended_can_be_chosen_for_cancel():
    choices = running_jobs(OVERVIEW)
    assert choices == ["a" * 32 + "  alice: clicks <b>", "c" * 32 + "  admin: demo"]
    assert [chosen(c) for c in choices] == ["a" * 32, "c" * 32] and chosen(NONE) == ""


def test_flink_users_shows_one_row_per_job_and_one_per_user_without_jobs():
    rows = rows_of(OVERVIEW)
    assert [(r["user"], r["job"], r["slots held"], r["quota"]) for r in rows] == [
        ("alice", "clicks <b>", 2, 2), ("alice", "old", 2, 2), ("bob", None, 0, None), ("admin", "demo", 1, None)]
    assert rows[0]["latest exception"] == "ValueError: bad row" and rows[0]["restarts"] == 3
