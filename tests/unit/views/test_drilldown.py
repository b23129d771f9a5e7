"""The drill-down as the notebook and the dashboard write it (runtime.views.drilldown), and which subtask opens."""
from __future__ import annotations

import pytest

from runtime.views.drilldown import drilldown_html, pick
from runtime.views.graph import job_graph
from tests.unit.views.test_graph import chain, running


def stage(stage_id: int, ms: int, plan: str) -> dict:
    return {"stage-id": stage_id, "attempt": 0, "job-ids": [stage_id], "plan": plan, "status": "COMPLETE",
            "submission-time": 0, "duration": ms, "tasks": 1, "failed-tasks": 0, "executor-run-time": ms,
            "executor-cpu-time": ms // 2, "input-bytes": 0, "shuffle-read-bytes": 2048, "shuffle-write-bytes": 0,
            "memory-spilled-bytes": 0, "disk-spilled-bytes": 0}


INFO = {"subtask": 1, "attempt": 0, "status": "RUNNING", "taskmanager-id": "tm-1", "busy-time": 10_000,
        "stage-time": 9_000, "stage-count": 12, "dominant-plan": "Exchange > WholeStageCodegen (2)", "dominant-share": 0.9,
        "phases": {"spark_action": 9.5, "exchange_send": 0.2}, "plans": [
            {"plan": "Exchange > WholeStageCodegen (2)", "stages": 2, "duration": 900, "share": 0.9}],
        "stages": [stage(7, 600, "Exchange > WholeStageCodegen (2)"), stage(5, 300, "Exchange > WholeStageCodegen (2)")]}


def test_the_drilldown_names_the_subtask_its_share_of_busy_time_and_lists_stages_slowest_first():
    page = drilldown_html(INFO, "Count", 4, spark_ui="/taskmanagers/tm-1/spark-ui/")
    assert "Count (2/4)" in page and "90 %" in page and "Exchange &gt; WholeStageCodegen (2)" in page
    assert page.index("<td>7.0</td>") < page.index("<td>5.0</td>"), "as the JobManager ordered them: slowest first"
    assert page.index("spark_action") < page.index("exchange_send") and "/taskmanagers/tm-1/spark-ui/" in page


def test_the_drilldown_shows_its_busy_time_in_parts_and_warns_of_the_driver_when_it_dominates():
    parts = [{"part": "stages", "description": "", "time": 300, "share": 0.03},
             {"part": "driver", "description": "", "time": 9_200, "share": 0.92},
             {"part": "transfer", "description": "", "time": 100, "share": 0.01},
             {"part": "taskmanager", "description": "", "time": 200, "share": 0.02}]
    page = drilldown_html({**INFO, "parts": parts, "dominant-part": "driver"}, "Heavy", 3)
    assert "Spark&#x27;s driver outside any stage (optimizer, planning) 9.2 s (92 %)" in page
    assert "&#9888; Spark&#x27;s driver outside any stage (optimizer, planning) takes most of its time" in page
    assert "takes most of its time" not in drilldown_html({**INFO, "parts": parts, "dominant-part": "stages"}, "H", 3)


def test_the_hinted_tasks_busiest_subtask_opens_unless_one_is_asked_for():
    subs = running(990)
    subs[0].metrics["busy_time_ms_per_s"] = 200
    graph = job_graph("j", chain("Source", "Map"), {"Source": running(20, 950), "Map": subs})
    assert pick(graph) == ("Map", 1)
    assert pick(graph, "Sou", 0) == ("Source", 0)
    with pytest.raises(ValueError, match="subtasks 1 to 2"):
        pick(graph, "Map", 5)
    with pytest.raises(ValueError, match="no single task 'Nope'"):
        pick(graph, "Nope")
