"""High availability with real processes: two JobManagers (file HA) and two TaskManagers.

Killing the leader with SIGKILL must leave a standby leading, the TaskManagers registered with it and
a checkpointed job finished with exactly the output of a run without failures. A standby refuses
work with the leader's address. A leader stopped (SIGSTOP) in the middle of a write to the HA store
holds nobody back: the standby runs the job, and the old leader, continued, finds its lease taken and
stands by. Jobs that ended under the killed leader are listed by the new one from their archives, with
their exceptions and checkpoints, and so does ``flinkbench historyserver``.
"""
from __future__ import annotations

import os
import signal

import pytest

from runtime.client import RestClient
from runtime.cluster import LocalCluster
from runtime.examples import clicks
from tests.chaos import job as chaos_job
from tests.chaos import probes
from tests.chaos.checker import check
from tests.helpers.spark_reference import assert_clicks_exact
from tests.helpers.clusters import FAST_FAILURE_CONFIG, completed_checkpoints, job_state, wait_until
from tests.helpers.pacing import Pace
from tests.helpers.ha import (new_leader, own_role, raw_call, registered_taskmanagers, stop_inside_a_store_write,
                              with_standby)
from tests.helpers.history import history_server
from tests.integration.test_checkpoints import wait_for_new_checkpoint

pytestmark = pytest.mark.serial

HA_CONFIG = {**FAST_FAILURE_CONFIG, "high-availability.lease-duration": "2 s", "spark.driver.memory": "512m",
             "restart-strategy.fixed-delay.delay": "200 ms"}


@pytest.fixture(scope="module")
def ha_cluster(tmp_path_factory):
    working_dir = tmp_path_factory.mktemp("ha-cluster")
    config = {**HA_CONFIG, "jobmanager.archive.fs.dir": str(working_dir / "archives")}
    with LocalCluster(taskmanagers=2, slots=2, jobmanagers=2, config=config, working_dir=str(working_dir)) as cluster:
        yield cluster


def test_jobmanagers_lists_roles_and_a_standby_refuses_submission_naming_the_leader(ha_cluster):
    with_standby(ha_cluster)
    leader = ha_cluster.leader_url()
    standby = next(u for u, jm in zip(ha_cluster.urls, ha_cluster.jobmanager_processes) if jm.alive() and u != leader)

    status, view = raw_call(standby, ha_cluster.token, "GET", "/jobmanagers")
    assert status == 200
    roles = {jm["address"]: jm["role"] for jm in view["jobmanagers"]}
    assert roles[leader] == "leader" and roles[standby] == "standby"
    assert len({jm["id"] for jm in view["jobmanagers"]}) == len(view["jobmanagers"])
    assert view["leader"]["url"] == leader

    status, overview = raw_call(standby, ha_cluster.token, "GET", "/overview")
    assert status == 200 and overview["leader"]["url"] == leader

    status, refusal = raw_call(standby, ha_cluster.token, "POST", "/jobs", {"job_graph": {}})
    assert status == 503
    assert refusal["leader"] == leader
    assert f"is a standby: the leader is at {leader}" in refusal["errors"][0]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("sink", ["parquet", "collect"])
def test_killing_the_leader_resumes_the_job_from_its_checkpoint_with_exact_output(ha_cluster, spark, tmp_path, sink):
    with_standby(ha_cluster)
    # A 10 s window fires every 20,000 rows. 50 s of paced input: the first results and two checkpoints come
    # well before its end even on a slow machine (20 s was too little on CI), the rest is read at full speed.
    rows, event_rate = 150_000, 2_000.0
    out = tmp_path / "out"
    env = ha_cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    pace = Pace(tmp_path / "pace", 1_500)
    counted = clicks.counts(clicks.source(env, rows, event_rate=event_rate).map(pace, schema=clicks.SCHEMA))
    counted.write_parquet(str(out)) if sink == "parquet" else counted.collect()
    job = env.execute_async(f"clicks across a leader change ({sink})")
    if sink == "collect":  # rows the old leader took must still reach the client through the new one
        wait_until(lambda: ha_cluster.client.get(f"/jobs/{job.job_id}/results?offset=0&limit=0")["total"] > 0,
                   180, "results delivered before the kill")
    wait_for_new_checkpoint(ha_cluster, job.job_id)
    wait_for_new_checkpoint(ha_cluster, job.job_id)
    assert job_state(ha_cluster.client, job.job_id) == "RUNNING", "the job ended before the leader was killed"

    old = ha_cluster.leader_url()
    killed = ha_cluster.kill_jobmanager()
    assert killed.popen.returncode == -signal.SIGKILL
    pace.lift()  # no job ends without a leader: the rest is read once the new one has restored it
    leader = new_leader(ha_cluster, old)
    wait_until(lambda: registered_taskmanagers(ha_cluster) == 2, 60, "both TaskManagers to re-register")

    assert job.wait(600) == "FINISHED"
    checkpoints = ha_cluster.client.get(f"/jobs/{job.job_id}/checkpoints")
    assert checkpoints["counts"]["restored"] >= 1, "the new leader restored the job from a checkpoint"
    assert ha_cluster.leader_url() == leader
    got = spark.read.parquet(str(out)).toArrow() if sink == "parquet" else job.results()
    assert_clicks_exact(spark, got, rows, event_rate=event_rate)
    ha_store = os.path.join(ha_cluster.working_dir, "ha", "default")
    wait_until(lambda: not os.listdir(os.path.join(ha_store, "jobgraphs")), 30, "the finished job's HA entries removed")


@pytest.mark.timeout(900)
def test_a_leader_stopped_in_the_middle_of_a_store_write_is_replaced_and_stands_by_when_it_wakes(ha_cluster, tmp_path):
    """SIGSTOP the leader at the moment it writes to the HA store (its lease, a checkpoint pointer, an id
    reservation), while a checkpointed job runs: the standby takes the lapsed lease and runs the job, the old
    leader stands by when continued, and the output is exact. When file HA held a lock around its writes, the
    standby waited on the stopped leader's lock for as long as it stayed stopped."""
    with_standby(ha_cluster)
    out, rows, keys = str(tmp_path / "out"), 40_000, 20
    pace = Pace(tmp_path / "pace", 200.0)  # per source subtask: 100 s of input unless lifted
    env = ha_cluster.environment()
    chaos_job.build(env, out, rows, keys, pace, parallelism=2)
    job = env.execute_async("a leader stopped inside a store write")
    wait_until(lambda: completed_checkpoints(ha_cluster.client, job.job_id) > 0, 300, "a completed checkpoint")
    assert job_state(ha_cluster.client, job.job_id) == "RUNNING"

    old = ha_cluster.leader_url()
    paused = ha_cluster.jobmanager_at(old)
    store = os.path.join(ha_cluster.working_dir, "ha", "default")
    writing = stop_inside_a_store_write(paused.pid, store)
    try:
        leader = new_leader(ha_cluster, old, timeout=30)  # the lease lasts 2 s
        wait_until(lambda: probes.job_running_at(ha_cluster, job.job_id, skip=(old,)) == leader, 120,
                   f"the job RUNNING under the new leader (the old one stopped writing {writing})")
        wait_until(lambda: registered_taskmanagers(ha_cluster, via=leader) == 2, 60, "TaskManagers to follow the new leader")
    finally:
        os.kill(paused.pid, signal.SIGCONT)
    wait_until(lambda: own_role(ha_cluster, old) == "standby", 30, "the old leader to stand by")
    status, refusal = raw_call(old, ha_cluster.token, "GET", "/jobs/overview")
    assert status == 503 and refusal["leader"] == leader
    assert paused.alive() and ha_cluster.leader_url() == leader
    assert registered_taskmanagers(ha_cluster) == 2

    pace.lift()
    assert job.wait(600) == "FINISHED"
    verdict = check(*chaos_job.committed_columns(out), expected_rows=rows, num_keys=keys)
    assert verdict.ok and verdict.committed_rows == rows, verdict


def ended_jobs(cluster) -> dict[str, str]:
    """Three jobs that end under the current leader, each with checkpoints: name -> job id."""
    def explode(batch):
        raise ValueError("boom on purpose, for the archive")

    jobs = {}
    env = cluster.environment()
    env.enable_checkpointing("500 ms")
    env.datagen("seq BIGINT", number_of_rows=6_000, rows_per_second=2_000, fields={"seq": {"kind": "sequence"}}).blackhole()
    jobs["finished"] = env.execute_async("archived finished").job_id
    env = cluster.environment()
    env.set("restart-strategy.type", "none")
    env.from_collection([{"x": 1}], schema="x INT").map(explode, schema="x INT").blackhole()
    jobs["failed"] = env.execute_async("archived failed").job_id
    env = cluster.environment()
    env.enable_checkpointing("500 ms")
    env.datagen("seq BIGINT", rows_per_second=500).blackhole()
    cancelled = env.execute_async("archived cancelled")
    jobs["cancelled"] = cancelled.job_id
    wait_until(lambda: cluster.client.get(f"/jobs/{cancelled.job_id}/checkpoints")["counts"]["completed"] > 0, 180,
               "a checkpoint of the job to cancel")
    cancelled.cancel()
    ended = ("FINISHED", "FAILED", "CANCELED")
    wait_until(lambda: all(job_state(cluster.client, job_id) in ended for job_id in jobs.values()), 240, "all three ended")
    return jobs


def assert_archived_jobs_served(client, jobs: dict[str, str]) -> None:
    listed = {j["jid"]: j["state"] for j in client.get("/jobs/overview")["jobs"]}
    assert {listed.get(job_id) for job_id in jobs.values()} == {"FINISHED", "FAILED", "CANCELED"}, listed
    assert "boom on purpose, for the archive" in client.get(f"/jobs/{jobs['failed']}/exceptions")["root-exception"]
    for name in ("finished", "cancelled"):
        checkpoints = client.get(f"/jobs/{jobs[name]}/checkpoints")
        assert checkpoints["counts"]["completed"] >= 1 and checkpoints["history"], (name, checkpoints)
        done = next(c for c in checkpoints["history"] if c["status"] == "COMPLETED")
        details = client.get(f"/jobs/{jobs[name]}/checkpoints/details/{done['id']}")
        assert all(t["num_acknowledged_subtasks"] == t["num_subtasks"] for t in details["tasks"].values()), details
    vertex = client.get(f"/jobs/{jobs['finished']}")["vertices"][0]
    assert vertex["metrics"]["write-records"] == 6_000, "the final metrics"


@pytest.mark.timeout(900)
def test_jobs_ended_under_a_killed_leader_are_listed_by_the_new_one_and_the_history_server(ha_cluster):
    with_standby(ha_cluster)
    jobs = ended_jobs(ha_cluster)
    archives = os.path.join(ha_cluster.working_dir, "archives")
    wait_until(lambda: len(os.listdir(archives)) >= 3, 30, "three archives written")

    old = ha_cluster.leader_url()
    ha_cluster.kill_jobmanager()
    new_leader(ha_cluster, old)
    wait_until(lambda: set(jobs.values()) <= {j["jid"] for j in ha_cluster.client.get("/jobs/overview")["jobs"]}, 60,
               "the new leader to list the jobs that ended before")
    assert_archived_jobs_served(ha_cluster.client, jobs)
    status, refusal = raw_call(ha_cluster.leader_url(), ha_cluster.token, "PATCH", f"/jobs/{jobs['cancelled']}?mode=cancel")
    assert status == 409 and "ended CANCELED" in refusal["errors"][0]

    with history_server(archives, ha_cluster.token_file) as url:
        status, overview = raw_call(url, ha_cluster.token, "GET", "/jobs/overview")
        assert status == 200 and {j["jid"] for j in overview["jobs"]} >= set(jobs.values())
        with RestClient(url, token=ha_cluster.token) as history:
            assert_archived_jobs_served(history, jobs)
