"""datagen's generated columns on a real Spark session: event times for any start and rate."""
from __future__ import annotations

import time

import pytest
from pyspark.sql.types import StructType

from runtime.taskmanager.spark import generate, warm_up


@pytest.mark.parametrize("start, rate", [(1_700_000_000.0, 2_000.0), (time.time(), 1_500_000.0), (1.5, 3.0)],
                         ids=["2023", "now", "epoch"])
def test_event_time_is_start_plus_offset_over_rate_to_the_microsecond(spark, start, rate):
    params = {"schema": "ts TIMESTAMP", "timestamp_start": start, "event_rate": rate}
    rows = generate(spark, StructType.fromDDL("ts TIMESTAMP"), params, [(0, 1000, 1), (10**9, 10**9 + 5, 1)]).toArrow()
    offsets = list(range(1000)) + list(range(10**9, 10**9 + 5))
    got = [t.timestamp() for t in rows.column("ts").to_pylist()]
    assert len(got) == len(offsets)
    for offset, ts in zip(offsets, got):
        assert abs(ts - (start + offset / rate)) <= 2e-6, (offset, ts)


def test_the_warm_up_query_runs_on_this_spark_and_aggregates_what_it_generated(spark):
    got = warm_up(spark).sort_by("k").to_pylist()  # it must run: a TaskManager only logs its failure
    assert [r["k"] for r in got] == [0, 1, 2, 3]
    assert 0 < sum(r["n"] for r in got) <= 64 and all(r["v"] > 0.1 * r["n"] for r in got)
