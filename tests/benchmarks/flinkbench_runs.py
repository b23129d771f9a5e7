"""Flinkbench's side of the benchmark: the clicks job on a local cluster of two TaskManagers of one slot each.

Throughput runs each start a cluster of their own (as each Structured Streaming run starts its own process),
in one configuration (comparison.Setup: a fixed bundle size, taskmanager.bundle.min-rows = max-rows, or the
default adaptive sizing; the TaskManagers' JVM options or Spark's defaults), and count the side's CPU as
every process of the cluster plus the client (this process, less what the benchmark's own samplers take).
Latency runs read the collected windows at the client, as a notebook does.
"""
from __future__ import annotations

import os
import time

from runtime.cluster import LocalCluster
from runtime.examples import clicks
from tests.benchmarks import phases
from tests.benchmarks.comparison import SPARK_JVM, Setup
from tests.benchmarks.cpu_use import CpuSeries, others_during, span_figures
from tests.benchmarks.memory import PeakRss, cluster_roots
from tests.benchmarks.process_trees import tree_cpu_seconds
from tests.benchmarks.window_latency import WindowArrivals, epoch_seconds, span_window_ends, summary

WARMUP_S = 20.0  # seconds a job runs before it is measured
MEASURE_S = 40.0  # seconds of throughput measured
PARALLELISM = 2
WINDOW_S = 10.0
POLL_S = 0.2  # the job client's own pause between empty reads (JobClient.iter_results)


def cluster_config(setup: Setup) -> dict:
    """The local cluster's configuration for ``setup``: 2 GB Spark drivers, and its bundle size and JVM options."""
    conf: dict = {"spark.driver.memory": "2g"}
    if setup.rows_per_batch is not None:
        per_subtask = max(1, setup.rows_per_batch // PARALLELISM)
        conf.update({"taskmanager.bundle.min-rows": per_subtask, "taskmanager.bundle.max-rows": per_subtask})
    if setup.jvm == SPARK_JVM:
        conf.update({"taskmanager.spark.jvm-options": "", "taskmanager.spark.class-archive.enabled": "false"})
    return conf


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


def side_cpu(cluster, peak: PeakRss | None = None):
    """CPU seconds so far of every process of the cluster and of the client, less the memory sampler's."""
    def used() -> float:
        return (sum(tree_cpu_seconds(pid) for pid in cluster_roots(cluster)())
                + tree_cpu_seconds(os.getpid(), children=False) - (peak.own_cpu_s if peak else 0.0))
    return used


def throughput(setup: Setup, warmup: float, measure: float, checkpoints: bool) -> dict:
    """The clicks job as fast as it goes on a fresh cluster in ``setup``, with checkpoints every 5 s or none:
    rows/s and rows per CPU-second after the warm-up, peak memory of the cluster with and without the
    client, seconds from the cluster's start to the first rows, and where the bundles' time went."""
    launched = time.monotonic()
    with LocalCluster(taskmanagers=2, slots=1, config=cluster_config(setup)) as cluster, \
            PeakRss(cluster, client=True) as peak, CpuSeries(side_cpu(cluster, peak)) as cpu:
        env = cluster.environment()
        env.set_parallelism(PARALLELISM)
        if checkpoints:
            env.enable_checkpointing("5 s")
        clicks.build(env, None, sink="blackhole", event_rate=1_000_000.0)
        job = env.execute_async(f"bench: clicks throughput, {setup.label}{', checkpoints' if checkpoints else ''}")
        wait_flowing(cluster, job)
        first_rows_s = time.monotonic() - launched
        time.sleep(warmup)
        t0, n0, before = time.time(), source_rows(cluster.client, job.job_id), phases.snapshot(cluster.client, job.job_id)
        time.sleep(measure)
        t1, n1, after = time.time(), source_rows(cluster.client, job.job_id), phases.snapshot(cluster.client, job.job_id)
        counts = cluster.client.get(f"/jobs/{job.job_id}/checkpoints")["counts"]
        job.cancel()
        job.wait(60)
    return {**span_figures(n1 - n0, t0, t1, cpu), "first_rows_s": round(first_rows_s, 2),
            "peak_rss_gib": peak.gib, "peak_pss_gib": peak.pss_gib, "cluster_peak_rss_gib": peak.roots_gib,
            "checkpoints_completed": counts.get("completed"), "checkpoints_failed": counts.get("failed"),
            "phases": phases.breakdown(before, after, t1 - t0)}


def latency(cluster, rate: float, users: int, warmup: float, measure: float, stall: float,
            checkpoints: bool, from_start: bool = False) -> dict:
    """The clicks job paced at ``rate`` rows/s with event time the wall clock, collected: per window, the time
    its last row reached this client less its end, over the windows that start after the warm-up and end
    within ``measure`` s; read on until each is whole or ``stall`` s past the span. ``from_start``: the span
    begins with the first window that starts after the submission (the first whole windows of a job, no
    warm-up)."""
    env = cluster.environment()
    env.set_parallelism(PARALLELISM)
    if checkpoints:
        env.enable_checkpointing("5 s")
    clicks.build(env, None, sink="collect", rows_per_second=rate, realtime=True, users=users)
    with CpuSeries(side_cpu(cluster)) as cpu:
        submitted = time.time()
        job = env.execute_async(f"bench: clicks latency at {rate:,.0f} rows/s")
        if from_start:
            measured_from = submitted
        else:
            wait_flowing(cluster, job)
            measured_from = time.time() + warmup
        ends = span_window_ends(measured_from, measured_from + measure, WINDOW_S)
        arrivals = WindowArrivals(users)
        read_windows(job, arrivals, ends, give_up=measured_from + measure + stall)
        read_until = time.time()
    job.cancel()
    job.wait(60)
    return {**summary(arrivals.latencies(ends), len(ends)), "missing": arrivals.missing(ends),
            "first_row_per_window_s": [round(v, 3) for v in arrivals.first_row_latencies(ends)],
            "submitted_to_first_window_end_s": round(ends[0] - submitted, 2) if from_start and ends else None,
            "others_share": others_during(cpu, measured_from, read_until) if read_until > measured_from else None}


def read_windows(job, arrivals: WindowArrivals, ends: list[float], give_up: float) -> None:
    """Read the job's collected rows into ``arrivals`` until the windows ``ends`` are whole, the job ended, or
    ``give_up`` (epoch seconds) passed; a read that brought nothing waits as the job client does."""
    while not arrivals.complete(ends) and time.time() < give_up:
        table, _, finished, _ = job.fetch()
        if table.num_rows:
            arrivals.add(time.time(), epoch_seconds(table.column("window_end")), table.column("user").to_pylist())
        elif finished:
            return
        else:
            time.sleep(POLL_S)
