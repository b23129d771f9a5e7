"""What a local cluster costs in CPU, idle and running the README's first job at 1,000 rows/s: every JobManager and
TaskManager process with everything it started (the Spark JVMs and Python workers), summed, as the share of one core
per second of wall time; per process too, so that a regression points at its process. Also the tasks' busy time
at that rate, which the bottleneck hint reads.

    .venv/bin/python -m tests.benchmarks.cluster_cpu [--seconds 30] [--rate 1000] [--spans 1]

With ``--spans N`` the running job is measured over N spans one after the other (a JVM keeps compiling
Spark's code for minutes: the first spans cost more than the later), each with the TaskManagers' JVM
threads by kind (tests.benchmarks.bundle_cpu.jvm_threads).

Timing figures: meaningless while other work loads the machine.
"""
from __future__ import annotations

import argparse
import os
import time

import psutil

from runtime.cluster import LocalCluster
from runtime.examples import clicks
from tests.benchmarks.bundle_cpu import jvm_threads
from tests.helpers.clusters import wait_until

LOCAL = {"resourcemanager.provider": "local"}  # as %flink local starts it


def cpu_seconds(cluster: LocalCluster) -> dict[str, float]:
    """CPU seconds (user + system) each process of the cluster has used so far, by a readable name."""
    used: dict[str, float] = {}
    for child in [*cluster.jobmanager_processes, *cluster.taskmanagers]:
        try:
            root = psutil.Process(child.pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        for proc in tree:
            try:
                times = proc.cpu_times()
                kind = "jvm" if proc.name() == "java" else ("python" if proc is root else proc.name())
            except psutil.Error:
                continue
            name = f"{child.name}/{kind}" if proc is root or kind == "jvm" else f"{child.name}/{kind}-{proc.pid}"
            used[name] = used.get(name, 0.0) + times.user + times.system
    return used


def per_second(cluster: LocalCluster, seconds: float) -> dict[str, float]:
    """Each process's CPU per wall-clock second over the next ``seconds``."""
    before, t0 = cpu_seconds(cluster), time.monotonic()
    time.sleep(seconds)
    after, span = cpu_seconds(cluster), time.monotonic() - t0
    return {name: (after[name] - before.get(name, 0.0)) / span for name in sorted(after)}


def jvm_shares(cluster: LocalCluster, measure) -> dict[str, float]:
    """``measure()``'s result, and the TaskManagers' JVM threads' CPU per wall second over it, by kind."""
    jvms = [p for c in cluster.taskmanagers for p in psutil.Process(c.pid).children(recursive=True)
            if p.name() == "java"]
    before, t0 = [jvm_threads(p.pid) for p in jvms], time.monotonic()
    result = measure()
    after, span = [jvm_threads(p.pid) for p in jvms], time.monotonic() - t0
    kinds: dict[str, float] = {}
    for old, new in zip(before, after):
        for kind, seconds in new.items():
            kinds[f"jvm {kind}"] = kinds.get(f"jvm {kind}", 0.0) + (seconds - old.get(kind, 0.0)) / span
    return result, kinds


def show(title: str, shares: dict[str, float]) -> None:
    print(f"{title}: {sum(shares.values()) * 100:.1f} % of one core")
    for name, share in shares.items():
        print(f"    {name:<28} {share * 100:6.1f} %")


def busy(cluster: LocalCluster, job_id: str) -> list[str]:
    """Each task's busy and idle time (its busiest subtask), as the job graph's hint reads them."""
    return [f"{v['name']}: {v['metrics'].get('busy_time_ms_per_s', 0):.0f} ms/s busy, "
            f"{v['metrics'].get('idle_time_ms_per_s', 0):.0f} ms/s idle"
            for v in cluster.client.get(f"/jobs/{job_id}")["vertices"]]


def bundles(cluster: LocalCluster, job_id: str) -> int:
    """Bundles (one Spark action each) the job's sources have read so far, over all their subtasks."""
    source = cluster.client.get(f"/jobs/{job_id}")["vertices"][0]
    return sum((s.get("metrics") or {}).get("bundles") or 0
               for s in cluster.client.get(f"/jobs/{job_id}/vertices/{source['id']}")["subtasks"])


def warmed(cluster: LocalCluster) -> bool:
    """Every TaskManager ran its warm-up query: what follows is the cluster at rest, not its start."""
    logs = [os.path.join(cluster.working_dir, f"{c.name}.log") for c in cluster.taskmanagers]
    return all(os.path.exists(log) and "warmed up" in open(log, encoding="utf-8", errors="replace").read() for log in logs)


def caught_up(cluster: LocalCluster, job_id: str) -> bool:
    """The sources keep their pace (what they started behind with is read)."""
    source = cluster.client.get(f"/jobs/{job_id}")["vertices"][0]["metrics"]
    return source.get("pending_records") is not None and source["pending_records"] < 5_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--spans", type=int, default=1)
    args = parser.parse_args()
    with LocalCluster(taskmanagers=1, slots=2, config=LOCAL) as cluster:
        wait_until(lambda: warmed(cluster), 300, "the TaskManager's Spark session, warmed up")
        time.sleep(5)
        show("idle cluster", per_second(cluster, args.seconds))
        env = cluster.environment()
        env.set_parallelism(2)
        env.enable_checkpointing("2 s")  # as the README's cell
        clicks.build(env, rows=None, rows_per_second=args.rate, realtime=True, users=50)
        job = env.execute_async("clicks")
        next(job.iter_results())  # its first window fired: past the start
        wait_until(lambda: caught_up(cluster, job.job_id), 300, "the sources to keep their pace")
        for span in range(args.spans):
            before = bundles(cluster, job.job_id)
            shares, threads = jvm_shares(cluster, lambda: per_second(cluster, args.seconds))
            ran = (bundles(cluster, job.job_id) - before) / args.seconds
            show(f"running clicks at {args.rate:g} rows/s (span {span + 1}, load {os.getloadavg()[0]:.1f})", shares)
            print("    " + ", ".join(f"{k} {v * 100:.1f} %" for k, v in sorted(threads.items()) if v >= 0.001))
            print(f"{ran:.2f} bundles/s (Spark actions); {sum(shares.values()) / max(ran, 1e-9):.3f} CPU s per bundle")
            print("\n".join(busy(cluster, job.job_id)), flush=True)
        job.cancel()


if __name__ == "__main__":
    main()
