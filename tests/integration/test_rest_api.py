"""Flink's REST operations on a live cluster: stop with drain fires every window, a manual checkpoint
completes and shows in the history, a savepoint is disposed of, and a task's details, backpressure
and watermarks are served with Flink's field names."""
from __future__ import annotations

import datetime as dt
import os

import pytest

from runtime.api.windows import TumblingEventTimeWindows, WatermarkStrategy, agg
from tests.helpers.clusters import wait_until

pytestmark = pytest.mark.slow

BASE = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def io(job, vertex: int, name: str) -> int:
    return sum(s["metrics"][name] for s in job.details()["vertices"][vertex]["subtasks"] if s["metrics"])


def hourly_counts(cluster, name: str):
    """A job whose one-hour windows cannot fire before the stream ends: ten rows in one hour.

    Returns once the window task has everything: the source read the ten rows and the window task
    read all the source wrote (the source pre-aggregates by key and window in Spark, so that is one
    partial aggregate per bundle, not ten rows)."""
    env = cluster.environment()
    env.set_parallelism(1)
    env.enable_checkpointing("1 s")
    (env.push_source("k STRING, v BIGINT, ts TIMESTAMP", name="rows in")
        .assign_timestamps_and_watermarks(WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_column("ts"))
        .key_by("k").window(TumblingEventTimeWindows.of("1 h")).aggregate(n=agg.count(), total=agg.sum("v"))
        .collect())
    job = env.execute_async(name)
    wait_until(lambda: all(s["status"] == "RUNNING" for v in job.details()["vertices"] for s in v["subtasks"]),
               180, "every subtask RUNNING")
    job.push("rows in", [{"k": "a", "v": i, "ts": BASE + dt.timedelta(minutes=i)} for i in range(10)])
    wait_until(lambda: io(job, 0, "read-records") == 10 and io(job, -1, "read-records") == io(job, 0, "write-records") > 0,
               120, "the window task read what the source made of the rows")
    return job


def stop(cluster, job, target, drain: bool) -> str:
    trigger = cluster.client.post(f"/v1/jobs/{job.job_id}/stop", {"targetDirectory": target, "drain": drain})
    return cluster.client.await_operation(f"/v1/jobs/{job.job_id}/savepoints/{trigger['request-id']}", "stop", 120)[
        "location"]


def test_stop_with_drain_fires_every_window_and_without_it_none(cluster, tmp_path):
    drained = hourly_counts(cluster, "drained")
    location = stop(cluster, drained, str(tmp_path / "drained"), drain=True)
    assert drained.wait(120) == "FINISHED" and os.path.exists(os.path.join(location.removeprefix("file://"), "_metadata"))
    rows = drained.results(timeout=60).to_pylist()
    assert [(r["k"], r["n"], r["total"]) for r in rows] == [("a", 10, 45)], "the open window fired before the savepoint"

    kept = hourly_counts(cluster, "kept open")
    stop(cluster, kept, str(tmp_path / "kept"), drain=False)
    assert kept.wait(120) == "FINISHED"
    assert kept.results(timeout=60).num_rows == 0, "without drain the window stays in the savepoint's state"


def test_manual_checkpoint_disposal_and_task_views(cluster, tmp_path):
    job = hourly_counts(cluster, "views")
    client = cluster.client
    trigger = client.post(f"/v1/jobs/{job.job_id}/checkpoints", {"checkpointType": "FULL"})
    done = client.await_operation(f"/v1/jobs/{job.job_id}/checkpoints/{trigger['request-id']}", "checkpoint", 120)
    history = client.get(f"/v1/jobs/{job.job_id}/checkpoints")["history"]
    assert any(h["id"] == done["checkpointId"] and h["status"] == "COMPLETED" for h in history), history

    assert client.get(f"/v1/jobs/{job.job_id}/status") == {"status": "RUNNING"}
    source, window = client.get(f"/jobs/{job.job_id}")["vertices"]
    vertex = client.get(f"/v1/jobs/{job.job_id}/vertices/{window['id']}")
    assert vertex["parallelism"] == 1 and vertex["subtasks"][0]["taskmanager-id"]
    source_io = client.get(f"/jobs/{job.job_id}/vertices/{source['id']}")["metrics"]
    assert source_io["read-records"] == 10 and source_io["write-records"] >= 1
    assert vertex["metrics"]["read-records"] == source_io["write-records"] == vertex["subtasks"][0]["metrics"]["records_in"]
    pressure = client.get(f"/v1/jobs/{job.job_id}/vertices/{source['id']}/backpressure")
    assert pressure["backpressureLevel"] in ("ok", "low", "high") and len(pressure["subtasks"]) == 1
    marks = client.get(f"/v1/jobs/{job.job_id}/vertices/{window['id']}/watermarks")
    assert marks and marks[0]["id"] == "0.currentInputWatermark"
    assert int(marks[0]["value"]) >= int((BASE + dt.timedelta(minutes=8)).timestamp() * 1000) - 1

    savepoint = job.savepoint(str(tmp_path / "sp"))
    directory = savepoint.removeprefix("file://")
    assert os.path.exists(directory)
    trigger = client.post("/v1/savepoint-disposal", {"savepoint-path": savepoint})
    client.await_operation(f"/v1/savepoint-disposal/{trigger['request-id']}", "disposal", 60)
    assert not os.path.exists(directory)
    trigger = client.post("/v1/savepoint-disposal", {"savepoint-path": str(tmp_path / "not-a-savepoint")})
    with pytest.raises(Exception, match="disposal failed"):
        client.await_operation(f"/v1/savepoint-disposal/{trigger['request-id']}", "disposal", 60)
    job.cancel()
    assert job.wait(120) == "CANCELED"
