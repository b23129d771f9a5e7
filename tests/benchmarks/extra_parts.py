"""Parts of ``make bench`` beyond the fair comparison, left out unless ``--parts`` names them: the clicks job as SQL
beside its DataStream version, checkpoint durations by state size, and a scaling table (1, 2, 4 TaskManagers,
each against Structured Streaming on as many cores at its best batch size)."""
from __future__ import annotations

from runtime.cluster import LocalCluster
from runtime.examples import clicks
from tests.benchmarks import structured_streaming
from tests.benchmarks.flinkbench_runs import source_rows, sustained, wait_flowing
from tests.benchmarks.memory import PeakRss


def flinkbench_throughput(cluster, parallelism: int, warmup: float, measure: float) -> float:
    env = cluster.environment()
    env.set_parallelism(parallelism)
    clicks.build(env, None, sink="blackhole", event_rate=1_000_000.0)
    job = env.execute_async(f"bench: clicks throughput p{parallelism}")
    wait_flowing(cluster, job)
    rate = sustained(lambda: source_rows(cluster.client, job.job_id), warmup, measure)
    job.cancel()
    job.wait(60)
    return rate


def flinkbench_sql_throughput(cluster, warmup: float, measure: float) -> float:
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


def sql(opts) -> dict:
    """The SQL TUMBLE query against the DataStream job, on one default cluster."""
    with LocalCluster(taskmanagers=2, slots=1, config={"spark.driver.memory": "2g"}) as cluster:
        ours = flinkbench_throughput(cluster, 2, opts.warmup, opts.measure)
        as_sql = flinkbench_sql_throughput(cluster, opts.warmup, opts.measure)
    print(f"flinkbench clicks as a SQL TUMBLE query: {as_sql:,.0f} rows/s sustained ({as_sql / ours:.2f}x the "
          "DataStream version; target 0.9x)", flush=True)
    return {"flinkbench_sql_rows_per_s": round(as_sql), "flinkbench_datastream_rows_per_s": round(ours),
            "sql_to_datastream_ratio": round(as_sql / ours, 3) if ours else None}


def checkpoints(opts) -> dict:
    from tests.benchmarks.checkpoints import checkpoint_p99_by_keys

    measured = checkpoint_p99_by_keys(opts.checkpoint_keys, opts.warmup, opts.measure)
    return {"checkpoint_p99_s_by_keys": measured["clicks full"],
            "checkpoint_p99_s_by_keys_incremental": measured["clicks incremental"],
            "checkpoint_details_by_keys": measured}


def scaling(opts, ss_rows_per_batch: int) -> list[dict]:
    """Throughput at parallelism n on n TaskManagers of one slot, with the cluster's peak memory, and Structured
    Streaming on n local cores at its best batch size (scaled to n cores)."""
    rows = []
    for n in opts.scaling:
        with LocalCluster(taskmanagers=n, slots=1, config={"spark.driver.memory": "2g"}) as cluster, \
                PeakRss(cluster) as peak:
            ours = flinkbench_throughput(cluster, n, opts.warmup, opts.measure)
        theirs = structured_streaming.run({"job": "throughput", "cores": n, "jvm": "spark-defaults",
                                           "rows_per_batch": ss_rows_per_batch * n // 2, "checkpoints": False,
                                           "warmup": opts.warmup, "measure": opts.measure})["rows_per_s"]
        row = {"parallelism": n, "taskmanagers": n, "flinkbench_rows_per_s": round(ours),
               "cluster_peak_rss_gib": peak.gib, "cluster_peak_pss_gib": peak.pss_gib,
               "structured_streaming_rows_per_s": theirs, "ratio": round(ours / theirs, 3) if theirs else None}
        print(f"scaling: p{n} on {n} TaskManagers {row['flinkbench_rows_per_s']:,} rows/s, cluster peak "
              f"{row['cluster_peak_rss_gib']} GiB; Structured Streaming local[{n}] {theirs:,} rows/s; "
              f"ratio {row['ratio']}", flush=True)
        rows.append(row)
    return rows
