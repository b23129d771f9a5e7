"""The TaskManager's recording of each subtask's Spark stages (runtime.taskmanager.spark_work), given what a
Spark 4 driver's status store holds (tests.unit.test_spark_stages has its JSON); the reading through py4j is
tested against a real driver in tests/integration/test_spark_drilldown.py."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from runtime.taskmanager import spark_work
from runtime.taskmanager.spark_work import HOLD_S, SparkWorkRecorder, attempt_of, description
from tests.unit.test_spark_stages import FIRST, GRAPH

A, B = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"


def stage(stage_id: int, attempt: str, status: str = "COMPLETE", ms: int = 100) -> dict:
    submitted = int(time.time() * 1000) - ms
    info = {**FIRST, "stageId": stage_id, "status": status, "description": description("Count (1/2)", attempt),
            "submissionTime": submitted, "completionTime": submitted + ms}
    return {"info": info, "jobIds": [stage_id // 2]}


def recorder() -> SparkWorkRecorder:
    return SparkWorkRecorder(lambda: None, ThreadPoolExecutor(1))


def test_a_job_description_names_its_subtask_attempt():
    assert attempt_of(description("Map (3/4)", A)) == A
    assert attempt_of("Map (3/4)") is None and attempt_of(None) is None


def test_each_subtask_is_given_its_own_stages_once_with_its_totals():
    r = recorder()
    r._record([stage(0, A, ms=100), stage(1, B, ms=30), stage(2, A, ms=50)], {0: GRAPH})
    work = r._subtasks[A]
    assert [s.stage_id for s in work.new] == [0, 2] and work.total_ms == 150 and work.total_stages == 2
    assert work.new[0].plan == "WholeStageCodegen (1) > Exchange" and work.new[1].plan == "stage"
    assert [s.stage_id for s in r._subtasks[B].new] == [1]
    assert r._cursor == 3


def test_a_stage_still_running_holds_the_cursor_and_is_given_once_it_ends():
    r = recorder()
    r._record([stage(0, A), stage(1, A, status="ACTIVE"), stage(2, A)], {})
    assert r._cursor == 1 and [s.stage_id for s in r._subtasks[A].new] == [0, 2]
    r._record([stage(1, A), stage(2, A), stage(3, A)], {})  # read again from the cursor: 2 is not given twice
    assert [s.stage_id for s in r._subtasks[A].new] == [0, 2, 1, 3] and r._cursor == 4


def test_a_stage_that_never_ends_is_given_up_on():
    r = recorder()
    stuck = stage(0, A, status="ACTIVE")
    stuck["info"]["submissionTime"] -= int(HOLD_S * 1000) + 1
    r._record([stuck, stage(1, A)], {})
    assert r._cursor == 2


def test_skipped_stages_and_jobs_of_no_subtask_are_left_out():
    r = recorder()
    untagged = stage(1, A)
    untagged["info"]["description"] = None
    r._record([stage(0, A, status="SKIPPED"), untagged], {})
    assert A not in r._subtasks and r._cursor == 2


def test_take_hands_over_the_new_stages_and_the_dominant_plan(monkeypatch):
    r = recorder()
    monkeypatch.setattr(r, "_read_when_due", lambda loop: None)
    r._record([stage(0, A, ms=300), stage(1, A, ms=100)], {0: GRAPH})
    work = r.take(A, None)
    assert [s.stage_id for s in work.stages] == [0, 1] and work.total_stage_ms == 400
    assert work.dominant_plan == "WholeStageCodegen (1) > Exchange" and work.dominant_share == 0.75
    again = r.take(A, None)
    assert again.stages == [] and again.total_stages == 2


def test_a_subtasks_stage_time_is_held_against_its_busy_time_over_the_last_minute(monkeypatch):
    r = recorder()
    clock = [1000.0]
    monkeypatch.setattr(spark_work.time, "monotonic", lambda: clock[0])
    assert r.take(A, busy_ms=0).explained == 0.0
    r._record([stage(0, A, ms=2000)], {})  # a slow start: 2 s of stages in 10 s of busy time
    assert r.take(A, busy_ms=10_000).explained == 0.2
    for minute in range(1, 4):  # then 9 s of stages in each 10 s of busy time
        clock[0] += 30
        r._record([stage(minute, A, ms=9_000)], {})
        work = r.take(A, busy_ms=10_000 + 10_000 * minute)
    assert work.explained == 0.9, "the start is out of the window"


def test_a_subtasks_time_on_the_driver_outside_stages_is_held_against_its_busy_time_too(monkeypatch):
    r = recorder()
    clock = [1000.0]
    monkeypatch.setattr(spark_work.time, "monotonic", lambda: clock[0])
    assert r.take(A, busy_ms=0, driver_ms=0).driver_share == 0.0
    r._record([stage(0, A, ms=100)], {})  # its optimizer computed the bundle: 9.5 s on the driver in 10 s busy
    clock[0] += 10
    work = r.take(A, busy_ms=10_000, driver_ms=9_500)
    assert (work.driver_share, work.explained) == (0.95, 0.01)
