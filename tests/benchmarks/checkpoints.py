"""Checkpoint and recovery figures: ``python tests/benchmarks/checkpoints.py [--out FILE]``.

(``make bench`` takes :func:`checkpoint_p99_by_keys` from here: checkpoint duration p99 at several
state sizes.)

1. Checkpoint duration p50/p99 and state size with 100,000 keys of window state (clicks with
   100,000 users, 10 s windows, checkpoints every second).
2. Sustained throughput of the clicks job with checkpoints every second against none.
3. Time from a TaskManager's kill -9 to the job RUNNING again with its state restored: onto a standby
   TaskManager that is already registered (Flink's redundant TaskManagers), and onto a replacement
   started only after the kill (its Python process and Spark JVM start while the job waits).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from runtime.cluster import LocalCluster  # noqa: E402
from runtime.api.windows import TumblingEventTimeWindows, agg  # noqa: E402
from runtime.examples import clicks  # noqa: E402
from tests.benchmarks.flinkbench_runs import MEASURE_S, WARMUP_S, source_rows, sustained, wait_flowing  # noqa: E402
from tests.benchmarks.json_figures import report  # noqa: E402

KEYS = 100_000
# Input of the few-changing workload, the same at every state size so that only the state's size differs
# (a rate growing with the keys made the larger states' checkpoints wait behind larger bundles).
FEW_CHANGING_RATE = 200_000


def percentile(values: list, q: float):
    """The value below which a fraction ``q`` of ``values`` lies; None when there are none."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


def run(cluster, checkpoint_interval: str | None, users: int = clicks.USERS, incremental: bool = False):
    env = cluster.environment()
    env.set_parallelism(2)
    if checkpoint_interval:
        env.enable_checkpointing(checkpoint_interval)
        env.set("execution.checkpointing.incremental", str(incremental).lower())
    clicks.build(env, None, sink="blackhole", event_rate=200_000.0, users=users)
    return cluster_job(cluster, env, f"bench: clicks, checkpoints {checkpoint_interval or 'off'}"
                                     f"{' incremental' if incremental else ''}")


def checkpoint_durations(cluster, keys: int, warmup: float = WARMUP_S, measure: float = MEASURE_S,
                         incremental: bool = False) -> dict:
    """Clicks with ``keys`` users and checkpoints every second: duration and size (whole state, and what
    was uploaded) of those completed after the warm-up, and the slowest one during it. The job is
    cancelled afterwards."""
    return durations(cluster, run(cluster, "1 s", users=keys, incremental=incremental), warmup, measure)


def few_keys_changing(cluster, keys: int, warmup: float = WARMUP_S, measure: float = MEASURE_S,
                      incremental: bool = False, hot: int = 4) -> dict:
    """Like :func:`checkpoint_durations`, but where incremental checkpoints pay: one row for each of
    ``keys`` users into an hour-long window (window state of ``keys`` rows), then rows of ``hot`` users
    only (the first ``keys`` rows take at most 5 s at ``FEW_CHANGING_RATE``), so each checkpoint changes a
    few key groups of a large state."""
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    env.set("execution.checkpointing.incremental", str(incremental).lower())
    (env.datagen("seq BIGINT, ts TIMESTAMP", rows_per_second=FEW_CHANGING_RATE, fields={"seq": {"kind": "sequence"}},
                 timestamp_start=clicks.TIMESTAMP_START)
        .with_columns(user=f"IF(seq < {keys}, seq, seq % {hot})")
        .assign_timestamps_and_watermarks(clicks.watermarks())
        .key_by("user").window(TumblingEventTimeWindows.of("1 h")).aggregate(rows=agg.count())
        .blackhole())
    job = cluster_job(cluster, env, f"bench: {keys:,} keys, {hot} changing{', incremental' if incremental else ''}")
    return durations(cluster, job, warmup, measure)


def cluster_job(cluster, env, name: str):
    job = env.execute_async(name)
    wait_flowing(cluster, job)
    return job


def durations(cluster, job, warmup: float, measure: float) -> dict:
    """Duration and size (whole state, and what was uploaded) of the job's checkpoints completed after the
    warm-up, and the slowest one during it; the job is cancelled afterwards."""
    steady_from_ms = (time.time() + warmup) * 1000
    time.sleep(warmup + measure)
    stats = cluster.client.get(f"/jobs/{job.job_id}/checkpoints")
    job.cancel()
    job.wait(60)
    done = [h for h in stats["history"] if h["status"] == "COMPLETED"]
    steady = [h for h in done if h["trigger_timestamp"] >= steady_from_ms]
    return {"checkpoint_duration_p50_ms": percentile([h["end_to_end_duration"] for h in steady], 0.5),
            "checkpoint_duration_p99_ms": percentile([h["end_to_end_duration"] for h in steady], 0.99),
            "checkpoint_size_p50_bytes": percentile([h["state_size"] for h in steady], 0.5),
            "checkpointed_size_p50_bytes": percentile([h["checkpointed_size"] for h in steady], 0.5),
            "checkpoints_completed": len(steady), "checkpoints_failed": stats["counts"]["failed"],
            "checkpoint_duration_max_during_warmup_ms": max(
                [h["end_to_end_duration"] for h in done if h["trigger_timestamp"] < steady_from_ms], default=None)}


WORKLOADS = {"clicks": checkpoint_durations, "few_changing": few_keys_changing}


def checkpoint_p99_by_keys(sizes: list[int], warmup: float = WARMUP_S, measure: float = MEASURE_S) -> dict[str, dict]:
    """Checkpoint duration p99 in seconds and the median bytes uploaded per checkpoint, by number of keys of
    window state, on 2 TaskManagers: for clicks (every key changes all the time) and for a job where few
    keys change, each with full and with incremental checkpoints. Keys of the answer: ``<workload> <mode>``
    and ``<workload> <mode> uploaded bytes``."""
    out: dict[str, dict] = {}
    with LocalCluster(taskmanagers=2, slots=1, config={"spark.driver.memory": "2g"}) as cluster:
        for keys in sizes:
            for workload, measured in WORKLOADS.items():
                for mode in ("full", "incremental"):
                    figures = measured(cluster, keys, warmup, measure, incremental=mode == "incremental")
                    p99 = figures["checkpoint_duration_p99_ms"]
                    out.setdefault(f"{workload} {mode}", {})[str(keys)] = None if p99 is None else round(p99 / 1000, 3)
                    out.setdefault(f"{workload} {mode} uploaded bytes", {})[str(keys)] = figures["checkpointed_size_p50_bytes"]
                    print(f"{workload}, {mode} checkpoints, {keys:,} keys: p99 {out[f'{workload} {mode}'][str(keys)]} s, "
                          f"p50 {figures['checkpoint_duration_p50_ms']} ms, state {figures['checkpoint_size_p50_bytes']} B, "
                          f"uploaded {figures['checkpointed_size_p50_bytes']} B ({figures['checkpoints_completed']} "
                          f"completed, {figures['checkpoints_failed']} failed)", flush=True)
    return out


def recover(cluster, job, replacement: bool) -> float:
    """Kill -9 a TaskManager that runs the job; seconds until every subtask runs again from a checkpoint."""
    restarts = job.details()["restarts"]
    busy = {s["taskmanager-id"] for v in job.details()["vertices"] for s in v["subtasks"]}
    t_kill = time.monotonic()
    cluster.kill_taskmanager(sorted(busy)[0])
    if replacement:
        cluster.add_taskmanager(wait=False)
    while True:
        details = job.details()
        restored = cluster.client.get(f"/jobs/{job.job_id}/checkpoints")["latest"]["restored"]
        if details["restarts"] > restarts and restored and all(
                s["status"] == "RUNNING" for v in details["vertices"] for s in v["subtasks"]):
            return round(time.monotonic() - t_kill, 2)
        time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    figures = {}
    conf = {"spark.driver.memory": "2g", "heartbeat.interval": "500 ms", "heartbeat.timeout": "3 s",
            "restart-strategy.fixed-delay.delay": "200 ms"}
    with LocalCluster(taskmanagers=3, slots=1, config=conf) as cluster:  # two busy, one standby
        figures.update(checkpoint_durations(cluster, KEYS))
        print(f"{KEYS:,} keys, after {WARMUP_S:g} s warm-up: checkpoint p50 {figures['checkpoint_duration_p50_ms']} ms, "
              f"p99 {figures['checkpoint_duration_p99_ms']} ms, size {figures['checkpoint_size_p50_bytes']:,} B "
              f"({figures['checkpoints_completed']} completed; {figures['checkpoints_failed']} failed in all; slowest "
              f"during warm-up {figures['checkpoint_duration_max_during_warmup_ms']} ms)", flush=True)
        job = run(cluster, "1 s", users=KEYS)  # the job whose TaskManagers are killed, once it has state
        time.sleep(WARMUP_S)
        figures["recovery_onto_standby_s"] = recover(cluster, job, replacement=False)
        print(f"kill -9 to RUNNING with state restored, onto a standby TaskManager: "
              f"{figures['recovery_onto_standby_s']} s", flush=True)
        figures["recovery_onto_replacement_s"] = recover(cluster, job, replacement=True)
        print(f"kill -9 to RUNNING with state restored, onto a TaskManager started after the kill: "
              f"{figures['recovery_onto_replacement_s']} s", flush=True)
        job.cancel()
        job.wait(60)

        rates = {None: [], "1 s": []}
        for interval in (None, "1 s", "1 s", None):  # interleaved, so warm-up and drift fall on both
            job = run(cluster, interval)
            rates[interval].append(sustained(lambda job=job: source_rows(cluster.client, job.job_id),
                                             WARMUP_S / 2, MEASURE_S / 2))
            job.cancel()
            job.wait(60)
        rates = {k: sum(v) / len(v) for k, v in rates.items()}
        figures["rows_per_s_without_checkpoints"] = round(rates[None])
        figures["rows_per_s_with_checkpoints_1s"] = round(rates["1 s"])
        figures["throughput_lost_pct"] = round(100 * (1 - rates["1 s"] / rates[None]), 1) if rates[None] else None
        print(f"throughput: {rates[None]:,.0f} rows/s without checkpoints, {rates['1 s']:,.0f} with one every "
              f"second ({figures['throughput_lost_pct']} % lost)", flush=True)
    report(figures, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
