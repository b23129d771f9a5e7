"""The Structured Streaming side's Spark code, run inside its child process (tests.benchmarks.structured_streaming):
the session in either JVM profile, the clicks query on its two sources, and what each job measures."""
from __future__ import annotations

import os
import threading
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from runtime.config import Configuration
from runtime.examples import clicks
from runtime.taskmanager import class_archive
from runtime.taskmanager.datagen_sql import datagen_column
from runtime.taskmanager.spark_session import cap_block_manager_pools, end_classic_jvm, session_settings
from tests.benchmarks.comparison import OURS_JVM, SPARK_JVM
from tests.benchmarks.cpu_use import CpuSeries, others_during, span_figures
from tests.benchmarks.micro_batches import MicroBatchRows
from tests.benchmarks.process_trees import tree_cpu_seconds
from tests.benchmarks.window_latency import WindowArrivals, epoch_seconds, span_window_ends, summary

WINDOW_S = 10.0
EVENT_RATE = 1_000_000.0  # offsets per event-time second of the throughput job, as Flinkbench's throughput job


def settings(cores: int, jvm: str) -> dict[str, str]:
    """The session's settings: Spark's defaults but for what the query needs (cores, the 2 GB heap a
    TaskManager's driver has, UTC, no UI), or everything a Flinkbench TaskManager's session is built with
    (its JVM options and class archive, page size, history limits)."""
    plain = {"spark.master": f"local[{cores}]", "spark.driver.memory": "2g", "spark.sql.shuffle.partitions": str(cores),
             "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.sql.session.timeZone": "UTC"}
    if jvm == SPARK_JVM:
        return plain
    if jvm != OURS_JVM:
        raise ValueError(f"unknown JVM profile {jvm!r}")
    conf = Configuration.load()
    ours = session_settings(conf, cores)
    ours["spark.driver.extraJavaOptions"], _ = class_archive.driver_java_options(
        ours["spark.driver.extraJavaOptions"], class_archive.archive_path(conf))
    return {**ours, "spark.master": plain["spark.master"], "spark.sql.shuffle.partitions": str(cores)}


def session(cores: int, jvm: str):
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    builder = SparkSession.builder.appName("bench-structured-streaming")
    for key, value in settings(cores, jvm).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if jvm == OURS_JVM:
        cap_block_manager_pools(spark, Configuration.load().get("taskmanager.spark.block-manager-threads"))
    return spark


def stop(spark) -> None:
    end_classic_jvm(spark)  # a stopped session's JVM lives on (and its state store's maintenance runs)


def columns(users: int = clicks.USERS, wall_clock_ts: bool = False) -> list:
    """The clicks source's generated columns from ``_offset``; event time from the offset at EVENT_RATE, or
    (``wall_clock_ts``) the rate source's own timestamp."""
    options = clicks.source_options(None, event_rate=EVENT_RATE, users=users)
    params = {"schema": clicks.SCHEMA, **{k: v for k, v in options.items() if v is not None}}
    out = []
    for field in StructType.fromDDL(clicks.SCHEMA).fields:
        if field.name == "ts" and wall_clock_ts:
            out.append(F.col("timestamp").alias("ts"))
            continue
        sql = datagen_column(field.name, field.dataType.simpleString(), params["fields"].get(field.name, {}),
                             params["seed"], params)
        out.append(F.expr(sql).cast(field.dataType).alias(field.name))
    return out


def windowed(stream):
    """A 1 s watermark lag, the filter, 10 s tumbling windows per user: count and sum, as clicks.counts."""
    return (stream.withWatermark("ts", "1 second").filter("amount > 0.1")
            .groupBy("user", F.window("ts", f"{WINDOW_S:g} seconds"))
            .agg(F.count(F.lit(1)).alias("clicks"), F.sum("amount").alias("total")))


def archive_mapped(spark) -> bool:
    """The driver JVM maps the Flinkbench class archive."""
    archive = class_archive.archive_path(Configuration.load())
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    return bool(archive and proc is not None and class_archive.is_mapped(proc.pid, archive))


def throughput(spark, params: dict) -> dict:
    """Fixed micro-batches of ``rows_per_batch`` as fast as they go; rows/s and rows per CPU-second over whole
    batches after the warm-up."""
    cores = params["cores"]
    stream = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", params["rows_per_batch"])
              .option("numPartitions", cores).load().withColumnRenamed("value", "_offset").select(*columns()))
    writer = windowed(stream).writeStream.format("noop").outputMode("append")
    if params.get("checkpoints"):
        writer = writer.option("checkpointLocation", os.path.join(params["workdir"], "checkpoint"))
    with CpuSeries(lambda: tree_cpu_seconds(os.getpid())) as cpu:
        query = writer.start()
        progress = MicroBatchRows(query)
        try:
            progress.wait_first()
            first_batch_s = time.time() - params["launched_at"]
            span = progress.measure(params["warmup"], params["measure"])
            batches = sum(1 for rows, end in progress.by_batch.values() if rows and span.start < end <= span.end)
        finally:
            progress.close()
            query.stop()
    return span_figures(span.rows, span.start, span.end, cpu) | {
        "first_batch_s": round(first_batch_s, 2), "batches": batches, "class_archive_mapped": archive_mapped(spark)}


def latency(spark, params: dict) -> dict:
    """The rate source at ``rate`` rows/s, windows delivered to the driver: per window, its arrival less its
    end, over the windows of the measured span, read on until each has arrived or ``stall`` s have passed."""
    users, lock = params["users"], threading.Lock()
    arrivals = WindowArrivals(users)

    def deliver(df, _batch_id):
        table = df.select(F.col("window.end").alias("window_end"), "user").toArrow()
        received = time.time()
        with lock:
            arrivals.add(received, epoch_seconds(table.column("window_end")), table.column("user").to_pylist())

    stream = (spark.readStream.format("rate").option("rowsPerSecond", max(1, round(params["rate"])))
              .option("numPartitions", params["cores"]).load().withColumnRenamed("value", "_offset")
              .select(*columns(users, wall_clock_ts=True)))
    writer = windowed(stream).writeStream.foreachBatch(deliver).outputMode("append")
    if params["trigger"] != "default":
        writer = writer.trigger(processingTime=params["trigger"])
    with CpuSeries(lambda: tree_cpu_seconds(os.getpid())) as cpu:
        query = writer.start()
        progress = MicroBatchRows(query)
        try:
            progress.wait_first()
            measured_from = time.time() + params["warmup"]
            ends = span_window_ends(measured_from, measured_from + params["measure"], WINDOW_S)
            await_windows(arrivals, lock, ends, give_up=measured_from + params["measure"] + params["stall"])
            read_until = time.time()
        finally:
            progress.close()
            query.stop()
    with lock:
        return {**summary(arrivals.latencies(ends), len(ends)), "missing": arrivals.missing(ends),
                "first_row_per_window_s": [round(v, 3) for v in arrivals.first_row_latencies(ends)],
                "others_share": others_during(cpu, measured_from, read_until)}


def await_windows(arrivals: WindowArrivals, lock: threading.Lock, ends: list[float], give_up: float) -> None:
    """Until the windows ``ends`` are whole (the query's batches hand them in) or ``give_up`` passed."""
    while time.time() < give_up:
        with lock:
            if arrivals.complete(ends):
                return
        time.sleep(0.05)
