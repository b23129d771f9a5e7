"""Window latency at the client: a window counts when the last of its users arrived, the measured span is the whole
windows between the warm-up and the end, and a window still missing is reported, not dropped."""
from __future__ import annotations

import datetime

import pyarrow as pa
import pytest

from tests.benchmarks.window_latency import (WindowArrivals, epoch_seconds, span_window_ends, summary,
                                             users_for_rate)


def test_a_window_is_counted_when_its_last_user_arrives():
    arrivals = WindowArrivals(users=3)
    arrivals.add(101.0, [100.0, 100.0], [0, 1])  # half of the window from one subtask
    assert not arrivals.complete([100.0]) and arrivals.missing([100.0]) == [100.0]
    arrivals.add(101.4, [100.0, 110.0], [2, 0])  # the rest, and the next window begins
    assert arrivals.complete([100.0]) and arrivals.missing([100.0, 110.0]) == [110.0]
    assert arrivals.latencies([100.0, 110.0]) == [pytest.approx(1.4)]
    assert arrivals.first_row_latencies([100.0, 110.0]) == [pytest.approx(1.0), pytest.approx(-8.6)]


def test_rows_of_a_whole_window_arriving_again_do_not_move_its_time():
    arrivals = WindowArrivals(users=1)
    arrivals.add(101.0, [100.0], [0])
    arrivals.add(105.0, [100.0], [0])
    assert arrivals.latencies([100.0]) == [pytest.approx(1.0)]


def test_the_span_holds_the_windows_that_start_after_its_start_and_end_before_its_end():
    assert span_window_ends(103.0, 140.0, 10.0) == [120.0, 130.0, 140.0]
    assert span_window_ends(110.0, 125.0, 10.0) == [120.0]
    assert span_window_ends(103.0, 115.0, 10.0) == []


def test_users_are_few_enough_for_every_one_to_appear_in_every_window():
    assert users_for_rate(1_000_000, 10, 0.9, 10_000) == 10_000
    assert users_for_rate(10_000, 10, 0.9, 10_000) == 3_000  # 90,000 rows per window, 30 each
    assert users_for_rate(1, 10, 0.9, 10_000) == 1


def test_the_summary_gives_median_and_max_over_windows_and_how_many_arrived():
    found = summary([1.2, 1.0, 1.6, 1.1], expected=5)
    assert (found["median_s"], found["min_s"], found["max_s"]) == (1.15, 1.0, 1.6)
    assert (found["windows"], found["windows_expected"]) == (4, 5)
    assert summary([], 2)["median_s"] is None


def test_timestamps_become_epoch_seconds_whether_instants_or_utc_wall_times():
    moment = datetime.datetime(2026, 1, 1, 12, 0, 10)
    naive = pa.array([moment], pa.timestamp("us"))
    aware = pa.array([moment.replace(tzinfo=datetime.timezone.utc)], pa.timestamp("us", tz="UTC"))
    expected = moment.replace(tzinfo=datetime.timezone.utc).timestamp()
    assert epoch_seconds(naive) == [expected] and epoch_seconds(aware) == [expected]
    assert epoch_seconds(pa.chunked_array([pa.array([moment], pa.timestamp("ms"))])) == [expected]
