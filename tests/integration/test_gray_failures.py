"""Gray failures under ZooKeeper HA, made deterministic: a leader stopped (SIGSTOP) while its checkpoint P
is in progress, a standby that takes over, restores P - 1 and completes a checkpoint of its own, and the
old leader continued (SIGCONT) with its leader election held back (fault injection), so that its timers act
before it learns it lost the leadership, every time. Before checkpoint ids came from the HA store, the
successor's first checkpoint was numbered P too and the woken leader's discard of its pending P deleted
it: the job's only restore point, after which a TaskManager loss restarted the job for ever.

Here the woken leader's discard is refused (logged as a fenced write), the successor's checkpoints are
numbered after P, and a TaskManager killed afterwards is recovered from the successor's checkpoint with
the output exact. Every storage operation is traced (FLINKBENCH_STORAGE_TRACE): none by a process that
had lost its leadership or whose attempt was superseded.
"""
from __future__ import annotations

import os
import re
import signal
import time

import pytest

from runtime.checkpoint import trace
from runtime.cluster import LocalCluster
from tests.chaos import job as chaos_job
from tests.chaos.checker import check
from tests.chaos.storage_audit import audit, read_trace
from tests.helpers.clusters import wait_until
from tests.helpers.ha import new_leader, own_role, raw_call
from tests.helpers.pacing import Pace
from tests.helpers.zookeeper import zookeeper_server

pytestmark = pytest.mark.serial

CONFIG = {"heartbeat.interval": "500 ms", "heartbeat.timeout": "10 s",  # TaskManagers may stop a few seconds
          "cluster.fault-injection.enabled": "true", "high-availability.type": "zookeeper",
          "high-availability.lease-duration": "2 s", "execution.checkpointing.timeout": "10 s",
          "state.checkpoints.num-retained": "1", "restart-strategy.fixed-delay.delay": "200 ms",
          "spark.driver.memory": "512m"}
ROWS, KEYS = 120_000, 20  # 2 minutes of input at the pace unless lifted
PAUSE_AT_LEAST_S = 12.0  # the leader's pause outlasts checkpoint P's timeout: its timer fires first thing on wake


@pytest.fixture(scope="module")
def traced_cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("gray")
    trace_file = str(base / "storage-trace.jsonl")
    with zookeeper_server(base / "zookeeper") as zookeeper, pytest.MonkeyPatch.context() as patch:
        patch.setenv(trace.ENV, trace_file)  # every process of the cluster traces its storage operations
        config = {**CONFIG, "high-availability.zookeeper.quorum": zookeeper.quorum}
        with LocalCluster(taskmanagers=2, slots=2, jobmanagers=2, config=config,
                          working_dir=str(base / "cluster")) as cluster:
            yield cluster, trace_file


def checkpoints_at(cluster, url: str, job_id: str) -> dict:
    status, stats = raw_call(url, cluster.token, "GET", f"/jobs/{job_id}/checkpoints")
    return stats if status == 200 else {}


def completed_ids(cluster, url: str, job_id: str) -> list[int]:
    return [h["id"] for h in checkpoints_at(cluster, url, job_id).get("history", [])
            if h["status"] == "COMPLETED" and not h["is_savepoint"]]


def running_on(cluster, url: str, job_id: str) -> list[str]:
    """The TaskManagers running the job's subtasks, as ``url`` says."""
    job = raw_call(url, cluster.token, "GET", f"/jobs/{job_id}")[1]
    return sorted({s["taskmanager-id"] for v in job["vertices"] for s in v["subtasks"] if s.get("taskmanager-id")})


def stop_inside_a_checkpoint(cluster, leader: str, job_id: str) -> None:
    """SIGSTOP ``leader`` while a checkpoint it triggered waits for acknowledgements: the TaskManagers are
    stopped first, so that their sources cannot take its barrier, and continued once the leader is."""
    taskmanagers = [tm for tm in cluster.taskmanagers if tm.alive()]
    for tm in taskmanagers:
        os.kill(tm.pid, signal.SIGSTOP)
    try:
        wait_until(lambda: checkpoints_at(cluster, leader, job_id).get("counts", {}).get("in_progress"), 20,
                   "the leader to trigger a checkpoint", interval=0.05)
        assert raw_call(leader, cluster.token, "POST", "/jobmanager/hold-election?seconds=600")[0] == 202
        os.kill(cluster.jobmanager_at(leader).pid, signal.SIGSTOP)
    finally:
        for tm in taskmanagers:
            os.kill(tm.pid, signal.SIGCONT)


@pytest.mark.timeout(900)
def test_a_leader_woken_inside_a_checkpoint_cannot_delete_its_successors_only_restore_point(traced_cluster, tmp_path):
    cluster, trace_file = traced_cluster
    out = str(tmp_path / "out")
    pace = Pace(tmp_path / "pace", 500.0)  # per source subtask: a bundle (1,000 rows at least) every 2 s
    env = cluster.environment()
    chaos_job.build(env, out, ROWS, KEYS, pace, parallelism=2, checkpoint_interval="5 s")
    job = env.execute_async("a gray failure inside a checkpoint")
    old = cluster.leader_url()
    wait_until(lambda: completed_ids(cluster, old, job.job_id), 300, "checkpoint P - 1 to complete")

    stop_inside_a_checkpoint(cluster, old, job.job_id)
    paused, stopped_at = cluster.jobmanager_at(old), time.monotonic()
    try:  # the standby takes over, restores P - 1 and completes its own first checkpoint
        leader = new_leader(cluster, old, timeout=120)
        successor = wait_until(lambda: completed_ids(cluster, leader, job.job_id), 300,
                               "the new leader's first completed checkpoint")
        time.sleep(max(0.0, PAUSE_AT_LEAST_S - (time.monotonic() - stopped_at)))  # the pause is the fault
    finally:
        os.kill(paused.pid, signal.SIGCONT)

    # Woken with its election held, the old leader's checkpoint timer fails P and discards it: refused.
    refused = wait_until(lambda: re.search(r"fenced write refused: \S+ (\S*/chk-(\d+))\S*", _read(paused.log_path)),
                         60, "the woken leader's refused discard")
    p = int(refused.group(2))
    assert min(successor) > p, f"the successor's checkpoints {successor} reuse the id of P = {p}"
    restore_point = checkpoints_at(cluster, leader, job.job_id)["latest"]["completed"]["external_path"]
    assert os.path.exists(os.path.join(restore_point.removeprefix("file://"), "_metadata"))
    assert raw_call(old, cluster.token, "POST", "/jobmanager/hold-election?seconds=0")[0] == 202
    wait_until(lambda: own_role(cluster, old) == "standby", 60, "the old leader to stand by")

    restored = checkpoints_at(cluster, leader, job.job_id)["counts"]["restored"]
    cluster.kill_taskmanager(running_on(cluster, leader, job.job_id)[0])
    wait_until(lambda: checkpoints_at(cluster, leader, job.job_id)["counts"]["restored"] > restored, 300,
               "the job restored after the TaskManager kill")
    pace.lift()
    assert job.wait(600) == "FINISHED"
    verdict = check(*chaos_job.committed_columns(out), expected_rows=ROWS, num_keys=KEYS)
    assert verdict.ok and verdict.committed_rows == ROWS, verdict

    result = audit(read_trace(trace_file))
    assert result.ok, result
    assert result.refused >= 1 and result.sessions >= 2, result


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()
