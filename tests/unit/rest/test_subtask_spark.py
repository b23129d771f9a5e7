"""A subtask's drill-down into its Spark stages (``.../subtasks/:subtaskindex/spark``) against a fake Dispatcher."""
from __future__ import annotations

from tests.unit.rest.conftest import JOB, TOKEN, VERTEX
from tests.unit.rest.test_flink_metrics_api import get

SPARK = f"/jobs/{JOB}/vertices/{VERTEX}/subtasks/%s/spark"


def test_a_subtasks_stages_come_slowest_first_beside_its_time_per_plan_and_busy_time(server):
    status, body = get(server, SPARK % 2)
    assert status == 200
    assert [s["stage-id"] for s in body["stages"]] == [12, 10, 11]
    assert body["stages"][0]["disk-spilled-bytes"] == 1 << 20 and body["stages"][1]["shuffle-write-bytes"] == 4096
    assert body["plans"] == [
        {"plan": "WholeStageCodegen (1) > Exchange", "stages": 2, "duration": 800, "share": 0.8889},
        {"plan": "Exchange > WholeStageCodegen (2)", "stages": 1, "duration": 100, "share": 0.1111}]
    assert (body["busy-time"], body["stage-time"], body["stage-count"]) == (1000, 900, 3)
    assert body["dominant-plan"] == "WholeStageCodegen (1) > Exchange" and body["phases"]["spark_action"] == 0.9
    assert body["taskmanager-id"] == "tm-1" and body["status"] == "RUNNING"
    assert [(p["part"], p["time"], p["share"]) for p in body["parts"]] == [
        ("stages", 900, 0.9), ("driver", 0, 0.0), ("transfer", 0, 0.0), ("taskmanager", 50, 0.05)]
    assert (body["driver-time"], body["transfer-time"], body["taskmanager-time"]) == (0, 0, 50)
    assert body["dominant-part"] == "stages" and body["measured-share"] == 0.95


def test_a_subtask_with_no_spark_work_yet_has_an_empty_drill_down(server):
    status, body = get(server, SPARK % 0)
    assert status == 200 and body["stages"] == [] and body["plans"] == [] and body["dominant-plan"] is None


def test_an_unknown_subtask_is_404(server):
    assert get(server, SPARK % 7)[0] == 404
    assert get(server, SPARK % "x")[0] == 404


def test_a_subtasks_metrics_carry_its_spark_totals_for_the_job_graphs_hint(server):
    status, vertex = get(server, f"/jobs/{JOB}/vertices/{VERTEX}")
    spark = vertex["subtasks"][2]["metrics"]["spark"]
    assert spark == {"total_stages": 3, "total_stage_ms": 900, "dominant_plan": "WholeStageCodegen (1) > Exchange",
                     "dominant_share": 0.889, "explained": 0.9, "driver_share": 0.0}
    assert "spark" not in vertex["subtasks"][0]["metrics"] and "spark" not in vertex["metrics"]
    assert get(server, f"/jobs/{JOB}")[1]["vertices"][0]["subtasks"][2]["metrics"]["spark"] == spark


def test_a_taskmanager_without_a_spark_ui_says_how_to_get_one_and_the_token_is_asked_first(server):
    status, _, raw = server.call("GET", "/taskmanagers/tm-1/spark-ui/jobs/")
    assert status == 404 and b"spark.ui.enabled=true" in raw
    assert server.call("GET", "/taskmanagers/tm-1/spark-ui/jobs/", token=None)[0] == 401
    assert server.call("GET", f"/taskmanagers/tm-1/spark-ui/jobs/?token={TOKEN}", token=None)[0] == 404, \
        "a browser may bring the token in the query"
    assert server.call("GET", "/taskmanagers/nope/spark-ui/")[0] == 404
    assert "sparkUiUrl" not in get(server, "/taskmanagers/tm-1")[1]
