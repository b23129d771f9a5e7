"""Push sources on real processes: rows pushed while the job runs reach the output exactly once, bad pushes
are refused without harm, and a killed TaskManager loses or duplicates none of them."""
from __future__ import annotations

import collections
import datetime
import json

import pandas as pd
import pyarrow as pa
import pytest

from runtime.api.functions import col
from runtime.api.windows import TumblingEventTimeWindows, WatermarkStrategy, agg
from runtime.client import ClusterError
from tests.helpers.clusters import busy_taskmanager, job_state, wait_until
from tests.integration.test_bad_input import call, graph_of
from tests.integration.test_checkpoints import wait_for_new_checkpoint

CLICKS = "user BIGINT, url STRING, ts TIMESTAMP"
EPOCH = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)


def clicks(first: int, count: int, start_s: float) -> list[dict]:
    """Clicks ``first..first+count-1``, 10 ms apart from ``start_s``; every fifth is on /skip."""
    return [{"user": i % 7, "url": "/skip" if i % 5 == 0 else f"/p{i % 3}",
             "ts": EPOCH + datetime.timedelta(seconds=start_s + (i - first) * 0.01)} for i in range(first, first + count)]


def windows_of(rows: list[dict]) -> list[tuple]:
    """The plain answer: clicks not on /skip, counted per user and 10 s window (start in epoch seconds)."""
    counts = collections.Counter((r["user"], _seconds(r["ts"]) // 10 * 10) for r in rows if r["url"] != "/skip")
    return sorted((user, start, n) for (user, start), n in counts.items())


def result_windows(table: pa.Table) -> list[tuple]:
    return sorted((r["user"], _seconds(r["window_start"]), r["clicks"]) for r in table.to_pylist())


def _seconds(ts: datetime.datetime) -> int:
    ts = ts if ts.tzinfo else ts.replace(tzinfo=datetime.timezone.utc)
    return int((ts - EPOCH).total_seconds())


def every_task_running(job) -> bool:
    details = job.details()
    return details["state"] == "RUNNING" and all(s["status"] == "RUNNING" for v in details["vertices"]
                                                 for s in v["subtasks"])


def test_rows_pushed_while_the_job_runs_are_windowed_and_the_job_finishes_on_close(cluster):
    env = cluster.environment()
    env.set_parallelism(2)
    (env.push_source(CLICKS, name="clicks in")
        .assign_timestamps_and_watermarks(WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_column("ts"))
        .filter(col("url") != "/skip")
        .key_by("user").window(TumblingEventTimeWindows.of("10 s")).aggregate(clicks=agg.count())
        .collect())
    job = env.execute_async("pushed clicks")
    wait_until(lambda: every_task_running(job), 180, "every task running")
    first, later, last = clicks(0, 300, 0), clicks(300, 200, 30), clicks(500, 100, 40)
    job.push("clicks in", pd.DataFrame(first))
    job.push("clicks in", pa.Table.from_pylist(later))
    early = windows_of(first)
    wait_until(lambda: result_windows(job.fetch(0)[0]) == early, 120,
               "the first push's windows, fired by the second push's watermark while the job runs")
    assert job.push("clicks in", last) == {"source": "source-1", "name": "clicks in", "rows": 100,
                                           "offsets": [500, 600], "total": 600}
    assert job.status() == "RUNNING", "an open push source keeps the job running"
    job.close_source("clicks in")
    got = job.results(timeout=240)
    assert result_windows(got) == windows_of(first + later + last)
    assert job.push_sources() == [{"id": "source-1", "name": "clicks in", "schema": CLICKS, "rows": 600,
                                   "closed": True}]


def test_a_bad_push_gets_a_clear_400_and_the_job_runs_on(cluster):
    env = cluster.environment()
    env.set_parallelism(2)
    env.push_source("user BIGINT, url STRING", name="bad pushes").with_columns(double="user * 2").collect()
    job = env.execute_async("bad pushes")
    wait_until(lambda: every_task_running(job), 180, "every task running")
    with pytest.raises(ClusterError) as refused:
        job.push("bad pushes", [{"user": 1, "url": "/a"}, {"user": 2, "url": 3}])
    assert refused.value.status == 400
    assert "source 'bad pushes'" in str(refused.value) and "field 'url' must be string" in str(refused.value)
    path = f"/jobs/{job.job_id}/sources/source-1/rows"
    for body, needle in ((b"{not json", "not valid JSON"), (b'{"rows": {"user": 1}}', "'rows' must be a list"),
                         (b'{"arrow": "bm90IGFycm93"}', "not a base64 Arrow IPC stream"),
                         (b'{"rows": [{"user": 1}]}', "missing ['url']"), (b"{}", "one of 'rows'")):
        status, reply = call(cluster, "POST", path, body)
        assert status == 400 and needle in reply["errors"][0], (body, reply)
    with pytest.raises(ClusterError) as unknown:
        job.push("no such source", [{"user": 1, "url": "/a"}])
    assert unknown.value.status == 404 and "'no such source' not found" in str(unknown.value)
    assert "bad pushes (source-1)" in str(unknown.value), "the 404 lists the job's push sources"
    status, reply = call(cluster, "POST", "/jobs/feedc0de/sources/source-1/close")
    assert status == 404 and "not found" in reply["errors"][0]
    graph = graph_of(env)
    graph["operators"][0]["params"]["schema"] = "user BIGINTEGER"
    status, reply = call(cluster, "POST", "/jobs", json.dumps({"job_graph": graph}).encode())
    assert status == 400 and "push source 'bad pushes'" in reply["errors"][0], reply

    assert job.status() == "RUNNING" and job.push_sources()[0]["rows"] == 0, "nothing of a bad push was taken"
    status, reply = call(cluster, "POST", path, json.dumps({"rows": [{"user": 21, "url": "/ok"}]}).encode())
    assert status == 200 and reply["offsets"] == [0, 1]
    job.close_source("source-1")
    got = job.results(timeout=240)
    assert got.to_pylist() == [{"user": 21, "url": "/ok", "double": 42}]
    with pytest.raises(ClusterError) as late:
        job.push("bad pushes", [{"user": 1, "url": "/a"}])
    assert late.value.status == 409 and "FINISHED" in str(late.value)


@pytest.mark.timeout(900)
def test_rows_pushed_across_taskmanager_kills_reach_the_output_exactly_once(fresh_cluster):
    cluster = fresh_cluster(taskmanagers=2, slots=2, **{"restart-strategy.fixed-delay.delay": "200 ms"})
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    (env.push_source("seq BIGINT", name="numbers")
        .with_columns(key="seq % 10")
        .key_by("key").filter("seq >= 0")
        .collect().set_parallelism(1))
    job = env.execute_async("pushed numbers")
    pushed = 0

    def push(rows: int) -> None:
        nonlocal pushed
        job.push("numbers", pa.table({"seq": pa.array(range(pushed, pushed + rows), pa.int64())}))
        pushed += rows

    def source_reads() -> int:
        return sum(s["metrics"].get("records_in", 0) for s in job.details()["vertices"][0]["subtasks"])

    wait_until(lambda: every_task_running(job), 180, "every task running")
    for _ in range(2):
        push(5_000)
        wait_for_new_checkpoint(cluster, job.job_id)
        read_before = source_reads()
        push(5_000)  # read after that checkpoint and before the kill: to be read again after the restore
        wait_until(lambda read_before=read_before: source_reads() > read_before, 60, "the sources reading the latest push")
        restarts = job.details()["restarts"]
        cluster.kill_taskmanager(busy_taskmanager(cluster.client, job.job_id))
        cluster.add_taskmanager(wait=False)
        push(5_000)  # while the job fails over
        # a restart waits for the replacement TaskManager's Spark JVM when the survivors' slots are too few
        wait_until(lambda restarts=restarts: job.details()["restarts"] > restarts and every_task_running(job),
                   300, "the job restored")
    push(5_000)
    job.close_source("numbers")
    got = job.results(timeout=600)
    seqs = sorted(got.column("seq").to_pylist())
    assert seqs == list(range(pushed)), "no pushed row lost or duplicated"
    assert job.details()["restarts"] >= 2
    assert job_state(cluster.client, job.job_id) == "FINISHED"
