"""How many students one machine holds: each student one small job (datagen at ``--rate`` rows/s into a
blackhole), all on one shared cluster with a user per student, against one local cluster per student.

For every size asked for, it prints the cluster processes' memory (PSS: shared pages split among their
sharers, what the machine gives), their CPU as a share of one core, and how many jobs kept their rate
(rows read over the measured wall time at least 90 % of the rate). A size where every job keeps up and the
memory fits is a class the machine holds; the largest such size is the figure.

    .venv/bin/python -m tests.benchmarks.class_capacity [--shared 4 8 16 30] [--separate 2 4 8] \\
        [--slots 4] [--rate 20] [--seconds 30]

Timing figures: meaningless while other work loads the machine; the load average is printed with them.
"""
from __future__ import annotations

import argparse
import math
import os
import tempfile
import time

from runtime.api.environment import StreamExecutionEnvironment
from runtime.client import RestClient
from runtime.cluster import LocalCluster
from tests.benchmarks.cluster_cpu import cpu_seconds
from tests.benchmarks.memory import GIB, tree_memory
from tests.helpers.clusters import wait_until

CONFIG = {"spark.driver.memory": "512m", "resourcemanager.provider": "standalone"}
KEEPS_UP = 0.9


def small_job(client: RestClient, name: str, rate: int):
    env = StreamExecutionEnvironment(client)
    env.set_parallelism(1)
    env.datagen("seq BIGINT", rows_per_second=rate, fields={"seq": {"kind": "sequence"}}).blackhole()
    return env.execute_async(name)


def rows_read(client: RestClient, job_id: str) -> int:
    vertex = client.get(f"/jobs/{job_id}")["vertices"][0]
    return sum((s.get("metrics") or {}).get("records_in", 0) for s in vertex["subtasks"])


def measure(clusters: list[LocalCluster], jobs: list[tuple[RestClient, str]], rate: int, seconds: float) -> dict:
    """Memory, CPU and how many jobs kept their rate over ``seconds``, every job RUNNING first."""
    for client, job_id in jobs:
        wait_until(lambda c=client, j=job_id: c.get(f"/jobs/{j}")["state"] == "RUNNING", 600, f"{job_id} running")
    time.sleep(10)  # past the first bundles
    before, cpu_before, t0 = [rows_read(c, j) for c, j in jobs], _cpu(clusters), time.monotonic()
    time.sleep(seconds)
    span = time.monotonic() - t0
    after, cpu_after = [rows_read(c, j) for c, j in jobs], _cpu(clusters)
    kept = sum(1 for b, a in zip(before, after) if (a - b) / span >= KEEPS_UP * rate)
    pss = sum(tree_memory(p.pid)[1] for c in clusters for p in [*c.jobmanager_processes, *c.taskmanagers] if p.alive())
    return {"students": len(jobs), "kept up": kept, "pss GiB": round(pss / GIB, 2),
            "cpu % of a core": round((cpu_after - cpu_before) / span * 100, 1), "load": os.getloadavg()[0]}


def _cpu(clusters: list[LocalCluster]) -> float:
    return sum(sum(cpu_seconds(c).values()) for c in clusters)


def shared(students: int, slots: int, rate: int, seconds: float) -> dict:
    """One cluster, a user per student (quota 1), each student's job under their own token."""
    taskmanagers = math.ceil(students / slots)
    with tempfile.TemporaryDirectory(prefix="class-") as workdir, \
            LocalCluster(taskmanagers, slots, CONFIG, working_dir=workdir) as cluster:
        admin = cluster.client
        clients = [RestClient(cluster.url, token=admin.post("/users", {"name": f"s{i}", "slots": 1})["token"])
                   for i in range(students)]
        jobs = [(c, small_job(c, f"student {i}", rate).job_id) for i, c in enumerate(clients)]
        return {"arrangement": f"one cluster, {taskmanagers} TaskManagers x {slots} slots",
                **measure([cluster], jobs, rate, seconds)}


def separate(students: int, rate: int, seconds: float) -> dict:
    """A local cluster of one TaskManager with one slot per student, as each notebook's '%flink local' would."""
    with tempfile.TemporaryDirectory(prefix="class-") as workdir:
        clusters: list[LocalCluster] = []
        try:
            for i in range(students):
                clusters.append(LocalCluster(1, 1, CONFIG, working_dir=os.path.join(workdir, str(i))).__enter__())
            jobs = [(c.client, small_job(c.client, f"student {i}", rate).job_id) for i, c in enumerate(clusters)]
            return {"arrangement": "one local cluster per student", **measure(clusters, jobs, rate, seconds)}
        finally:
            for cluster in clusters:
                cluster.__exit__(None, None, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=int, nargs="*", default=[4, 8, 16, 30], help="class sizes on one cluster")
    parser.add_argument("--separate", type=int, nargs="*", default=[2, 4, 8], help="class sizes, a cluster each")
    parser.add_argument("--slots", type=int, default=4, help="slots per TaskManager of the shared cluster")
    parser.add_argument("--rate", type=int, default=20, help="rows per second of each student's job")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long to measure each size")
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for size in args.shared:
        print(shared(size, args.slots, args.rate, args.seconds), flush=True)
    for size in args.separate:
        print(separate(size, args.rate, args.seconds), flush=True)


if __name__ == "__main__":
    main()
