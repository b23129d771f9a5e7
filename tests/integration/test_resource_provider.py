"""The local resource provider on real processes: TaskManagers started for a job and stopped when idle,
a refusal at the maximum, and a killed TaskManager replaced with no call from the test."""
from __future__ import annotations

import os
import signal
import time

import pytest

from runtime.client import JobFailed
from runtime.examples import clicks
from tests.helpers.spark_reference import assert_clicks_exact
from tests.helpers.clusters import FAST_FAILURE_CONFIG, job_state, started_cluster, wait_until
from tests.helpers.events import EventRecorder
from tests.helpers.pacing import Pace
from tests.integration.test_checkpoints import wait_for_new_checkpoint

LOCAL = {"resourcemanager.provider": "local", "resourcemanager.taskmanager-timeout": "5 s"}


def _registered(cluster) -> dict[str, dict]:
    return {tm["id"]: tm for tm in cluster.client.get("/taskmanagers")["taskmanagers"] if tm["state"] == "REGISTERED"}


def _decisions(recorder, tm_id=None) -> list[str]:
    return [e["decision"] for e in recorder.of_type("ResourceProviderDecision") if tm_id is None or e["tm_id"] == tm_id]


def test_a_job_on_a_cluster_without_task_managers_runs_on_ones_the_provider_starts_and_stops(tmp_path, spark):
    rows = 60_000
    with started_cluster(tmp_path, taskmanagers=0, slots=2, config=LOCAL) as cluster:
        recorder = EventRecorder(cluster)
        env = cluster.environment()
        env.set_parallelism(6)
        clicks.build(env, rows)
        got = env.execute_async("clicks").results(timeout=300)
        ended = time.monotonic()
        assert_clicks_exact(spark, got, rows)

        started = [e["tm_id"] for e in recorder.of_type("ResourceProviderDecision") if e["decision"] == "started"]
        assert len(started) == 3, "6 slots at 2 a TaskManager"
        wait_until(lambda: not _registered(cluster), 5 + 15, "the idle TaskManagers to be stopped")
        print(f"idle TaskManagers stopped {time.monotonic() - ended:.1f} s after the job ended "
              "(resourcemanager.taskmanager-timeout 5 s)")
        wait_until(lambda: _decisions(recorder).count("stopped") == 3, 15, "three stopped decisions")
        for tm_id in started:
            steps = _decisions(recorder, tm_id)
            assert steps == ["requested", "started", "registered", "idle", "stopped"], (tm_id, steps)
        assert not recorder.of_type("TaskManagerLost"), "a TaskManager stopped for being idle is not lost"
        recorder.close()


def test_a_job_beyond_the_maximum_fails_after_the_slot_request_timeout_saying_what_the_cluster_can_give(tmp_path):
    # A short timeout: the request fails once it has passed and the TaskManager the provider started (if still
    # starting its Spark) has registered, and what the cluster can give comes from the configuration alone.
    conf = {**LOCAL, "resourcemanager.local.max-taskmanagers": "1", "slot.request.timeout": "5 s"}
    with started_cluster(tmp_path, taskmanagers=0, slots=2, config=conf) as cluster:
        recorder = EventRecorder(cluster)
        env = cluster.environment()
        env.set_parallelism(4)
        env.datagen("n BIGINT", number_of_rows=100).collect()
        job = env.execute_async("too wide")
        with pytest.raises(JobFailed, match=r"needs 4 slots.*can give at most 2 .*max-taskmanagers 1"):
            job.wait(120)
        assert "refused" in _decisions(recorder)
        wait_until(lambda: not _registered(cluster), 20, "the TaskManager it started to be stopped when idle")
        assert job_state(cluster.client, job.job_id) == "FAILED"
        recorder.close()


def _kill_the_job_s_task_manager(cluster, job_id) -> tuple[str, float]:
    tm = next(tm for tm in _registered(cluster).values() if any(s["job-id"] == job_id for s in tm["slots"]))
    os.kill(tm["pid"], signal.SIGKILL)
    return tm["id"], time.time()


def _all_running_again(recorder, job, after: float) -> float:
    """When the last subtask of the restarted job reported RUNNING (tasks do once their state is restored)."""
    subtasks = {(v["id"], s["subtask"]) for v in job.details()["vertices"] for s in v["subtasks"]}
    first_running: dict[tuple, float] = {}
    for e in recorder.of_type("TaskStatusChanged"):
        if e["state"] == "RUNNING" and e["ts"] > after:
            first_running.setdefault((e["vertex_id"], e["subtask_index"]), e["ts"])
    assert set(first_running) == subtasks, "every subtask ran again after the kill"
    return max(first_running.values())


def _checkpointed_clicks(cluster, rows, pace: Pace):
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("500 ms")
    clicks.counts(clicks.source(env, rows).map(pace, schema=clicks.SCHEMA)).collect()
    return env.execute_async("clicks")


def test_a_killed_task_manager_is_replaced_by_the_provider_and_the_output_is_exact(tmp_path, spark):
    # With a standby the job restarts on it at once; the provider then replaces the killed TaskManager to
    # keep one standby (a job waiting for TaskManagers the provider starts: the test of a cluster without any).
    rows = 200_000  # 40 s of paced input: the kill comes after a first checkpoint, well before its end
    conf = {**LOCAL, **FAST_FAILURE_CONFIG, "resourcemanager.standby-taskmanagers": "1",
            "restart-strategy.fixed-delay.delay": "50 ms"}
    with started_cluster(tmp_path, taskmanagers=0, slots=2, config=conf) as cluster:
        wait_until(lambda: len(_registered(cluster)) == 1, 120, "the standby TaskManager")
        recorder = EventRecorder(cluster)
        pace = Pace(tmp_path / "pace", 2_500)
        job = _checkpointed_clicks(cluster, rows, pace)
        wait_for_new_checkpoint(cluster, job.job_id)
        killed, killed_at = _kill_the_job_s_task_manager(cluster, job.job_id)
        pace.lift()
        assert_clicks_exact(spark, job.results(timeout=300), rows)

        replaced = [e for e in recorder.of_type("ResourceProviderDecision") if e["decision"] == "requested"
                    and e["ts"] > killed_at]
        assert replaced, "the provider started a TaskManager after the kill, with no call from the test"
        assert [e for e in recorder.of_type("CheckpointRestored") if e["ts"] > killed_at], "restored from a checkpoint"
        took = _all_running_again(recorder, job, killed_at) - killed_at
        print(f"kill -9 of {killed} to RUNNING with state restored in {took:.2f} s")
        assert took < 3.0, f"with a standby TaskManager recovery took {took:.2f} s"
        recorder.close()
