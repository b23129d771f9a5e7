"""The dashboard's page content from Flink-shaped REST answers, without a server or a browser: actions with
their REST call and CLI line, savepoint outcomes, the JobManagers table, checkpoint chart and history,
exceptions with traces, escaping."""
from __future__ import annotations

import math

from runtime.cli.commands import COMMANDS
from runtime.jobmanager.dashboard import html as h
from runtime.jobmanager.dashboard.actions import job_actions, outcome
from runtime.jobmanager.dashboard.job_page import (checkpoint_chart_columns, checkpoints_html, exceptions_html, job_header,
                                                  subtasks_html)
from runtime.jobmanager.dashboard.pages import jobmanagers_table, jobs_table

JOB = "a" * 32
URL = "http://127.0.0.1:8081"


def test_each_action_shows_its_rest_call_and_cli_line_before_it_runs():
    actions = {a.key: a for a in job_actions(JOB)}
    assert list(actions) == ["savepoint", "stop", "cancel"]
    savepoint = "\n".join(actions["savepoint"].api_lines(URL, "/run/token", COMMANDS))
    assert f"REST: POST /jobs/{JOB}/savepoints" in savepoint and '"cancel-job": false' in savepoint
    assert f"flinkbench savepoint --jobmanager {URL} --token-file /run/token {JOB}" in savepoint
    assert "$(cat /run/token)" in savepoint and "Bearer" in savepoint
    stop = "\n".join(actions["stop"].api_lines(URL, None, COMMANDS))
    assert f"POST /jobs/{JOB}/stop" in stop and f"flinkbench stop --jobmanager {URL} {JOB}" in stop
    assert "$FLINKBENCH_TOKEN" in stop
    cancel = "\n".join(actions["cancel"].api_lines(URL, "/t", COMMANDS))
    assert f"PATCH /jobs/{JOB}?mode=cancel" in cancel and f"flinkbench cancel --jobmanager {URL} --token-file /t {JOB}" in cancel
    assert not actions["cancel"].polls and actions["stop"].polls
    without_stop = "\n".join(actions["stop"].api_lines(URL, None, set(COMMANDS) - {"stop"}))
    assert "this flinkbench has no 'stop' command yet" in without_stop


def test_savepoint_outcomes_read_from_flinks_status_answer():
    assert outcome({"status": {"id": "IN_PROGRESS"}}) == (False, "in progress \u2026")
    assert outcome({"status": {"id": "COMPLETED"}, "operation": {"location": "file:///sp/1"}}) == \
        (True, "completed: file:///sp/1")
    done, text = outcome({"status": {"id": "COMPLETED"}, "operation": {"failure-cause": {"stack-trace": "disk full"}}})
    assert done and text == "failed: disk full"


def test_the_jobmanagers_table_lists_a_lone_jobmanager_and_every_ha_one():
    alone = jobmanagers_table({"leader": {"url": URL}, "jobmanagers": []})
    assert URL in alone and "data-state='leader'" in alone
    ha = jobmanagers_table({"leader": {"url": URL}, "self": URL, "jobmanagers": [
        {"id": "jm-1", "url": URL, "role": "leader", "pid": 1}, {"id": "jm-2", "url": "http://127.0.0.1:8082",
                                                               "role": "standby", "pid": 2}]})
    assert ha.count("<tr>") == 3 and "standby" in ha and "this one" in ha


def test_checkpoint_chart_marks_the_restored_one_and_history_lists_every_checkpoint():
    stats = {"counts": {"completed": 2, "failed": 1, "restored": 1, "in_progress": 0},
             "latest": {"restored": {"id": 2, "external_path": "file:///cp/chk-2"}},
             "history": [{"id": 3, "status": "FAILED", "end_to_end_duration": 900, "failure_message": "timeout"},
                         {"id": 2, "status": "COMPLETED", "end_to_end_duration": 1500, "state_size": 2048,
                          "external_path": "file:///cp/chk-2"},
                         {"id": 1, "status": "COMPLETED", "end_to_end_duration": 500, "state_size": 1024, "is_savepoint": True}]}
    cols = checkpoint_chart_columns(stats)
    assert cols["id"] == [1, 2, 3] and cols["duration"] == [0.5, 1.5, 0.9]
    assert cols["kind"] == ["savepoint", "checkpoint", "checkpoint"]
    assert math.isnan(cols["restored_at"][0]) and cols["restored_at"][1] == 1.5 and math.isnan(cols["restored_at"][2])
    assert cols["color"][2] == "#d62728" and math.isnan(cols["size"][2])
    html = checkpoints_html(stats)
    assert "#2 file:///cp/chk-2" in html and "timeout" in html and html.count("<tr>") >= 3 + 5


def test_exceptions_show_the_root_cause_trace_and_every_failure():
    html = exceptions_html({"root-exception": "Traceback ...\nValueError: <boom>", "exceptionHistory": {"entries": [
        {"exceptionName": "ValueError", "stacktrace": "Traceback ...\nValueError: <boom>", "timestamp": 1_700_000_000_000,
         "taskName": "Map", "taskManagerId": "tm-1"}]}})
    assert "data-name='root-exception'" in html and "ValueError: &lt;boom&gt;" in html and "<boom>" not in html
    assert "Map on tm-1" in html
    assert "No exceptions" in exceptions_html({"root-exception": None, "exceptionHistory": {"entries": []}})


def test_subtasks_and_jobs_link_to_their_pages():
    details = {"vertices": [{"id": "v1", "name": "Slow map", "parallelism": 1, "status": "RUNNING", "subtasks": [
        {"subtask": 0, "status": "RUNNING", "attempt": 0, "taskmanager-id": "tm-1", "slot": 0,
         "metrics": {"records_in": 10, "busy_time_ms_per_s": 970, "backpressured_time_ms_per_s": 0}}]}]}
    html = subtasks_html(details)
    assert "href='/dashboard?taskmanager=tm-1'" in html and "97 %" in html
    listing = jobs_table([{"jid": JOB, "name": "clicks <1>", "state": "RUNNING", "start-time": 1, "duration": 1000}])
    assert f"href='/dashboard?job={JOB}'" in listing and "clicks &lt;1&gt;" in listing
    assert h.href(page="jobs") == "/dashboard?page=jobs" and h.href() == "/dashboard"


def test_a_sql_jobs_page_shows_its_short_name_and_its_whole_statement():
    details = {"name": "insert-into_default_catalog.default_database.counts", "jid": "j", "state": "RUNNING",
               "plan": {"statement": "INSERT INTO counts SELECT `user`, COUNT(*) FROM clicks WHERE a < 1 GROUP BY `user`"}}
    header = job_header(details)
    assert "insert-into_default_catalog.default_database.counts" in header
    assert "<pre class='fb-statement'>INSERT INTO counts SELECT `user`, COUNT(*) FROM clicks WHERE a &lt; 1" in header
    assert "statement" not in job_header({"name": "clicks", "jid": "j", "state": "RUNNING", "plan": {}})
