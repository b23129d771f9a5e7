"""A side's CPU over a span read from samples, and what others used meanwhile."""
from __future__ import annotations

import pytest

from tests.benchmarks.cpu_use import CpuSeries, between, others_share


def test_a_span_between_samples_is_interpolated():
    samples = [(100.0, 10.0), (102.0, 14.0), (104.0, 14.0)]
    assert between(samples, 101.0, 103.0) == pytest.approx(2.0)  # 12 -> 14
    assert between(samples, 100.0, 104.0) == pytest.approx(4.0)
    assert between(samples, 99.0, 103.0) is None, "not covered before"
    assert between(samples, 101.0, 105.0) is None, "not covered after"


def test_others_share_is_the_machine_busy_time_the_side_did_not_use():
    assert others_share(30.0, 20.0, 10.0, 2) == pytest.approx(0.5)
    assert others_share(10.0, 12.0, 10.0, 2) == 0.0, "sampling noise never makes it negative"
    assert others_share(None, 1.0, 10.0, 2) is None


def test_the_series_reads_a_span_of_the_counter_it_samples():
    counter = iter([10.0, 14.0, 20.0])
    series = CpuSeries(lambda: next(counter))  # sampled by hand here, not by its thread
    for _ in range(3):
        series.sample()
    (t0, c0, _), (t1, c1, _), (t2, c2, _) = series._samples
    assert (c0, c1, c2) == (10.0, 14.0, 20.0)
    assert series.side(t0, t2) == pytest.approx(10.0)
    assert series.machine(t0, t2) >= 0
    assert series.side(t0 - 1, t2) is None
