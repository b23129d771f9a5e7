"""``make demo``: the main job on an embedded cluster of 1 JobManager and 2 TaskManagers x 2 slots.

Runs a parallelism-4 job (generated events -> filter -> derived column -> collect), prints which
subtask ran in which slot of which TaskManager and the job's result, checks the result against the
same computation in plain Python, and stops every process it started.
"""
from __future__ import annotations

import sys
import time

from runtime.api.functions import col
from runtime.cluster import LocalCluster

ROWS = 200_000


def build(env):
    events = env.datagen("seq BIGINT, user INT, amount DOUBLE", number_of_rows=ROWS,
                         fields={"seq": {"kind": "sequence"}, "user": {"min": 0, "max": 99}})
    return (events.filter(col("seq") % 7 == 0)
                  .with_columns(bucket="seq % 10")
                  .select("seq", "bucket", (col("amount") * 100).cast("int").alias("cents"))
                  .collect())


def expected_seqs() -> list[int]:
    return [s for s in range(ROWS) if s % 7 == 0]


def main() -> int:
    t0 = time.monotonic()
    print("starting an embedded cluster: 1 JobManager, 2 TaskManagers x 2 slots ...", flush=True)
    with LocalCluster(taskmanagers=2, slots=2) as cluster:
        overview = cluster.client.overview()
        print(f"cluster up in {time.monotonic() - t0:.1f} s: {overview['taskmanagers']} TaskManagers, "
              f"{overview['slots-total']} slots, REST at {cluster.url}")
        env = cluster.environment()
        env.set_parallelism(4)
        build(env)
        print(env.explain("demo"))
        job = env.execute_async("demo: filter and derive on 4 slots")
        rows = job.results(timeout=300).sort_by("seq")
        print_placement(job.details())
        print(f"\nresult: {rows.num_rows} rows; first five:")
        for row in rows.slice(0, 5).to_pylist():
            print("  ", row)
        ok = rows.column("seq").to_pylist() == expected_seqs() and \
            rows.column("bucket").to_pylist() == [s % 10 for s in expected_seqs()]
        print(f"\nresult {'matches' if ok else 'DOES NOT match'} the same computation in plain Python")
    print(f"all processes stopped; demo took {time.monotonic() - t0:.1f} s")
    return 0 if ok else 1


def print_placement(details: dict) -> None:
    print(f"\njob {details['jid']} {details['state']}")
    for vertex in details["vertices"]:
        print(f"task '{vertex['name']}' x{vertex['parallelism']}:")
        for sub in vertex["subtasks"]:
            m = sub.get("metrics") or {}
            print(f"  subtask {sub['subtask'] + 1}/{vertex['parallelism']} ran in slot {sub['slot']} of "
                  f"TaskManager {sub['taskmanager-id']}: {m.get('records_in', 0)} rows in, "
                  f"{m.get('records_out', 0)} out")


if __name__ == "__main__":
    sys.exit(main())
