"""datagen's generated columns on a real Spark session: event times for any start and rate."""
from __future__ import annotations

import time

import pytest
from pyspark.sql.types import StructType

from runtime.taskmanager.datagen_sql import generate
from runtime.taskmanager.warm_up import ROWS, SOURCE, warm_up
from tests.helpers.spark_runner import runner_on


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


def test_the_warm_up_bundle_runs_on_this_spark_and_its_window_fires_what_was_generated(spark):
    """It must run (a TaskManager only logs its failure) and take the whole path: the source chain's
    pre-aggregate, the window task's merge and fire, and the selection over the fired rows in Spark."""
    runner = runner_on(spark)
    fired = warm_up(runner).sort_by("user").to_pylist()
    generated = runner.datagen_ranges(SOURCE, [(0, ROWS, 1)]).toArrow().to_pylist()
    kept = [row for row in generated if row["amount"] > 0.1]
    users = sorted({row["user"] for row in kept})
    assert [row["user"] for row in fired] == users
    assert [row["clicks"] for row in fired] == [sum(r["user"] == u for r in kept) for u in users]
    assert [round(row["total"], 9) for row in fired] == \
        [round(sum(r["amount"] for r in kept if r["user"] == u), 9) for u in users]
    assert {row["window_end"].timestamp() for row in fired} == {1.0}, "64 rows at 64 a second: one 1 s window"


def _compilations(spark) -> int:
    """How many Java classes Spark's code generator has compiled in this JVM so far."""
    metrics = getattr(spark._jvm, "org.apache.spark.metrics.source.CodegenMetrics$").__getattr__("MODULE$")
    return metrics.METRIC_COMPILATION_TIME().getCount()


def test_bundles_at_new_offsets_reuse_the_generated_code_and_read_exactly_their_offsets(spark):
    schema = StructType.fromDDL("user INT, amount DOUBLE")
    params = {"schema": "user INT, amount DOUBLE", "seed": 3, "keep_offset": True,
              "fields": {"user": {"min": 0, "max": 99}}}

    def bundle(ranges):
        df = generate(spark, schema, params, ranges).filter("amount > 0.1").groupBy("user").count()
        return df.toArrow()

    bundle([(0, 1000, 3)])  # the first bundle of this shape compiles its code: 334 rows, padded to 384
    before = _compilations(spark)
    for lo, rows in [(3000, 350), (7_000_001, 384), (10**12, 321)]:
        bundle([(lo, lo + 3 * rows, 3)])
    assert _compilations(spark) == before, "a bundle at new offsets compiled new code"

    got = generate(spark, schema, params, [(10**12 + 1, 10**12 + 700, 3), (5, 9, 1)]).toArrow()
    assert got.column("_offset").to_pylist() == list(range(10**12 + 1, 10**12 + 700, 3)) + [5, 6, 7, 8]


def test_generated_doubles_are_computed_in_double_arithmetic(spark):
    """Spark SQL reads 2147483647.0 as a DECIMAL: written that way, every generated double took a decimal
    division per row (a third of a clicks bundle's time)."""
    params = {"schema": "amount DOUBLE", "fields": {"amount": {"min": -2.5, "max": 1e-05}}}
    df = generate(spark, StructType.fromDDL("amount DOUBLE"), params, [(0, 1000, 1)])
    plan = df._jdf.queryExecution().optimizedPlan().toString().lower()
    assert "decimal" not in plan, plan
    amounts = df.toArrow().column("amount").to_pylist()
    assert all(-2.5 <= a <= 1e-05 for a in amounts) and len(set(amounts)) > 990


def test_generated_timestamps_are_rounded_without_a_per_row_big_decimal(spark):
    """Spark rounds a double through java.math.BigDecimal built from its decimal string: in the event-time
    column that was a third of a clicks bundle's time and most of the garbage its JVM collected."""
    params = {"schema": "ts TIMESTAMP", "timestamp_start": 1_700_000_000.25, "event_rate": 3.0,
              "fields": {"ts": {"max_out_of_orderness": 0.5}}}
    df = generate(spark, StructType.fromDDL("ts TIMESTAMP"), params, [(0, 1000, 1)])
    plan = df._jdf.queryExecution().optimizedPlan().toString().lower()
    assert "round(" not in plan, plan
    got = [t.timestamp() for t in df.toArrow().column("ts").to_pylist()]
    assert all(1_700_000_000.25 - 0.5 - 1e-6 <= t - n / 3.0 <= 1_700_000_000.25 + 1e-6 for n, t in enumerate(got))
    assert all(round(t * 1e6) == t * 1e6 for t in got[:10])
