"""The live views' model fed with event dicts in the wire shape (runtime.events through to_plain)."""
from __future__ import annotations

import itertools

import pyarrow as pa
import pytest

from runtime import events
from runtime.codec import to_plain
from runtime.messages import TaskMetrics
from runtime.views.columns import (FREE_COLOR, LOST_COLOR, checkpoint_columns, job_color, job_columns,
                                   jobmanager_columns, restart_columns, slot_columns, status_text, task_columns)
from bokeh.document import Document

from runtime.views.figures import ClusterViews, bar_range_end
from runtime.views.model import ClusterModel
from runtime.views.results import ResultsTable

JOB = "j" * 32
VERTEX = "v" * 32


class Feed:
    """Events as the JobManager's bus sends them: tagged dicts with seq and ts."""

    def __init__(self, model: ClusterModel, start_seq: int = 1, start_ts: float = 1000.0):
        self.model = model
        self._seq = itertools.count(start_seq + 1)
        self.ts = start_ts

    def __call__(self, event, dt: float = 1.0) -> bool:
        self.ts += dt
        record = to_plain(event)
        record.update(seq=next(self._seq), ts=self.ts)
        return self.model.apply(record)


def snapshot(taskmanagers=(), jobs=(), seq=1, leader="http://127.0.0.1:8081"):
    return {"type": "ClusterSnapshot", "seq": seq, "ts": 999.0, "taskmanagers": list(taskmanagers), "jobs": list(jobs),
            "leader": {"url": leader, "session-id": "s1"},
            "jobmanagers": [{"url": leader, "role": "leader", "pid": 1}]}


def rest_tm(tm_id, slots=2, busy=None):
    """A TaskManager as GET /taskmanagers (and the snapshot) shows it; ``busy`` maps slot -> (job, name, tasks)."""
    busy = busy or {}
    return {"id": tm_id, "host": "127.0.0.1", "slotsNumber": slots, "state": "REGISTERED", "pid": 7,
            "slots": [{"index": i, "allocation-id": f"a{i}" if i in busy else None,
                       "job-id": busy[i][0] if i in busy else None, "job-name": busy[i][1] if i in busy else "",
                       "tasks": busy[i][2] if i in busy else []} for i in range(slots)]}


@pytest.fixture
def model():
    m = ClusterModel()
    m.reset(snapshot([rest_tm("tm-a"), rest_tm("tm-b")]))
    m.set_connection("connected", "http://127.0.0.1:8081", "connected")
    return m


def running_job(feed, tm="tm-a", slots=(0, 1), name="clicks"):
    feed(events.JobSubmitted(JOB, name))
    for i, slot in enumerate(slots):
        feed(events.SlotAllocated(tm, slot, f"alloc{i}", JOB, name))
    feed(events.JobStatusChanged(JOB, name, "RUNNING", "CREATED", 0))
    for i, slot in enumerate(slots):
        feed(events.TaskStatusChanged(JOB, VERTEX, "Source: datagen -> Collect", i, f"att{i}", 0, "RUNNING", tm, slot))


def test_snapshot_shows_every_slot_free_and_the_leader(model):
    cols = slot_columns(model)
    assert list(zip(cols["tm_id"], cols["slot"], cols["state"])) == [
        ("tm-a", 0, "free"), ("tm-a", 1, "free"), ("tm-b", 0, "free"), ("tm-b", 1, "free")]
    assert set(cols["color"]) == {FREE_COLOR}
    assert jobmanager_columns(model) == {"url": ["http://127.0.0.1:8081"], "role": ["leader"], "pid": [1]}
    assert "4/4 slots free" in status_text(model)


def test_allocated_slots_carry_job_colour_and_running_tasks(model):
    feed = Feed(model)
    running_job(feed)
    cols = slot_columns(model)
    busy = [i for i, s in enumerate(cols["state"]) if s == "allocated"]
    assert [(cols["tm_id"][i], cols["slot"][i]) for i in busy] == [("tm-a", 0), ("tm-a", 1)]
    assert {cols["color"][i] for i in busy} == {job_color(JOB)}
    assert cols["tasks"][busy[1]] == "Source: datagen -> Collect (2)"
    assert cols["job_name"][busy[0]] == "clicks"
    feed(events.SlotFreed("tm-a", 0, "alloc0", JOB))
    assert slot_columns(model)["state"][:2] == ["free", "allocated"]


def test_job_filter_dims_other_jobs_slots(model):
    running_job(Feed(model))
    assert set(slot_columns(model, job_id="other")["alpha"]) == {0.35, 1.0}
    assert set(slot_columns(model, job_id=JOB)["alpha"]) == {1.0}


def test_lost_task_manager_is_greyed_and_counted(model):
    feed = Feed(model)
    running_job(feed)
    feed(events.TaskManagerLost("tm-a", "no heartbeat for 3 s"))
    cols = slot_columns(model)
    lost = [i for i, t in enumerate(cols["tm_id"]) if t == "tm-a"]
    assert [cols["state"][i] for i in lost] == ["lost", "lost"]
    assert {cols["color"][i] for i in lost} == {LOST_COLOR}
    assert cols["tm"][lost[0]] == "tm-a (lost)"
    assert "1 TaskManagers (1 lost)" in status_text(model) and "2/2 slots free" in status_text(model)


def test_metrics_fill_task_progress_and_throughput(model):
    feed = Feed(model)
    running_job(feed)
    for i, rate in enumerate((100.0, 300.0)):
        feed(events.TaskMetricsReported(JOB, VERTEX, "Source: datagen -> Collect", i, TaskMetrics(
            JOB, f"att{i}", records_in=1000 * (i + 1), records_out=900, records_in_per_s=rate,
            backpressure_ratio=0.25 * i, watermark=3600.5)), dt=0.0)
    cols = task_columns(model, JOB)
    assert cols["records_in"] == [1000, 2000]
    assert cols["in_rate"] == [100.0, 300.0]
    assert cols["backpressure"] == [0.0, 0.25]
    assert cols["watermark"] == ["01:00:00.500", "01:00:00.500"]
    assert cols["tm_id"] == ["tm-a", "tm-a"] and cols["slot"] == [0, 1]
    rates = model.jobs[JOB].rates
    assert rates[-1][1:] == (400.0, 400.0), "one point per half second holds the latest sum"


def test_news_about_a_replaced_attempt_is_ignored(model):
    feed = Feed(model)
    running_job(feed)
    feed(events.TaskStatusChanged(JOB, VERTEX, "T", 0, "att9", 1, "DEPLOYING", "tm-b", 0))
    feed(events.TaskStatusChanged(JOB, VERTEX, "T", 0, "att0", 0, "CANCELED", "tm-a", 0))
    cols = task_columns(model, JOB)
    assert (cols["state"][0], cols["attempt"][0], cols["tm_id"][0]) == ("DEPLOYING", 1, "tm-b")


def test_restarts_and_causes_reach_the_failover_view(model):
    feed = Feed(model)
    running_job(feed)
    cause = "Traceback (most recent call last):\n  File x\nRuntimeError: TaskManager tm-a lost"
    feed(events.JobStatusChanged(JOB, "clicks", "RESTARTING", "RUNNING", 0, cause))
    feed(events.JobRestarting(JOB, 1, cause, 1.0))
    feed(events.JobStatusChanged(JOB, "clicks", "RUNNING", "CREATED", 1))
    jobs = job_columns(model)
    assert (jobs["state"], jobs["attempt"], jobs["restarts"]) == (["RUNNING"], [1], [1])
    assert jobs["last_cause"] == ["RuntimeError: TaskManager tm-a lost"]
    restarts = restart_columns(model, JOB)
    assert restarts["attempt"] == [1] and restarts["cause"] == ["RuntimeError: TaskManager tm-a lost"]


def test_checkpoint_timeline_marks_status_duration_size_and_the_restored_one(model):
    feed = Feed(model)
    running_job(feed)
    feed(events.CheckpointTriggered(JOB, 1, False))
    feed(events.CheckpointCompleted(JOB, 1, False, 0.8, 4096, "file:///cp/chk-1"), dt=0.8)
    feed(events.CheckpointTriggered(JOB, 2, False))
    feed(events.CheckpointFailed(JOB, 2, False, "declined by subtask 1"), dt=2.0)
    feed(events.CheckpointTriggered(JOB, 3, True))
    feed(events.CheckpointRestored(JOB, 1, "file:///cp/chk-1"))
    cols = checkpoint_columns(model, JOB, now=model.jobs[JOB].checkpoints[3].triggered_ts + 5)
    assert cols["id"] == [1, 2, 3]
    assert cols["status"] == ["COMPLETED", "FAILED", "IN_PROGRESS"]
    assert cols["kind"] == ["checkpoint", "checkpoint", "savepoint"]
    assert cols["size"][0] == 4096 and cols["duration"][0] == 0.8
    assert cols["duration"][1] == pytest.approx(2.0) and cols["reason"][1] == "declined by subtask 1"
    assert cols["restored"] == [True, False, False]
    assert cols["end"][2] - cols["start"][2] == pytest.approx(5000.0), "in progress: the bar reaches now"


def test_events_the_snapshot_already_covers_and_unknown_types_are_ignored(model):
    assert not model.apply({"type": "SlotAllocated", "seq": 1, "tm_id": "tm-a", "slot_index": 0,
                            "allocation_id": "x", "job_id": JOB, "job_name": "n"})
    assert not model.apply({"type": "SomethingNew", "seq": 50})
    assert model.last_seq == 50
    assert set(slot_columns(model)["state"]) == {"free"}


def test_leader_change_moves_the_leader_role(model):
    Feed(model)(events.LeaderChanged("http://127.0.0.1:9000", "s2", [
        {"url": "http://127.0.0.1:8081", "role": "standby"}, {"url": "http://127.0.0.1:9000", "role": "leader"}]))
    assert jobmanager_columns(model)["role"] == ["standby", "leader"]


def test_seeding_from_rest_fills_jobs_started_before_the_model():
    m = ClusterModel()
    m.reset(snapshot([rest_tm("tm-a", busy={0: (JOB, "old", ["Source"])})],
                     [{"jid": JOB, "name": "old", "state": "RUNNING", "restarts": 2, "start-time": 5000}]))
    assert slot_columns(m)["tasks"][0] == "Source", "tasks in a slot come from the snapshot until events say more"
    m.seed_job({"jid": JOB, "name": "old", "state": "RUNNING", "vertices": [{"id": VERTEX, "name": "Source", "subtasks": [
        {"subtask": 0, "status": "RUNNING", "attempt": 2, "taskmanager-id": "tm-a", "slot": 0,
         "metrics": {"records_in": 77}}]}]})
    m.seed_checkpoints(JOB, {"history": [{"id": 4, "status": "COMPLETED", "is_savepoint": False,
                                          "trigger_timestamp": 10_000, "latest_ack_timestamp": 10_500,
                                          "end_to_end_duration": 500, "state_size": 12, "external_path": "p"}],
                             "latest": {"restored": {"id": 4, "restore_timestamp": 11_000, "external_path": "p"}}})
    assert task_columns(m, JOB)["records_in"] == [77]
    assert job_columns(m)["restarts"] == [2]
    cp = checkpoint_columns(m, JOB)
    assert (cp["id"], cp["duration"], cp["restored"]) == ([4], [0.5], [True])


def show_tab(views: ClusterViews, title: str) -> None:
    views.tabs.active = next(i for i, tab in enumerate(views.tabs.tabs) if tab.title == title)


def test_bokeh_views_hold_the_model_columns_and_skip_redraws_without_changes(model):
    feed = Feed(model)
    views = ClusterViews(JOB)
    assert views.refresh(model)
    assert not views.refresh(model), "nothing changed, nothing redrawn"
    running_job(feed)
    show_tab(views, "Slots")
    assert views.refresh(model)
    assert views.sources["slots"].data == slot_columns(model, JOB)
    assert list(views.slot_fig.y_range.factors) == ["tm-b", "tm-a"]
    assert views.status.text == status_text(model)
    show_tab(views, "Tasks")
    assert views.refresh(model), "another tab on show: put in though the model did not change"
    assert list(views.task_fig.y_range.factors) == list(reversed(task_columns(model, JOB)["label"]))

    table = views._tables["tasks"][0]
    before = list(table.view.tags)
    feed(events.TaskMetricsReported(JOB, VERTEX, "Source: datagen -> Collect", 0, TaskMetrics(JOB, "att0", records_in=5)))
    assert views.refresh(model)
    assert table.view.tags != before, "same rows, new values: the table's view is told to update its grid"
    assert table.tags == [], "not the table model itself: that rebuilds the whole grid in the browser"
    feed(events.TaskMetricsReported(JOB, VERTEX, "Source: datagen -> Collect", 0,
                                    TaskMetrics(JOB, "att0", records_in=123_456)))
    views.refresh(model)
    assert 123_456 < views.task_fig.x_range.end < 200_000, "the records axis follows the longest bar"


def test_only_the_tab_on_show_is_in_the_document_while_every_source_follows_the_model(model):
    feed = Feed(model)
    views = ClusterViews(JOB)
    document = Document()
    document.add_root(views.layout)
    running_job(feed)
    assert views.refresh(model)
    assert views.contents["Graph"].document is document and views.contents["Tasks"].document is None
    assert views.sources["tasks"].data == task_columns(model, JOB), "a hidden tab's sources follow the model"
    woken = []
    views.on_tab_shown(lambda: woken.append(True))
    show_tab(views, "Tasks")
    assert woken, "opening a tab wakes whoever refreshes the views"
    assert views.refresh(model), "another tab on show: refreshed though the model did not change"
    assert views.contents["Tasks"].document is document and views.contents["Graph"].document is None
    assert not views.refresh(model)
    views.attach_all()
    assert all(content.document is document for content in views.contents.values()), "a final view shows every tab"


def test_bar_range_end_is_just_beyond_the_longest_bar_in_round_steps():
    assert bar_range_end([]) == bar_range_end([0, None]) == 1.0
    assert bar_range_end([3]) == 4.0
    assert bar_range_end([5, 95]) == 100.0
    assert bar_range_end([1_000]) == 1_100.0
    assert bar_range_end([123_456]) == 130_000.0
    assert bar_range_end([970_000]) == 1_100_000.0


def test_results_table_keeps_only_the_last_rows():
    table = ResultsTable(max_rows=3)
    table.append(pa.table({"seq": [1, 2], "user": ["a", "b"]}))
    table.append(pa.table({"seq": [3, 4, 5, 6, 7], "user": list("cdefg")}))
    assert table.rows() == [{"seq": 5, "user": "e"}, {"seq": 6, "user": "f"}, {"seq": 7, "user": "g"}]
    assert table.rows_seen == 7
    drawn = list(table.table.view.tags)
    table.append(pa.table({"seq": [8], "user": ["h"]}))
    assert table.rows()[-1] == {"seq": 8, "user": "h"} and table.table.view.tags != drawn
    assert [c.field for c in table.table.columns] == ["seq", "user"]
