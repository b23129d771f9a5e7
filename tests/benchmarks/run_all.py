"""``make bench``: the reference job "clicks" on Flinkbench and on Spark Structured Streaming, same run.

Prints sustained rows/s of each (processed rows over wall time, after a warm-up), their ratio, and
Flinkbench's end-to-end latency p50/p99 (sink wall-clock time minus the window's event-time end, so
it includes the 1 s watermark lag); ``--out FILE`` writes the same figures as JSON.

Not part of ``make test``: figures depend on the machine and what else runs on it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from runtime.cluster import LocalCluster  # noqa: E402
from runtime.examples import clicks  # noqa: E402

WARMUP_S = 20.0
MEASURE_S = 40.0


def source_rows(client, job_id: str) -> int:
    vertex = client.get(f"/jobs/{job_id}")["vertices"][0]
    return sum((s.get("metrics") or {}).get("records_in", 0) for s in vertex["subtasks"])


def sustained(sample, warmup: float, measure: float) -> float:
    """Rows/s between two samples taken after the warm-up."""
    time.sleep(warmup)
    t0, n0 = time.monotonic(), sample()
    time.sleep(measure)
    t1, n1 = time.monotonic(), sample()
    return (n1 - n0) / (t1 - t0)


def wait_flowing(cluster, job, timeout: float = 300.0) -> None:
    """Until every subtask runs and the sources have read rows (the Spark sessions are up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        details = job.details()
        running = all(s["status"] == "RUNNING" for v in details["vertices"] for s in v["subtasks"])
        if running and source_rows(cluster.client, job.job_id) > 0:
            return
        time.sleep(0.5)
    raise TimeoutError(f"job {job.job_id} did not start processing in {timeout:g} s")


def percentile(values: list, q: float):
    """The value below which a fraction ``q`` of ``values`` lies; None when there are none."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


def flinkbench_throughput(cluster) -> float:
    env = cluster.environment()
    env.set_parallelism(2)
    clicks.build(env, None, sink="blackhole", event_rate=1_000_000.0)
    job = env.execute_async("bench: clicks throughput")
    wait_flowing(cluster, job)
    rate = sustained(lambda: source_rows(cluster.client, job.job_id), WARMUP_S, MEASURE_S)
    job.cancel()
    job.wait(60)
    return rate


def flinkbench_sql_throughput(cluster) -> float:
    """The clicks job written as a SQL TUMBLE query (runtime.examples.clicks.sql), measured the same way."""
    from runtime.api.table import StreamTableEnvironment

    env = cluster.environment()
    env.set_parallelism(2)
    t_env = StreamTableEnvironment.create(env)
    *tables, insert = clicks.sql(sink="blackhole", event_rate=1_000_000.0)
    for statement in tables:
        t_env.execute_sql(statement)
    job = t_env.execute_sql(insert).get_job_client()
    wait_flowing(cluster, job)
    rate = sustained(lambda: source_rows(cluster.client, job.job_id), WARMUP_S, MEASURE_S)
    job.cancel()
    job.wait(60)
    return rate


def flinkbench_latency(cluster, rows_per_second: float) -> tuple[float | None, float | None]:
    """Run at a fixed rate with event time = wall time; latency = emit time - window end."""
    env = cluster.environment()
    env.set_parallelism(2)
    counted = clicks.build(env, None, sink="none", rows_per_second=rows_per_second, realtime=True)
    counted.with_columns(emitted_at="current_timestamp()").collect()
    job = env.execute_async("bench: clicks latency")
    wait_flowing(cluster, job)
    measured_from = time.time() + WARMUP_S  # windows ending before this include the start-up
    deadline = time.monotonic() + WARMUP_S + MEASURE_S
    latencies = []
    for table in job.iter_results():
        for row in table.to_pylist():
            if row["window_end"].timestamp() >= measured_from:
                latencies.append((row["emitted_at"] - row["window_end"]).total_seconds())
        if time.monotonic() > deadline:
            break
    job.cancel()
    job.wait(60)
    return percentile(latencies, 0.5), percentile(latencies, 0.99)


def structured_streaming_throughput() -> float:
    """The same query in Spark Structured Streaming: rate source -> same generated columns -> window."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from runtime.taskmanager.spark import datagen_column

    spark = (SparkSession.builder.master("local[2]").appName("bench-structured-streaming")
             .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.memory", "2g").getOrCreate())
    params = {"schema": clicks.SCHEMA, **{k: v for k, v in clicks.source_options(None, event_rate=1_000_000.0).items()
                                          if v is not None}}
    columns = [F.expr(datagen_column(f.name, f.dataType.simpleString(), params["fields"].get(f.name, {}),
                                     params["seed"], params)).cast(f.dataType).alias(f.name)
               for f in StructType.fromDDL(clicks.SCHEMA).fields]
    stream = (spark.readStream.format("rate").option("rowsPerSecond", 4_000_000).option("numPartitions", 2).load()
              .withColumnRenamed("value", "_offset").select(*columns))
    query = (stream.withWatermark("ts", "1 second").filter("amount > 0.1")
             .groupBy("user", F.window("ts", "10 seconds")).agg(F.count(F.lit(1)).alias("clicks"),
                                                                  F.sum("amount").alias("total"))
             .writeStream.format("noop").outputMode("append").start())
    processed = lambda: sum(p["numInputRows"] for p in query.recentProgress)  # noqa: E731
    try:
        rate = sustained(processed, WARMUP_S, MEASURE_S)
    finally:
        query.stop()
        spark.stop()
    return rate


def report(figures: dict, out: str | None) -> None:
    """Print the figures as JSON, and write them to ``out`` when given."""
    print(json.dumps(figures, indent=2))
    if out:
        with open(out, "w") as fh:
            json.dump(figures, fh, indent=2)


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the figures as JSON to this file")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with LocalCluster(taskmanagers=2, slots=1, config={"spark.driver.memory": "2g"}) as cluster:
        ours = flinkbench_throughput(cluster)
        print(f"flinkbench clicks p2 on 2 TaskManagers: {ours:,.0f} rows/s sustained", flush=True)
        as_sql = flinkbench_sql_throughput(cluster)
        print(f"flinkbench clicks as a SQL TUMBLE query: {as_sql:,.0f} rows/s sustained "
              f"({as_sql / ours:.2f}x the DataStream version; target 0.9x)", flush=True)
        p50, p99 = flinkbench_latency(cluster, rows_per_second=max(1_000.0, ours * 0.5))
        print(f"flinkbench latency at {ours * 0.5:,.0f} rows/s: p50 {_seconds(p50)} s, p99 {_seconds(p99)} s", flush=True)
    theirs = structured_streaming_throughput()
    print(f"Spark Structured Streaming, same query, local[2]: {theirs:,.0f} rows/s sustained", flush=True)
    figures = {"flinkbench_rows_per_s": round(ours), "flinkbench_sql_rows_per_s": round(as_sql),
               "sql_to_datastream_ratio": round(as_sql / ours, 3) if ours else None,
               "structured_streaming_rows_per_s": round(theirs),
               "ratio": round(ours / theirs, 3) if theirs else None,
               "latency_p50_s": _seconds(p50), "latency_p99_s": _seconds(p99)}
    report(figures, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
