"""The streaming data plane on real processes: event-time windows, exchange, batch files, errors."""
from __future__ import annotations

import collections
import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from runtime.api.functions import col
from runtime.api.windows import (EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows,
                                 WatermarkStrategy, agg)
from runtime.client import JobFailed
from runtime.examples import clicks
from tests.helpers.clusters import wait_until
from tests.helpers.spark_reference import assert_clicks_exact

CLICK_ROWS = 100_000


def test_clicks_equals_a_spark_batch_query_and_its_exchange_crosses_task_managers(cluster, spark):
    # The shared cluster may still be freeing the slots of an earlier module's job: with one TaskManager's
    # slots taken both window subtasks would land on the other, and nothing would cross.
    wait_until(lambda: (lambda o: o["slots-available"] == o["slots-total"])(cluster.client.overview()), 60,
               "every slot of the shared cluster free")
    env = cluster.environment()
    env.set_parallelism(2)
    clicks.build(env, CLICK_ROWS)
    job = env.execute_async("clicks")
    assert_clicks_exact(spark, job.results(timeout=300), CLICK_ROWS)

    source, window = job.details()["vertices"]
    assert "WindowPreAggregate" in source["name"] and "Window(tumbling)" in window["name"]
    consumer_tm = {s["subtask"]: s["taskmanager-id"] for s in window["subtasks"]}
    assert len(set(consumer_tm.values())) == 2
    for sub in source["subtasks"]:
        sent = {int(ch): n for ch, n in sub["metrics"]["sent_to"].items()}
        assert set(sent) == {0, 1} and all(sent.values()), "each producer feeds both consumers"
        remote = [ch for ch in sent if consumer_tm[ch] != sub["taskmanager-id"]]
        assert remote and sent[remote[0]] > 0, "records went to the other TaskManager"
    assert all(s["metrics"]["watermark"] for s in source["subtasks"]), "sources report their watermark"


def _late_events_job(env, lateness):
    base = 1_700_000_000
    seconds = [1, 5, 12, 3, 25]  # 3 arrives after 12 pushed the watermark past the first window
    rows = [{"k": "a", "v": i + 1, "ts": dt.datetime.fromtimestamp(base + s, dt.timezone.utc)}
            for i, s in enumerate(seconds)]
    windows = (env.from_collection(rows, bundle_rows=1)
               .assign_timestamps_and_watermarks(
                   WatermarkStrategy.for_bounded_out_of_orderness("2 s").with_timestamp_column("ts"))
               .key_by("k").window(TumblingEventTimeWindows.of("10 s")))
    if lateness:
        windows = windows.allowed_lateness(lateness)
    windows.aggregate(n=agg.count(), total=agg.sum("v"), top=agg.max("v")).collect()
    return base


def _offsets(table: pa.Table, base: int) -> list[tuple]:
    return [(int(r["window_start"].timestamp()) - base, r["n"], r["total"], r["top"]) for r in table.to_pylist()]


def test_late_event_is_dropped_and_counted_without_allowed_lateness(cluster):
    env = cluster.environment()
    base = _late_events_job(env, None)
    job = env.execute_async("late-dropped")
    got = job.results(timeout=120)
    # Watermark = max seen - 2 s - 1 us: after 12 s it passes 9.999999 s, the end of [0, 10).
    # Windows start at multiples of 10 s since the epoch; base is a multiple of 10.
    assert _offsets(got, base) == [(0, 2, 3, 2), (10, 1, 3, 3), (20, 1, 5, 5)]
    window = job.details()["vertices"][-1]
    assert sum(s["metrics"]["late_records"] for s in window["subtasks"]) == 1


def test_allowed_lateness_updates_and_refires_the_window(cluster):
    env = cluster.environment()
    base = _late_events_job(env, "5 s")
    got = env.execute_async("late-allowed").results(timeout=120)
    assert _offsets(got, base) == [(0, 2, 3, 2), (0, 3, 7, 4), (10, 1, 3, 3), (20, 1, 5, 5)]


def test_sliding_session_and_user_defined_aggregates_in_batch_mode(cluster):
    base = 1_700_000_000
    seconds = [0, 1, 2, 10, 11, 30]
    rows = [{"k": "x", "v": float(s), "ts": dt.datetime.fromtimestamp(base + s, dt.timezone.utc)} for s in seconds]
    env = cluster.environment()
    env.set_runtime_mode("batch")
    stream = env.from_collection(rows).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_column("ts"))
    (stream.key_by("k").window(EventTimeSessionWindows.with_gap("5 s"))
           .aggregate(n=agg.count(), spread=agg.udf(lambda s: s.max() - s.min(), "v")).collect())
    sessions = env.execute_async("sessions").results(timeout=120)
    got = sorted((int(r["window_start"].timestamp()) - base, int(r["window_end"].timestamp()) - base, r["n"], r["spread"])
                 for r in sessions.to_pylist())
    assert got == [(0, 7, 3, 2.0), (10, 16, 2, 1.0), (30, 35, 1, 0.0)]

    env = cluster.environment()
    env.set_runtime_mode("batch")
    env.from_collection(rows).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_column("ts")
    ).key_by("k").window(SlidingEventTimeWindows.of("10 s", "5 s")).aggregate(n=agg.count(), avg=agg.avg("v")).collect()
    sliding = env.execute_async("sliding").results(timeout=120)
    got = sorted((int(r["window_start"].timestamp()) - base, r["n"], r["avg"]) for r in sliding.to_pylist())
    assert got == [(-5, 3, 1.0), (0, 3, 1.0), (5, 2, 10.5), (10, 2, 10.5), (25, 1, 30.0), (30, 1, 30.0)]


def test_batch_mode_over_parquet_files_equals_spark(cluster, spark, tmp_path):
    source_dir = tmp_path / "in"
    source_dir.mkdir()
    for part in range(4):
        users = list(range(part, 4000, 4))
        pq.write_table(pa.table({"user": users, "amount": [u * 0.5 for u in users],
                                 "country": [["de", "fr", "jp"][u % 3] for u in users]}),
                       source_dir / f"part-{part}.parquet")
    out_dir = tmp_path / "out"
    env = cluster.environment()
    env.set_runtime_mode("batch")
    env.set_parallelism(2)
    (env.read_files(str(source_dir), "parquet")
        .filter("amount > 100").with_columns(cents="CAST(amount * 100 AS BIGINT)")
        .write_parquet(str(out_dir), partition_by=["country"]))
    job = env.execute_async("files-batch")
    assert job.wait(240) == "FINISHED"
    got = spark.read.parquet(str(out_dir)).selectExpr("user", "cents", "country")
    want = spark.read.parquet(str(source_dir)).filter("amount > 100") \
        .selectExpr("user", "CAST(amount * 100 AS BIGINT) AS cents", "country")
    assert sorted(map(tuple, got.collect())) == sorted(map(tuple, want.collect()))
    assert sorted(p.name for p in out_dir.iterdir() if not p.name.startswith(".")) == \
        ["country=de", "country=fr", "country=jp"]


@pytest.mark.parametrize("build, needle", [
    (lambda env: env.datagen("user INTEGR, amount DOUBLE", number_of_rows=10).collect(), "does not parse"),
    (lambda env: env.datagen("user INT", number_of_rows=10).filter("nope > 1").collect(), "'Filter'"),
    (lambda env: env.datagen("user INT", number_of_rows=10).key_by("account").map(lambda f: f).collect(),
     "account"),
    (lambda env: env.datagen("user INT", number_of_rows=10).map(lambda f: [1, 2], schema="x INT").collect(),
     "must return a pandas DataFrame or an Arrow table"),
])
def test_bad_programs_fail_with_the_operator_named_and_the_cluster_stays_up(cluster, build, needle):
    env = cluster.environment()
    build(env)
    job = env.execute_async("bad")
    with pytest.raises(JobFailed) as failure:
        job.wait(120)
    assert needle in failure.value.cause, failure.value.cause
    assert cluster.client.overview()["taskmanagers"] == 2
    assert cluster.jobmanager.alive() and all(tm.alive() for tm in cluster.taskmanagers)


def test_windows_need_event_time_before_the_job_is_built(cluster):
    env = cluster.environment()
    with pytest.raises(ValueError, match="assign_timestamps_and_watermarks"):
        env.datagen("user INT, ts TIMESTAMP", number_of_rows=10).key_by("user") \
            .window(TumblingEventTimeWindows.of("1 s")).aggregate(n=agg.count())
    with pytest.raises(ValueError, match="whole multiple"):
        SlidingEventTimeWindows.of("10 s", "3 s")


def test_union_merges_streams(cluster):
    env = cluster.environment()
    a = env.datagen("seq BIGINT", number_of_rows=500, fields={"seq": {"kind": "sequence"}})
    b = env.datagen("seq BIGINT", number_of_rows=300, fields={"seq": {"kind": "sequence", "start": 10_000}})
    a.union(b).filter(col("seq") % 2 == 0).collect()
    got = env.execute_async("union").results(timeout=120)
    assert collections.Counter(got.column("seq").to_pylist()) == collections.Counter(
        [s for s in range(500) if s % 2 == 0] + [s for s in range(10_000, 10_300) if s % 2 == 0])


def _rss(pid: int) -> int:
    """The TaskManager process's own memory: where a producer's unsent buffers and a consumer's
    received ones live (its Spark JVM's heap grows towards its maximum on its own schedule)."""
    import psutil

    return psutil.Process(pid).memory_info().rss


def test_a_slow_consumer_backpressures_its_producer_and_memory_stays_bounded(tmp_path):
    import time

    from tests.helpers.clusters import started_cluster

    def slow(frame):
        time.sleep(len(frame) * 0.001)  # 1,000 rows/s at most, whatever the batches
        return frame

    # Small bundles fill the four buffers a consumer may be behind within seconds; Spark threads beyond
    # the slots keep the sleeping consumer from also holding the thread its producer's actions need,
    # so what slows the producer is the missing credit alone.
    config = {"taskmanager.bundle.max-rows": 50_000, "spark.master": "local[4]"}
    with started_cluster(tmp_path, taskmanagers=1, slots=2, config=config) as cluster:
        env = cluster.environment()
        (env.datagen("seq BIGINT, payload STRING", fields={"seq": {"kind": "sequence"}})  # unbounded, unthrottled
            .rebalance().map(slow, schema="seq BIGINT, payload STRING").blackhole())
        job = env.execute_async("slow consumer")
        _pressed_with_bounded_memory(cluster, job)


def _pressed_with_bounded_memory(cluster, job):
    import time

    from tests.helpers.clusters import wait_until

    source = lambda: job.details()["vertices"][0]["subtasks"][0]  # noqa: E731
    wait_until(lambda: (source()["metrics"] or {}).get("backpressure_ratio", 0) > 0.5, 120, "backpressure")
    pids = [tm.pid for tm in cluster.taskmanagers]
    consumed = lambda: job.details()["vertices"][1]["subtasks"][0]["metrics"]["records_in"]  # noqa: E731
    before = sum(_rss(p) for p in pids)
    time.sleep(15)  # a fixed span to measure over: memory is sampled, not waited on
    after, consumed_after = sum(_rss(p) for p in pids), consumed()
    still_pressed = source()["metrics"]["backpressure_ratio"]
    job.cancel()
    job.wait(60)
    assert still_pressed > 0.5
    assert consumed_after > 0, "the slow consumer gets rows (a bundle may outlast the 15 s window)"
    assert after - before < 150 * 2**20, f"TaskManager memory grew by {(after - before) / 2**20:.0f} MiB"
