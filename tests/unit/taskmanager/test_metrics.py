"""Busy, idle and backpressured time as a task reports them (Flink's *TimeMsPerSecond), on a fake clock."""
from __future__ import annotations

import pytest

from runtime.taskmanager import metrics as metrics_module
from runtime.taskmanager.metrics import TaskMetricsTracker


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(metrics_module.time, "monotonic", fake)
    return fake


def report(tracker: TaskMetricsTracker, blocked_s: float = 0.0):
    return tracker.snapshot("job", "attempt", 0.0, 0, 0, blocked_s)


def test_time_splits_into_idle_backpressured_and_busy_per_second(clock):
    tracker = TaskMetricsTracker()
    tracker.start()
    with tracker.idle():
        clock.now += 0.25  # waiting for input
    clock.now += 0.75  # processing, of which 0.5 s waiting for credit
    first = report(tracker, blocked_s=0.5)
    assert (first.idle_time_ms_per_s, first.backpressured_time_ms_per_s, first.busy_time_ms_per_s) == \
        pytest.approx((250.0, 500.0, 250.0))
    clock.now += 2.0  # two seconds of work, no waiting: averaged over the three seconds so far
    second = report(tracker, blocked_s=0.5)
    assert (second.idle_time_ms_per_s, second.backpressured_time_ms_per_s, second.busy_time_ms_per_s) == \
        pytest.approx((250 / 3, 500 / 3, 2250 / 3))
    assert (second.accumulated_idle_ms, second.accumulated_backpressured_ms, second.accumulated_busy_ms) == \
        (250, 500, 2250)
    for _ in range(12):  # twelve more seconds of work, reported every second: the first second drops out
        clock.now += 1.0
        latest = report(tracker, blocked_s=0.5)
    assert latest.busy_time_ms_per_s == pytest.approx(1000.0)


def test_a_bundle_every_two_seconds_is_as_busy_as_it_is_on_average(clock):
    """Reported every second, a source busy 0.3 s of every 2 s reads about 150 ms/s busy, not 300 then 0."""
    tracker = TaskMetricsTracker()
    tracker.start()
    reports = []
    for _ in range(10):
        clock.now += 0.3  # a bundle
        reports.append(report(tracker))
        with tracker.idle():
            clock.now += 1.7  # its next rows falling due
        reports.append(report(tracker))
    assert all(r.busy_time_ms_per_s == pytest.approx(150.0, abs=20) for r in reports[-6:]), \
        [round(r.busy_time_ms_per_s) for r in reports]


def test_a_wait_under_way_counts_before_it_ends(clock):
    tracker = TaskMetricsTracker()
    tracker.start()
    with tracker.idle():
        clock.now += 1.0
        assert report(tracker).idle_time_ms_per_s == pytest.approx(1000.0)
        clock.now += 1.0
    assert report(tracker).idle_time_ms_per_s == pytest.approx(1000.0)


def test_nothing_is_busy_before_the_task_runs_and_checkpoint_figures_pass_through(clock):
    tracker = TaskMetricsTracker()
    clock.now += 5.0  # deploying, starting a Spark session
    before = report(tracker)
    assert before.busy_time_ms_per_s == before.idle_time_ms_per_s == 0.0
    tracker.last_checkpoint = (7, 0.4, 1234)
    after = report(tracker)
    assert (after.last_checkpoint_id, after.last_checkpoint_duration_s, after.last_checkpoint_size) == (7, 0.4, 1234)
