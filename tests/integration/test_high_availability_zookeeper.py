"""ZooKeeper HA against a real standalone ZooKeeper: fencing in-process; leader takeover between two
JobManager processes that the TaskManagers follow; and ZooKeeper outages after which exactly one
JobManager leads and serves and a running job ends exact: the server paused (SIGSTOP) until the leader's
connection drops, and the cluster cut off from it past the session timeout (the sessions expire)."""
from __future__ import annotations

import os
import secrets
import threading
import time

import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.client import RestClient
from runtime.cluster import LocalCluster
from runtime.codec import to_plain
from runtime.errors import ClusterError
from runtime.examples import clicks
from tests.helpers.spark_reference import assert_clicks_exact
from runtime.ha.services import LeadershipLost
from runtime.ha.zookeeper import ZooKeeperHaServices
from runtime.ids import JobId
from tests.helpers.clusters import FAST_FAILURE_CONFIG, job_state, wait_until
from tests.helpers.ha import new_leader, own_role, raw_call, registered_taskmanagers, serving, with_standby
from tests.helpers.pacing import Pace
from tests.helpers.spark_engines import silent_spark_connect
from tests.helpers.zookeeper import ConnectionCutter, zookeeper_server
from tests.integration.test_checkpoints import wait_for_new_checkpoint
from tests.integration.test_cluster_core import seq_source

LEASE_S = 2.0  # also the ZooKeeper session timeout


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory):
    with zookeeper_server(tmp_path_factory.mktemp("zookeeper")) as server:
        yield server


@pytest.fixture(scope="module")
def zk_link(zookeeper):
    """The cluster's way to ZooKeeper, which a test can cut."""
    link = ConnectionCutter(zookeeper.quorum)
    yield link
    link.close()


@pytest.fixture(scope="module")
def zk_cluster(zk_link, tmp_path_factory):
    config = {**FAST_FAILURE_CONFIG, "high-availability.type": "zookeeper", "spark.driver.memory": "512m",
              "high-availability.zookeeper.quorum": zk_link.quorum,
              "high-availability.lease-duration": f"{LEASE_S:g} s", "restart-strategy.fixed-delay.delay": "200 ms"}
    with LocalCluster(taskmanagers=1, slots=2, jobmanagers=2, config=config,
                      working_dir=str(tmp_path_factory.mktemp("zk-cluster"))) as cluster:
        yield cluster


@pytest.fixture
def contenders(zookeeper):
    """Two JobManagers' ZooKeeper HA services under a root of their own, closed after the test."""
    root = f"/t-{secrets.token_hex(4)}"
    a, b = ZooKeeperHaServices(zookeeper.quorum, root, 2.0), ZooKeeperHaServices(zookeeper.quorum, root, 2.0)
    yield a, b, root
    a.close()
    b.close()


def test_a_closed_leader_session_hands_over_and_fences_its_writes(contenders):
    a, b, _ = contenders
    job = JobId.new()
    old = a.try_lead("jm-a", "a")
    assert old is not None and b.try_lead("jm-b", "b") is None
    assert a.try_lead("jm-a", "a") == old, "the holder is confirmed with the same session"
    a.put_checkpoint_pointer(old, job, "/chk-1")
    a.zk.stop()  # its session ends: the ephemeral leader znode goes with it
    new = b.try_lead("jm-b", "b")
    assert new not in (None, old) and b.leader().address == "b"
    with pytest.raises(LeadershipLost):
        b.put_checkpoint_pointer(old, job, "/chk-stale")
    b.put_checkpoint_pointer(new, job, "/chk-2")
    assert b.checkpoint_pointer(job) == "/chk-2"


def test_the_checkpoint_id_counter_gives_each_id_to_one_leader_and_refuses_a_deposed_one(contenders):
    a, b, root = contenders
    job = JobId.new()
    old = a.try_lead("jm-a", "a")
    assert [a.reserve_checkpoint_ids(old, job, 2, 1) for _ in range(2)] == [1, 3]
    a.put_checkpoint_pointer(old, job, "/chk-2", ("/chk-1", "/chk-2"))
    a.zk.stop()  # the old leader's session ends while ids 3 and 4 are still its own
    new = b.try_lead("jm-b", "b")
    with pytest.raises(LeadershipLost):
        b.reserve_checkpoint_ids(old, job, 2, 1)
    assert b.retained_checkpoints(job) == ["/chk-1", "/chk-2"]
    assert b.reserve_checkpoint_ids(new, job, 2, 3) == 5, "after every id the old leader reserved"
    b.remove_job(new, job)
    assert b.zk.exists(f"{root}/checkpoint-counters/{job}") is None


def leader_session(cluster, leader: str) -> str:
    """The leader session id as the leader itself reports it."""
    return raw_call(leader, cluster.token, "GET", "/jobmanagers")[1]["leader"]["session-id"]


def start_clicks(cluster, out, rows: int, event_rate: float, pace: Pace):
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    clicks.counts(clicks.source(env, rows, event_rate=event_rate).map(pace, schema=clicks.SCHEMA)).write_parquet(str(out))
    return env.execute_async("clicks through a ZooKeeper outage")


def interrupt_connection(cluster, zookeeper, leader: str) -> None:
    """Pause ZooKeeper until the leader notices its connection is gone, then resume it at once: the
    connection drops (pings unanswered for two thirds of the session timeout) but the session lives."""
    zookeeper.pause()
    try:
        wait_until(lambda: own_role(cluster, leader) == "suspended", 2 * LEASE_S, "the leader to stop serving",
                   interval=0.02)
    finally:
        zookeeper.resume()


def expire_sessions(zk_link) -> None:
    """Cut the cluster off from ZooKeeper well past the session timeout: every session expires."""
    zk_link.cut()
    try:
        time.sleep(LEASE_S + 2.0)  # the length of the outage is the fault being injected
    finally:
        zk_link.restore()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("outage", ["connection", "session"])
def test_after_a_zookeeper_outage_exactly_one_jobmanager_serves_and_the_job_ends_exact(
        zk_cluster, zookeeper, zk_link, spark, tmp_path, outage):
    with_standby(zk_cluster)
    rows, event_rate = 80_000, 2_000.0
    pace = Pace(tmp_path / "pace", 1_000)  # 40 s of input at this pace, read at full speed after the outage
    job = start_clicks(zk_cluster, tmp_path / "out", rows, event_rate, pace)
    wait_for_new_checkpoint(zk_cluster, job.job_id)
    assert job_state(zk_cluster.client, job.job_id) == "RUNNING"
    leader = zk_cluster.leader_url()
    session = leader_session(zk_cluster, leader)
    assert serving(zk_cluster, f"/jobs/{job.job_id}") == [leader]

    if outage == "connection":
        interrupt_connection(zk_cluster, zookeeper, leader)
    else:
        expire_sessions(zk_link)
    resumed_at = time.monotonic()
    now_serving = wait_until(lambda: (s := serving(zk_cluster, f"/jobs/{job.job_id}")) and len(s) == 1 and s, 20,
                             "exactly one JobManager to serve the job")
    took = time.monotonic() - resumed_at
    roles = [own_role(zk_cluster, url) for url in zk_cluster.urls]
    assert roles.count("leader") == 1, roles
    if outage == "connection":  # confirmed: the same leader and session, nothing re-elected
        assert now_serving == [leader] and leader_session(zk_cluster, leader) == session
    else:  # the session expired with its leader znode: a leader elected anew
        assert leader_session(zk_cluster, now_serving[0]) != session
    print(f"{outage} outage: one JobManager serving {took:.1f} s after ZooKeeper resumed")

    pace.lift()
    assert job.wait(600) == "FINISHED"
    got = spark.read.parquet(str(tmp_path / "out")).toArrow()
    assert_clicks_exact(spark, got, rows, event_rate=event_rate)


BATCHES, BATCH_ROWS, KILL_AFTER = 60, 50, 20


def push_batches(client: RestClient, job_id: str, killed: threading.Event, errors: list) -> None:
    """Push numbered rows in small batches, as a notebook would, through whichever JobManager leads."""
    job = client.job(job_id)
    try:
        for b in range(BATCHES):
            job.push("numbers", [{"n": b * BATCH_ROWS + i, "word": f"w{i}"} for i in range(BATCH_ROWS)])
            if b == KILL_AFTER:
                killed.wait(60)  # the leader dies before the rest are pushed
            time.sleep(0.02)
    except Exception as err:  # noqa: BLE001 - reported by the test
        errors.append(err)


@pytest.mark.timeout(600)
def test_a_killed_leader_loses_no_pushed_row_and_a_retried_submission_yields_one_job(zk_cluster, zk_link):
    with_standby(zk_cluster)
    ha = {"high-availability.type": "zookeeper", "high-availability.zookeeper.quorum": zk_link.quorum}
    with RestClient(token_file=zk_cluster.token_file, ha=ha) as client, \
            RestClient(token_file=zk_cluster.token_file, ha=ha) as pushing:  # no address: ZooKeeper names the leader
        run_pushed_rows_across_a_leader_kill(zk_cluster, client, pushing)


def run_pushed_rows_across_a_leader_kill(zk_cluster, client, pushing):
    """The test's body, with one client submitting and one pushing (each closed by the test)."""
    env = StreamExecutionEnvironment(client)
    env.set_parallelism(2)
    env.enable_checkpointing("500 ms")
    env.push_source("n BIGINT, word STRING", name="numbers").collect()
    graph = to_plain(env.job_graph("pushed across a leader kill"))
    job_id = secrets.token_hex(16)
    job = client.submit(graph, job_id)
    wait_until(lambda: job.status() == "RUNNING", 120, "the job to run")

    killed, errors = threading.Event(), []
    pusher = threading.Thread(target=push_batches, args=(pushing, job_id, killed, errors))
    pusher.start()
    wait_until(lambda: job.push_sources()[0]["rows"] > KILL_AFTER * BATCH_ROWS, 60, "rows pushed before the kill")
    old = zk_cluster.leader_url()
    zk_cluster.kill_jobmanager()
    killed.set()
    retried = client.submit(graph, job_id)  # the client cannot tell whether its submission was taken
    pusher.join(300)
    assert not errors, errors
    assert retried.job_id == job_id and client.url != old
    job.close_source("numbers")
    assert job.wait(300) == "FINISHED"

    got = job.results().column("n").to_pylist()
    assert len(got) == len(set(got)) == BATCHES * BATCH_ROWS, "every pushed row exactly once"
    assert sorted(got) == list(range(BATCHES * BATCH_ROWS))
    same = [j for j in client.jobs() if j["name"] == "pushed across a leader kill"]
    assert [j["jid"] for j in same] == [job_id], "one job, whatever the retries"
    data = os.path.join(zk_cluster.working_dir, "ha", "default", "jobs", job_id)
    wait_until(lambda: not os.path.exists(data), 30, "the finished job's data removed from the HA storage")


def running_on(cluster, job_id: str) -> set[str] | None:
    """The TaskManagers running the job once every subtask is RUNNING, else None."""
    job = cluster.client.get(f"/jobs/{job_id}")
    subtasks = [s for v in job["vertices"] for s in v["subtasks"]]
    if job["state"] != "RUNNING" or not subtasks or any(s["status"] != "RUNNING" for s in subtasks):
        return None
    return {s["taskmanager-id"] for s in subtasks}


@pytest.mark.timeout(600)
def test_a_new_leader_deploys_the_job_on_started_taskmanagers_not_on_one_whose_spark_is_starting(zk_cluster):
    """Every TaskManager registers with the new leader again, one whose Spark session is still starting
    too; the recovered job goes to the started TaskManager that ran it instead of waiting for a JVM."""
    with_standby(zk_cluster)
    env = zk_cluster.environment()
    env.set_parallelism(2)
    seq_source(env, rows=None, rows_per_second=200).blackhole()
    job = env.execute_async("recovered onto started TaskManagers")
    ran_on = wait_until(lambda: running_on(zk_cluster, job.job_id), 120, "the job running")
    with silent_spark_connect() as remote:
        starting = zk_cluster.add_taskmanager(config={"spark.remote": remote})  # registers; Spark never comes up
        try:
            old = zk_cluster.leader_url()
            zk_cluster.kill_jobmanager()
            new_leader(zk_cluster, old)
            wait_until(lambda: registered_taskmanagers(zk_cluster) == 2, 60, "both TaskManagers with the new leader")
            assert wait_until(lambda: running_on(zk_cluster, job.job_id), 120, "the job running again") == ran_on
        finally:
            job.cancel()
            starting.kill()
    assert job.wait(60) == "CANCELED"


@pytest.mark.timeout(600)
def test_a_standby_takes_over_from_a_killed_leader_and_taskmanagers_follow(zk_cluster):
    with_standby(zk_cluster)
    old = zk_cluster.leader_url()
    zk_cluster.kill_jobmanager()
    leader = wait_until(lambda: (url := zk_cluster.leader_url()) not in (None, old) and url, 60, "a new leader")
    roles = {jm["address"]: jm["role"] for jm in zk_cluster.client.get("/jobmanagers")["jobmanagers"]}
    assert roles == {leader: "leader"}
    wait_until(lambda: [tm["state"] for tm in zk_cluster.client.get("/taskmanagers")["taskmanagers"]] == ["REGISTERED"],
               60, "the TaskManager to register with the new leader")


@pytest.mark.timeout(600)
def test_users_their_quotas_and_their_jobs_isolation_hold_on_the_new_leader(zk_cluster):
    """The user table is in ZooKeeper, written under the leader's fence: the leader elected after a kill knows
    every user and quota, and each job's owner comes back with the job."""
    with_standby(zk_cluster)
    admin = zk_cluster.client
    dana = RestClient(zk_cluster.urls, token=admin.post("/users", {"name": "dana", "slots": 1})["token"])
    eve = RestClient(zk_cluster.urls, token=admin.post("/users", {"name": "eve", "slots": 2})["token"])
    env = StreamExecutionEnvironment(dana)
    env.set_parallelism(1)
    seq_source(env, rows=None, rows_per_second=50).blackhole()
    job = env.execute_async("dana's job")
    wait_until(lambda: job.status() == "RUNNING", 120, "dana's job running")
    old = zk_cluster.leader_url()
    zk_cluster.kill_jobmanager()
    leader = new_leader(zk_cluster, old)
    try:
        users = wait_until(lambda: raw_call(leader, zk_cluster.token, "GET", "/users")[1].get("users"), 30, "users")
        assert {(u["name"], u["slots"]) for u in users} >= {("dana", 1), ("eve", 2)}
        wait_until(lambda: job.status() == "RUNNING", 120, "dana's job running under the new leader")
        assert raw_call(leader, eve.token, "GET", f"/jobs/{job.job_id}")[0] == 404
        assert raw_call(leader, eve.token, "PATCH", f"/jobs/{job.job_id}?mode=cancel")[0] == 404
        assert [j["jid"] for j in eve.jobs()] == [] and [j["jid"] for j in dana.jobs()] == [job.job_id]
        again = StreamExecutionEnvironment(dana)
        again.set_parallelism(1)
        seq_source(again, rows=None, rows_per_second=50).blackhole()
        with pytest.raises(ClusterError, match="user 'dana' may hold 1 slot and holds 1 \\('dana's job' 1\\)"):
            again.execute_async("dana's second job")
        job.cancel()
        assert job.wait(60) == "CANCELED"
    finally:
        admin.job(job.job_id).cancel()
        for name in ("dana", "eve"):
            admin.request("DELETE", f"/users/{name}")
        dana.close()
        eve.close()
