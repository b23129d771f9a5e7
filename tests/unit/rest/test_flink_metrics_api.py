"""Flink's metric and detail endpoints against a fake Dispatcher: ``get=``, ``agg=`` and ``subtasks=`` as
Flink reads them, checkpoint details per task and subtask, subtask times, where a task's subtasks run,
the job's configuration, and the shapes Flink's web dashboard reads."""
from __future__ import annotations

import json

import pytest

from tests.unit.rest.conftest import CHECKPOINT, JOB, TRIGGERED, VERTEX

SUBTASKS = f"/jobs/{JOB}/vertices/{VERTEX}/subtasks/metrics"


def get(server, path: str):
    status, _, raw = server.call("GET", path)
    return status, json.loads(raw)


def test_a_vertex_lists_each_subtasks_metrics_and_gives_values_as_strings(server):
    status, listed = get(server, f"/jobs/{JOB}/vertices/{VERTEX}/metrics")
    ids = {m["id"] for m in listed}
    assert status == 200 and {"0.numRecordsIn", "2.busyTimeMsPerSecond", "1.currentInputWatermark"} <= ids
    assert all(set(m) == {"id"} for m in listed), "without get= only the ids"
    status, picked = get(server, f"/jobs/{JOB}/vertices/{VERTEX}/metrics?get=1.numRecordsIn,0.numBytesOut,9.nope")
    assert picked == [{"id": "1.numRecordsIn", "value": "200"}, {"id": "0.numBytesOut", "value": "500"}]


def test_subtask_metrics_aggregate_as_flink_does(server):
    status, rows = get(server, SUBTASKS + "?get=numRecordsIn")
    assert status == 200 and rows == [{"id": "numRecordsIn", "min": 100, "max": 300, "avg": 200, "sum": 600,
                                       "skew": pytest.approx(100 / 3)}]
    _, rows = get(server, SUBTASKS + "?get=numRecordsIn,isBackPressured&agg=max,sum&subtasks=1-2")
    assert rows == [{"id": "numRecordsIn", "max": 300, "sum": 500}, {"id": "isBackPressured", "max": 1, "sum": 1}]
    _, listed = get(server, SUBTASKS)
    assert {"id": "busyTimeMsPerSecond"} in listed and all(set(m) == {"id"} for m in listed)


@pytest.mark.parametrize("query, named", [("agg=median", "'agg'"), ("subtasks=1-x", "'subtasks'"),
                                          ("subtasks=3-1", "'subtasks'")])
def test_a_malformed_query_parameter_is_400_naming_it(server, query, named):
    status, body = get(server, f"{SUBTASKS}?get=numRecordsIn&{query}")
    assert status == 400 and named in body["errors"][0], body


def test_one_subtask_and_a_missing_subtask(server):
    status, rows = get(server, f"/jobs/{JOB}/vertices/{VERTEX}/subtasks/2/metrics?get=numRecordsOut")
    assert (status, rows) == (200, [{"id": "numRecordsOut", "value": "150"}])
    status, body = get(server, f"/jobs/{JOB}/vertices/{VERTEX}/subtasks/3/metrics")
    assert status == 404 and "subtasks 0 to 2" in body["errors"][0]
    status, detail = get(server, f"/jobs/{JOB}/vertices/{VERTEX}/subtasks/1")
    assert status == 200 and detail["subtask"] == 1 and detail["taskmanager-id"] == "tm-1"


def test_job_jobmanager_and_aggregated_jobs_metrics(server):
    _, job = get(server, f"/jobs/{JOB}/metrics?get=numRestarts,totalNumberOfCheckpoints")
    assert job == [{"id": "numRestarts", "value": "0"}, {"id": "totalNumberOfCheckpoints", "value": "0"}]
    _, jm = get(server, "/jobmanager/metrics?get=numRegisteredTaskManagers,taskSlotsTotal,Status.Process.Memory.RSS")
    assert jm[:2] == [{"id": "numRegisteredTaskManagers", "value": "1"}, {"id": "taskSlotsTotal", "value": "4"}]
    assert int(jm[2]["value"]) > 10_000_000, "the JobManager's own resident memory"
    _, jobs = get(server, f"/jobs/metrics?get=numRestarts&jobs={JOB}")
    assert jobs == [{"id": "numRestarts", "min": 0, "max": 0, "avg": 0, "sum": 0, "skew": 0}]
    assert get(server, "/jobs/metrics?get=numRestarts&jobs=" + "f" * 32)[1] == []


def test_taskmanager_metrics_come_from_their_status_reports(server):
    _, one = get(server, "/taskmanagers/tm-2/metrics?get=Status.Process.Memory.RSS")
    assert one == [{"id": "Status.Process.Memory.RSS", "value": "4000000"}]
    _, every = get(server, "/taskmanagers/metrics?get=Status.Process.Memory.RSS&agg=min,max")
    assert every == [{"id": "Status.Process.Memory.RSS", "min": 2_000_000, "max": 4_000_000}], "the lost one is left out"
    _, some = get(server, "/taskmanagers/metrics?get=Status.Process.Memory.RSS&agg=sum&taskmanagers=tm-1")
    assert some == [{"id": "Status.Process.Memory.RSS", "sum": 2_000_000}]
    assert get(server, "/taskmanagers/nope/metrics")[0] == 404


def test_checkpoint_details_give_each_task_and_subtask(server):
    status, cp = get(server, f"/jobs/{JOB}/checkpoints/details/{CHECKPOINT}")
    assert status == 200 and cp["id"] == CHECKPOINT and cp["status"] == "IN_PROGRESS"
    task = cp["tasks"][VERTEX]
    assert (task["num_subtasks"], task["num_acknowledged_subtasks"], task["state_size"]) == (3, 2, 4000)
    assert task["end_to_end_duration"] == 800 and task["latest_ack_timestamp"] == int((TRIGGERED + 0.8) * 1000)
    status, part = get(server, f"/jobs/{JOB}/checkpoints/details/{CHECKPOINT}/subtasks/{VERTEX}")
    first, second, third = part["subtasks"]
    assert first == {"index": 0, "status": "completed", "ack_timestamp": int((TRIGGERED + 0.5) * 1000),
                     "end_to_end_duration": 500, "state_size": 1000, "checkpointed_size": 400,
                     "checkpoint": {"sync": 3, "async": 120}, "start_delay": 2, "unaligned_checkpoint": False,
                     "aborted": False, "alignment": {"buffered": 0, "processed": 0, "persisted": 0, "duration": 10}}
    assert second["alignment"]["duration"] == -1, "not measured"
    assert third == {"index": 2, "status": "pending_or_failed"}
    summary = part["summary"]
    assert summary["checkpoint_duration"]["async"]["max"] == 300 and summary["state_size"]["min"] == 1000
    assert summary["alignment"]["duration"]["max"] == 10, "over the subtasks that measured it"


def test_checkpoint_details_refuse_unknown_ids_and_vertices(server):
    assert get(server, f"/jobs/{JOB}/checkpoints/details/99")[0] == 404
    assert get(server, f"/jobs/{JOB}/checkpoints/details/x")[0] == 400
    assert get(server, f"/jobs/{JOB}/checkpoints/details/{CHECKPOINT}/subtasks/{'c' * 32}")[0] == 404


def test_subtask_times_and_the_taskmanagers_of_a_vertex(server):
    _, times = get(server, f"/jobs/{JOB}/vertices/{VERTEX}/subtasktimes")
    assert [s["subtask"] for s in times["subtasks"]] == [0, 1, 2]
    assert set(times["subtasks"][0]["timestamps"]) == {"DEPLOYING", "RUNNING"}
    assert 4500 < times["subtasks"][0]["duration"] < 8000
    _, tms = get(server, f"/jobs/{JOB}/vertices/{VERTEX}/taskmanagers")
    (tm,) = tms["taskmanagers"]
    assert tm["taskmanager-id"] == "tm-1" and tm["status"] == "RUNNING" and tm["status-counts"]["RUNNING"] == 3
    assert tm["metrics"]["read-records"] == 600


def test_accumulators_config_and_applications(server):
    assert get(server, f"/jobs/{JOB}/vertices/{VERTEX}/accumulators")[1] == {"id": VERTEX, "user-accumulators": []}
    _, subs = get(server, f"/jobs/{JOB}/vertices/{VERTEX}/subtasks/accumulators")
    assert subs["parallelism"] == 3 and subs["subtasks"][2]["user-accumulators"] == []
    _, config = get(server, f"/jobs/{JOB}/config")
    assert config["jid"] == JOB and config["execution-config"]["execution-mode"] == "PIPELINED"
    assert get(server, "/applications/overview")[1] == {"applications": []}


def test_jobmanager_logs_list_and_refuse_unknown_names(server):
    status, listing = get(server, "/jobmanager/logs")
    assert status == 200 and isinstance(listing["logs"], list)
    status, body = get(server, "/jobmanager/logs/..%2F..%2Fetc%2Fpasswd")
    assert status == 404 and "log file" in body["errors"][0]
