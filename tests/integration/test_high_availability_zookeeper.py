"""ZooKeeper HA against a real standalone ZooKeeper: fencing in-process, and leader takeover between
two JobManager processes that the TaskManagers follow."""
from __future__ import annotations

import pytest

from runtime.cluster import LocalCluster
from runtime.ha.services import LeadershipLost
from runtime.ha.zookeeper import ZooKeeperHaServices
from runtime.ids import JobId
from tests.helpers.clusters import FAST_FAILURE_CONFIG, wait_until
from tests.helpers.zookeeper import zookeeper_server


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory):
    with zookeeper_server(tmp_path_factory.mktemp("zookeeper")) as quorum:
        yield quorum


def test_a_closed_leader_session_hands_over_and_fences_its_writes(zookeeper):
    a = ZooKeeperHaServices(zookeeper, "/t1", 2.0)
    b = ZooKeeperHaServices(zookeeper, "/t1", 2.0)
    try:
        job = JobId.new()
        old = a.try_lead("jm-a", "a")
        assert old is not None and b.try_lead("jm-b", "b") is None
        a.put_checkpoint_pointer(old, job, "/chk-1")
        a.zk.stop()  # its session ends: the ephemeral leader znode goes with it
        new = b.try_lead("jm-b", "b")
        assert new not in (None, old) and b.leader().address == "b"
        with pytest.raises(LeadershipLost):
            b.put_checkpoint_pointer(old, job, "/chk-stale")
        b.put_checkpoint_pointer(new, job, "/chk-2")
        assert b.checkpoint_pointer(job) == "/chk-2"
    finally:
        a.close()
        b.close()


@pytest.mark.timeout(600)
def test_a_standby_takes_over_from_a_killed_leader_and_taskmanagers_follow(zookeeper, tmp_path):
    config = {**FAST_FAILURE_CONFIG, "high-availability.type": "zookeeper", "spark.driver.memory": "512m",
              "high-availability.zookeeper.quorum": zookeeper, "high-availability.lease-duration": "2 s"}
    with LocalCluster(taskmanagers=1, slots=1, jobmanagers=2, config=config, working_dir=str(tmp_path)) as cluster:
        old = cluster.leader_url()
        cluster.kill_jobmanager()
        leader = wait_until(lambda: (url := cluster.leader_url()) not in (None, old) and url, 60, "a new leader")
        roles = {jm["address"]: jm["role"] for jm in cluster.client.get("/jobmanagers")["jobmanagers"]}
        assert roles == {leader: "leader"}
        wait_until(lambda: [tm["state"] for tm in cluster.client.get("/taskmanagers")["taskmanagers"]] == ["REGISTERED"],
                   60, "the TaskManager to register with the new leader")
