"""``make bench``: the reference job "clicks" on Flinkbench and on Spark Structured Streaming, same run.

Prints sustained rows/s of each (processed rows over wall time, after a warm-up), their ratio,
Flinkbench's end-to-end latency p50/p99 in several runs (sink wall-clock time minus the window's
event-time end, so it includes the 1 s watermark lag) with where the bundles' time went (per-phase
task metrics), the peak memory of the local cluster, the seconds from ``%flink local`` to a first
``%%flink`` result in a fresh kernel, checkpoint duration by state size (full and incremental
checkpoints, with the bytes each uploads), and a scaling table (1, 2, 4 TaskManagers, each against
Structured Streaming on as many cores); ``--out FILE`` writes the same
figures as JSON. ``--warmup``/``--measure`` shorten every measurement for a development run, and
``--skip`` leaves parts out.

Not part of ``make test``: figures depend on the machine and what else runs on it.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from runtime.cluster import LocalCluster  # noqa: E402
from runtime.config import Configuration  # noqa: E402
from runtime.examples import clicks  # noqa: E402
from tests.benchmarks import phases  # noqa: E402
from tests.benchmarks.memory import PeakRss  # noqa: E402

WARMUP_S = 20.0
MEASURE_S = 40.0
PARTS = ("sql", "latency", "first-result", "checkpoints", "scaling")


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


def flinkbench_throughput(cluster, parallelism: int = 2, warmup: float = WARMUP_S, measure: float = MEASURE_S) -> float:
    env = cluster.environment()
    env.set_parallelism(parallelism)
    clicks.build(env, None, sink="blackhole", event_rate=1_000_000.0)
    job = env.execute_async(f"bench: clicks throughput p{parallelism}")
    wait_flowing(cluster, job)
    time.sleep(warmup)
    before, t0 = phases.snapshot(cluster.client, job.job_id), time.monotonic()
    rate = sustained(lambda: source_rows(cluster.client, job.job_id), 0.0, measure)
    phases.show(f"throughput p{parallelism}", phases.breakdown(before, phases.snapshot(cluster.client, job.job_id),
                                                              time.monotonic() - t0))
    job.cancel()
    job.wait(60)
    return rate


def flinkbench_sql_throughput(cluster, warmup: float = WARMUP_S, measure: float = MEASURE_S) -> float:
    """The clicks job written as a SQL TUMBLE query (runtime.examples.clicks.sql), measured the same way."""
    from runtime.table import StreamTableEnvironment

    env = cluster.environment()
    env.set_parallelism(2)
    t_env = StreamTableEnvironment.create(env)
    *tables, insert = clicks.sql(sink="blackhole", event_rate=1_000_000.0)
    for statement in tables:
        t_env.execute_sql(statement)
    job = t_env.execute_sql(insert).get_job_client()
    wait_flowing(cluster, job)
    rate = sustained(lambda: source_rows(cluster.client, job.job_id), warmup, measure)
    job.cancel()
    job.wait(60)
    return rate


def flinkbench_latency(cluster, rows_per_second: float, warmup: float = WARMUP_S,
                       measure: float = MEASURE_S) -> dict:
    """Run at a fixed rate with event time = wall time; latency = emit time - window end, and the
    collect delivery (client receipt - emit time) on top; the phases of the measured part."""
    env = cluster.environment()
    env.set_parallelism(2)
    counted = clicks.build(env, None, sink="none", rows_per_second=rows_per_second, realtime=True)
    counted.with_columns(emitted_at="current_timestamp()").collect()
    job = env.execute_async("bench: clicks latency")
    wait_flowing(cluster, job)
    measured_from = time.time() + warmup  # windows ending before this include the start-up
    deadline = time.monotonic() + warmup + measure
    latencies, deliveries, before = [], [], None
    for table in job.iter_results():
        received = time.time()
        if before is None and received >= measured_from:
            before, t0 = phases.snapshot(cluster.client, job.job_id), time.monotonic()
        for row in table.to_pylist():
            if row["window_end"].timestamp() >= measured_from:
                latencies.append((row["emitted_at"] - row["window_end"]).total_seconds())
                deliveries.append(received - row["emitted_at"].timestamp())
        if time.monotonic() > deadline:
            break
    spent = phases.breakdown(before, phases.snapshot(cluster.client, job.job_id), time.monotonic() - t0) \
        if before is not None else {}
    pending = {name: p for name, (_, _, _, p) in (before or {}).items() if p is not None}
    job.cancel()
    job.wait(60)
    return {"p50": percentile(latencies, 0.5), "p99": percentile(latencies, 0.99),
            "delivery_p50": percentile(deliveries, 0.5), "phases": spent, "pending_at_start": pending}


def structured_streaming_throughput(cores: int = 2, warmup: float = WARMUP_S, measure: float = MEASURE_S,
                                   rows_per_core: int | None = None) -> float:
    """The same query in Spark Structured Streaming on ``cores`` local cores: a rate-micro-batch source
    (``rows_per_core`` rows per core and micro-batch; by default as many as a Flinkbench source reads per
    bundle at most, taskmanager.bundle.max-rows) -> same generated columns -> window."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from runtime.taskmanager.datagen_sql import datagen_column
    from runtime.taskmanager.spark_session import end_classic_jvm

    spark = (SparkSession.builder.master(f"local[{cores}]").appName("bench-structured-streaming")
             .config("spark.sql.shuffle.partitions", str(cores)).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.memory", "2g").getOrCreate())
    params = {"schema": clicks.SCHEMA, **{k: v for k, v in clicks.source_options(None, event_rate=1_000_000.0).items()
                                          if v is not None}}
    columns = [F.expr(datagen_column(f.name, f.dataType.simpleString(), params["fields"].get(f.name, {}),
                                     params["seed"], params)).cast(f.dataType).alias(f.name)
               for f in StructType.fromDDL(clicks.SCHEMA).fields]
    # Fixed micro-batches, as fast as the query goes: the time-driven "rate" source caps throughput at its
    # rowsPerSecond (its 4 M rows/s was reached).
    rows_per_core = rows_per_core or Configuration.load().get("taskmanager.bundle.max-rows")  # as TaskManagers read it
    stream = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_core * cores)
              .option("numPartitions", cores).load()
              .withColumnRenamed("value", "_offset").select(*columns))
    query = (stream.withWatermark("ts", "1 second").filter("amount > 0.1")
             .groupBy("user", F.window("ts", "10 seconds")).agg(F.count(F.lit(1)).alias("clicks"),
                                                                  F.sum("amount").alias("total"))
             .writeStream.format("noop").outputMode("append").start())
    progress = MicroBatchRows(query)
    try:
        progress.wait_first()
        rate = progress.sustained(warmup, measure)
    finally:
        progress.close()
        query.stop()
        end_classic_jvm(spark)  # a stopped session's JVM lives on (and its state store's maintenance runs)
    return rate


class MicroBatchRows:
    """Rows a streaming query read in its completed micro-batches, and when each batch ended.

    Micro-batches last seconds (a saturated time-driven source's grow to tens of seconds), so counting
    the rows of the batches that happen to complete inside a fixed window says more about where batch
    ends fall than about speed. ``sustained`` measures from one batch end to
    another instead: the rows of the batches in between over the time they took. The query keeps only
    its last 100 progress reports, which a fast query passes within a long measurement: they are
    merged as they come."""

    def __init__(self, query, interval: float = 0.5):
        self.query, self.interval = query, interval
        self.by_batch: dict[int, tuple[int, float]] = {}  # batch id -> (input rows, end as epoch seconds)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True, name="micro-batch-rows")
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            self._merge()

    def _merge(self) -> None:
        reports = self.query.recentProgress
        with self._lock:
            self.by_batch.update({p["batchId"]: (p["numInputRows"], batch_end(p)) for p in reports})

    def rows(self) -> int:
        self._merge()
        with self._lock:
            return sum(rows for rows, _ in self.by_batch.values())

    def sustained(self, warmup: float, measure: float, timeout: float = 300.0) -> float:
        """Rows/s over the whole batches that ended from ``warmup`` to ``warmup + measure`` seconds from now
        (waiting on for the next batch end if fewer than two ended in that span)."""
        time.sleep(warmup)
        start = time.time()
        time.sleep(measure)
        deadline = time.monotonic() + timeout
        while True:
            self._merge()
            with self._lock:
                rate = rate_after(list(self.by_batch.values()), start)
            if rate is not None:
                return rate
            if time.monotonic() > deadline:
                raise TimeoutError(f"no micro-batch ended within {timeout:g} s of the measurement")
            time.sleep(self.interval)

    def wait_first(self, timeout: float = 300.0) -> None:
        """Until a micro-batch with rows completed (the session and its code are warm)."""
        deadline = time.monotonic() + timeout
        while self.rows() == 0:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no micro-batch of the Structured Streaming query completed in {timeout:g} s")
            time.sleep(self.interval)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def rate_after(batches: list[tuple[int, float]], start: float) -> float | None:
    """Rows/s of the (rows, end) batches that ended after ``start``, timed from the last batch end at or
    before it to the last end; None until a batch ended on each side."""
    ends = sorted((end, rows) for rows, end in batches if rows)
    before = [end for end, _ in ends if end <= start]
    after = [(end, rows) for end, rows in ends if end > start]
    if not before or not after:
        return None
    return sum(rows for _, rows in after) / (after[-1][0] - before[-1])


def batch_end(progress: dict) -> float:
    """When a micro-batch ended (epoch seconds): its trigger's start plus the trigger's duration."""
    started = datetime.datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp()
    return started + progress["durationMs"]["triggerExecution"] / 1000.0


def report(figures: dict, out: str | None) -> None:
    """Print the figures as JSON, and write them to ``out`` when given."""
    print(json.dumps(figures, indent=2))
    if out:
        with open(out, "w") as fh:
            json.dump(figures, fh, indent=2)


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def latency_runs(cluster, rate: float, runs: int, warmup: float, measure: float) -> dict:
    """``runs`` latency measurements at ``rate``, each printed with where its time went."""
    p50s, p99s, deliveries, last = [], [], [], {}
    for i in range(runs):
        last = flinkbench_latency(cluster, rows_per_second=rate, warmup=warmup, measure=measure)
        p50s.append(_seconds(last["p50"]))
        p99s.append(_seconds(last["p99"]))
        deliveries.append(_seconds(last["delivery_p50"]))
        print(f"flinkbench latency at {rate:,.0f} rows/s, run {i + 1}: p50 {p50s[-1]} s, p99 {p99s[-1]} s "
              f"(collect delivery p50 {deliveries[-1]} s on top; source rows pending when measuring began: "
              f"{last['pending_at_start'] or '-'})", flush=True)
        phases.show(f"latency run {i + 1}", last["phases"])
    return {"latency_p50_runs": p50s, "latency_p99_runs": p99s, "collect_delivery_p50_s_runs": deliveries,
            "latency_phases": last.get("phases", {})}


def first_result_runs(runs: int) -> dict:
    from tests.benchmarks.first_result import first_result_s

    seconds = []
    for i in range(runs):
        seconds.append(first_result_s())
        print(f"first result in a fresh kernel, run {i + 1}: {seconds[-1]} s from %flink local to the "
              "rows of a %%flink cell", flush=True)
    return {"first_result_s_runs": seconds}


def scaling_table(sizes: list[int], known: dict, warmup: float, measure: float) -> list[dict]:
    """Throughput at parallelism n on n TaskManagers of one slot, with the cluster's peak memory, and
    Structured Streaming on n local cores; ``known`` holds rows already measured (by n)."""
    rows = []
    for n in sizes:
        if n not in known:
            with LocalCluster(taskmanagers=n, slots=1, config={"spark.driver.memory": "2g"}) as cluster, \
                    PeakRss(cluster) as peak:
                ours = flinkbench_throughput(cluster, n, warmup, measure)
            theirs = structured_streaming_throughput(n, warmup, measure)
            known[n] = {"flinkbench_rows_per_s": round(ours), "cluster_peak_rss_gib": peak.gib,
                        "cluster_peak_pss_gib": peak.pss_gib,
                        "structured_streaming_rows_per_s": round(theirs)}
        row = {"parallelism": n, "taskmanagers": n, **known[n]}
        theirs = row["structured_streaming_rows_per_s"]
        row["ratio"] = round(row["flinkbench_rows_per_s"] / theirs, 3) if theirs else None
        print(f"scaling: p{n} on {n} TaskManagers {row['flinkbench_rows_per_s']:,} rows/s, cluster peak "
              f"{row['cluster_peak_rss_gib']} GiB; Structured Streaming local[{n}] {theirs:,} rows/s; "
              f"ratio {row['ratio']}", flush=True)
        rows.append(row)
    return rows


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the figures as JSON to this file")
    parser.add_argument("--warmup", type=float, default=WARMUP_S, help=f"seconds before measuring (default {WARMUP_S:g})")
    parser.add_argument("--measure", type=float, default=MEASURE_S, help=f"seconds measured (default {MEASURE_S:g})")
    parser.add_argument("--latency-runs", type=int, default=3)
    parser.add_argument("--latency-rate", type=float, help="rows/s of the latency runs (default: half the measured "
                        "throughput); a fixed rate compares runs made under different load")
    parser.add_argument("--first-result-runs", type=int, default=3)
    parser.add_argument("--checkpoint-keys", default="10000,100000,1000000", help="state sizes, comma-separated")
    parser.add_argument("--scaling", default="1,2,4", help="parallelisms (= TaskManagers), comma-separated")
    parser.add_argument("--skip", default="", help=f"parts to leave out, comma-separated: {', '.join(PARTS)}")
    args = parser.parse_args()
    args.skip = {p for p in args.skip.split(",") if p}
    if args.skip - set(PARTS):
        parser.error(f"--skip: unknown parts {sorted(args.skip - set(PARTS))}; known: {', '.join(PARTS)}")
    return args


def main() -> int:
    args = parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    timing = dict(warmup=args.warmup, measure=args.measure)
    figures: dict = {}
    with LocalCluster(taskmanagers=2, slots=1, config={"spark.driver.memory": "2g"}) as cluster, \
            PeakRss(cluster) as peak:
        ours = flinkbench_throughput(cluster, 2, **timing)
        print(f"flinkbench clicks p2 on 2 TaskManagers: {ours:,.0f} rows/s sustained", flush=True)
        if "sql" not in args.skip:
            as_sql = flinkbench_sql_throughput(cluster, **timing)
            print(f"flinkbench clicks as a SQL TUMBLE query: {as_sql:,.0f} rows/s sustained "
                  f"({as_sql / ours:.2f}x the DataStream version; target 0.9x)", flush=True)
            figures.update(flinkbench_sql_rows_per_s=round(as_sql),
                           sql_to_datastream_ratio=round(as_sql / ours, 3) if ours else None)
        if "latency" not in args.skip:
            rate = args.latency_rate or max(1_000.0, ours * 0.5)
            figures.update(latency_runs(cluster, rate, args.latency_runs, **timing), latency_rows_per_s=round(rate))
    figures.update(cluster_peak_rss_gib=peak.gib, cluster_peak_pss_gib=peak.pss_gib)
    print(f"peak memory of the local cluster (2 TaskManagers, JVMs included): RSS {peak.gib} GiB, PSS "
          f"{peak.pss_gib} GiB (shared pages counted once)", flush=True)
    theirs = structured_streaming_throughput(2, **timing)
    print(f"Spark Structured Streaming, same query, local[2]: {theirs:,.0f} rows/s sustained", flush=True)
    figures.update(flinkbench_rows_per_s=round(ours), structured_streaming_rows_per_s=round(theirs),
                   ratio=round(ours / theirs, 3) if theirs else None)
    if "latency" not in args.skip:
        figures["latency_p50_s"] = _median(figures["latency_p50_runs"])
        figures["latency_p99_s"] = _median(figures["latency_p99_runs"])
    if "first-result" not in args.skip:
        figures.update(first_result_runs(args.first_result_runs))
    if "checkpoints" not in args.skip:
        from tests.benchmarks.checkpoints import checkpoint_p99_by_keys

        keys = [int(k) for k in args.checkpoint_keys.split(",") if k]
        measured = checkpoint_p99_by_keys(keys, **timing)
        figures.update(checkpoint_p99_s_by_keys=measured["clicks full"],
                       checkpoint_p99_s_by_keys_incremental=measured["clicks incremental"],
                       checkpoint_details_by_keys=measured)
    if "scaling" not in args.skip:
        known = {2: {"flinkbench_rows_per_s": round(ours), "cluster_peak_rss_gib": peak.gib,
                     "cluster_peak_pss_gib": peak.pss_gib,
                     "structured_streaming_rows_per_s": round(theirs)}}
        figures["scaling"] = scaling_table([int(n) for n in args.scaling.split(",") if n], known, **timing)
    report(figures, args.out)
    return 0


def _median(values: list):
    present = sorted(v for v in values if v is not None)
    return present[len(present) // 2] if present else None


if __name__ == "__main__":
    sys.exit(main())
