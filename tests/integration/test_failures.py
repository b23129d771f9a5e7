"""What the cluster does when a TaskManager dies or there are too few slots: real processes, kill -9."""
from __future__ import annotations

import pytest

from runtime.client import JobFailed
from tests.helpers.clusters import job_state, wait_until
from tests.helpers.events import EventRecorder
from tests.integration.test_cluster_core import seq_source


def test_killed_task_manager_is_lost_its_slots_go_and_its_job_fails(fresh_cluster):
    cluster = fresh_cluster(taskmanagers=2, slots=2)
    events = EventRecorder(cluster)
    assert events.snapshot["type"] == "ClusterSnapshot" and len(events.snapshot["taskmanagers"]) == 2
    env = cluster.environment()
    env.set_parallelism(4)
    seq_source(env, rows=None, rows_per_second=2000).blackhole()
    job = env.execute_async("victim")
    wait_until(lambda: job_state(cluster.client, job.job_id) == "RUNNING", 120, "job running")
    assert len(events.of_type("SlotAllocated")) == 4

    victim = cluster.client.get("/taskmanagers")["taskmanagers"][0]["id"]
    cluster.kill_taskmanager(victim)
    lost = wait_until(lambda: events.of_type("TaskManagerLost"), 15, "TaskManagerLost event")
    assert lost[0]["tm_id"] == victim and "heartbeat" in lost[0]["reason"]
    overview = cluster.client.overview()
    assert overview["taskmanagers"] == 1 and overview["slots-total"] == 2

    # No checkpointing, so the default restart strategy is none: the job fails, naming the cause.
    with pytest.raises(JobFailed, match=f"TaskManager {victim} lost"):
        job.wait(60)
    root = cluster.client.get(f"/jobs/{job.job_id}/exceptions")["root-exception"]
    assert victim in root and "unreachable" in root and "heartbeat.rpc-failure-threshold" in root  # not the timeout
    survivor = ({t["id"] for t in events.snapshot["taskmanagers"]} - {victim}).pop()
    wait_until(lambda: {(e["tm_id"], e["slot_index"]) for e in events.of_type("SlotFreed")} >= {(survivor, 0), (survivor, 1)},
               30, "survivor's slots freed")
    states = [e["status"] for e in events.of_type("JobStatusChanged") if e["job_id"] == job.job_id]
    assert states[-1] == "FAILED" and "RUNNING" in states
    wait_until(lambda: cluster.client.overview()["slots-available"] == 2, 30, "surviving slots free")
    events.close()


def test_job_waits_for_slots_and_runs_when_a_task_manager_joins(fresh_cluster):
    cluster = fresh_cluster(taskmanagers=1, slots=2)
    env = cluster.environment()
    env.set_parallelism(3)
    seq_source(env, rows=3000).collect()
    job = env.execute_async("needs-three")
    wait_until(lambda: job_state(cluster.client, job.job_id) in ("CREATED", "INITIALIZING"), 30, "job waiting")
    assert cluster.client.overview()["slots-available"] == 2, "all-or-nothing: no slot held while waiting"
    cluster.add_taskmanager(slots=2)
    rows = job.results(timeout=240)
    assert sorted(rows.column("seq").to_pylist()) == list(range(3000))


def test_slot_request_timeout_fails_the_job_naming_needed_and_available(fresh_cluster):
    cluster = fresh_cluster(taskmanagers=1, slots=1, **{"slot.request.timeout": "2 s"})
    env = cluster.environment()
    env.set_parallelism(2)
    seq_source(env, rows=10).collect()
    job = env.execute_async("too-wide")
    with pytest.raises(JobFailed, match="needs 2 slots"):
        job.wait(60)
    root = cluster.client.get(f"/jobs/{job.job_id}/exceptions")["root-exception"]
    assert "needs 2 slots" in root and "1 of 1" in root, root
