"""High availability with real processes: two JobManagers (file HA) and two TaskManagers.

Killing the leader with SIGKILL must leave a standby leading, the TaskManagers registered with it and
a checkpointed job finished with exactly the output of a run without failures. A standby refuses
work with the leader's address; a paused leader that comes back finds its lease taken and stands by.
"""
from __future__ import annotations

import os
import signal

import pytest

from runtime.cluster import LocalCluster
from runtime.examples import clicks
from tests.helpers.spark_reference import assert_clicks_exact
from tests.helpers.clusters import FAST_FAILURE_CONFIG, job_state, wait_until
from tests.helpers.pacing import Pace
from tests.helpers.ha import new_leader, own_role, raw_call, registered_taskmanagers, with_standby
from tests.integration.test_checkpoints import wait_for_new_checkpoint

pytestmark = pytest.mark.serial

HA_CONFIG = {**FAST_FAILURE_CONFIG, "high-availability.lease-duration": "2 s", "spark.driver.memory": "512m",
             "restart-strategy.fixed-delay.delay": "200 ms"}


@pytest.fixture(scope="module")
def ha_cluster(tmp_path_factory):
    with LocalCluster(taskmanagers=2, slots=2, jobmanagers=2, config=HA_CONFIG,
                      working_dir=str(tmp_path_factory.mktemp("ha-cluster"))) as cluster:
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


def test_a_paused_leader_that_comes_back_finds_its_lease_taken_and_stands_by(ha_cluster):
    with_standby(ha_cluster)
    old = ha_cluster.leader_url()
    paused = ha_cluster.jobmanager_at(old)
    os.kill(paused.pid, signal.SIGSTOP)
    try:
        leader = new_leader(ha_cluster, old)
        wait_until(lambda: registered_taskmanagers(ha_cluster, via=leader) == 2, 60, "TaskManagers to follow the new leader")
    finally:
        os.kill(paused.pid, signal.SIGCONT)
    wait_until(lambda: own_role(ha_cluster, old) == "standby", 30, "the old leader to stand by")
    status, refusal = raw_call(old, ha_cluster.token, "GET", "/jobs/overview")
    assert status == 503 and refusal["leader"] == leader
    assert paused.alive() and ha_cluster.leader_url() == leader
    assert registered_taskmanagers(ha_cluster) == 2
