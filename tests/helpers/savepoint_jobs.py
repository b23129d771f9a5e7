"""A keyed job in two versions, for savepoint compatibility tests.

v1 counts rows per user (keyed state of uid ``counts``) and then keeps each user's largest count seen
(keyed state of uid ``maxes``); v2 is v1 with ``maxes`` removed. Both read sequence numbers 0..rows-1
(uid ``src``, the user is ``seq % USERS``) and write (user, n) to an exactly-once Parquet sink (uid
``out``), so across a stop with savepoint in v1 and a resume in v2 every (user, n) with n from 1 to the
user's row count is written exactly once. tests/programs/pyflink_counts.py is the same job for Apache Flink.
As a program, for ``flinkbench run``::

    flinkbench run [-s SAVEPOINT [--allowNonRestoredState]] tests/helpers/savepoint_jobs.py v2 OUT ROWS
"""
from __future__ import annotations

import sys

import cloudpickle

from runtime.api import KeyedProcessFunction, ValueStateDescriptor

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # TaskManagers cannot import the tests

USERS = 10
SCHEMA = "user BIGINT, n BIGINT"


class Count(KeyedProcessFunction):
    def open(self, ctx):
        self.count = ctx.get_state(ValueStateDescriptor("count", 0))

    def process_element(self, row, ctx, out):
        self.count.update(self.count.value() + 1)
        out.collect({"user": row["user"], "n": self.count.value()})


class Largest(KeyedProcessFunction):
    def open(self, ctx):
        self.largest = ctx.get_state(ValueStateDescriptor("largest", 0))

    def process_element(self, row, ctx, out):
        self.largest.update(max(self.largest.value(), row["n"]))
        out.collect(row)


def build(env, version: str, rows: int, out: str, rows_per_second: int | None = None):
    """Add version ``v1`` or ``v2`` of the job to ``env``; ``rows_per_second`` paces its source (a run to stop
    part of the way)."""
    pace = {"rows_per_second": rows_per_second} if rows_per_second else {}
    stream = env.datagen("seq BIGINT", number_of_rows=rows, fields={"seq": {"kind": "sequence", "start": 0,
                                                                           "end": rows - 1}}, **pace).uid("src")
    counted = stream.select("seq", f"seq % {USERS} AS user").key_by("user").process(Count(), schema=SCHEMA).uid("counts")
    if version == "v1":
        counted = counted.key_by("user").process(Largest(), schema=SCHEMA).uid("maxes")
    counted.write_parquet(out).uid("out")
    return env


def stopped_with_savepoint(cluster, name: str, rows: int, out: str, rows_per_second: int, target: str | None = None,
                           checkpoints: int = 1) -> tuple[str, str]:
    """v1 run part of the way on ``cluster`` (``checkpoints`` completed), then stopped with a savepoint into
    ``target`` (default: state.savepoints.dir): its job id and the savepoint's path."""
    from tests.helpers.clusters import wait_until

    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    job = build(env, "v1", rows, out, rows_per_second=rows_per_second).execute_async(name)
    wait_until(lambda: cluster.client.get(f"/jobs/{job.job_id}/checkpoints")["counts"]["completed"] >= checkpoints,
               240, f"{checkpoints} checkpoint(s) of {name}")
    wait_until(lambda: min(_rows_read(cluster, job.job_id)) >= USERS, 240, f"every user's first row read by {name}")
    savepoint = job.savepoint(target, stop=True)
    assert job.wait(120) == "FINISHED"
    return job.job_id, savepoint


def _rows_read(cluster, job_id: str) -> list[int]:
    """Rows each source subtask has read: a savepoint taken once each has read USERS rows holds every user's
    count (a paced source's first bundle, read as soon as rows are due, can be a handful of rows)."""
    source = cluster.client.get(f"/jobs/{job_id}")["vertices"][0]
    return [(s.get("metrics") or {}).get("records_in", 0) for s in source["subtasks"]]


if __name__ == "__main__":
    from runtime.api.environment import StreamExecutionEnvironment

    version, out, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
    environment = StreamExecutionEnvironment()
    environment.enable_checkpointing("1 s")
    build(environment, version, rows, out).execute(f"counts {version}")
