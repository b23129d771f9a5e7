"""Starting real clusters for tests, and waiting on what they report."""
from __future__ import annotations

import contextlib
import time

from runtime.cluster import LocalCluster

FAST_FAILURE_CONFIG = {
    "heartbeat.interval": "500 ms",
    "heartbeat.timeout": "3 s",
    "cluster.fault-injection.enabled": "true",
}


@contextlib.contextmanager
def started_cluster(working_dir, taskmanagers=2, slots=2, config=None):
    working_dir.mkdir(parents=True, exist_ok=True)
    conf = {"cluster.fault-injection.enabled": "true", "spark.driver.memory": "1g", **(config or {})}
    cluster = LocalCluster(taskmanagers, slots, conf, working_dir=str(working_dir))
    with cluster:
        yield cluster


def wait_until(condition, timeout=60.0, what="condition", interval=0.1):
    """Poll a fact owned by another process until it holds; returns its truthy value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = condition()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last value: {last!r}")


def job_state(client, job_id):
    return client.get(f"/jobs/{job_id}")["state"]


def completed_checkpoints(client, job_id) -> int:
    return client.get(f"/jobs/{job_id}/checkpoints")["counts"]["completed"]


def wait_for_checkpoint_after_restart(client, job_id, restarts: int, timeout=300.0) -> None:
    """Until the job has restarted ``restarts`` times, every subtask of that round runs (or has finished its
    input) and the round has completed a checkpoint of its own, or the job finished: a fault injected now is a
    new failure, never one the JobMaster folds into a failover still under way."""
    def round_running() -> dict | None:
        details = client.get(f"/jobs/{job_id}")
        subtasks = [s for v in details["vertices"] for s in v["subtasks"]]
        if details["state"] == "FINISHED" or (details["restarts"] >= restarts and details["state"] == "RUNNING"
                                              and all(s["status"] in ("RUNNING", "FINISHED") for s in subtasks)):
            return {"state": details["state"], "completed": completed_checkpoints(client, job_id)}
        return None

    seen = wait_until(round_running, timeout, f"the job running after {restarts} restart(s)")
    if seen["state"] == "RUNNING":  # failover stops checkpointing: a checkpoint completed from here is this round's
        wait_until(lambda: completed_checkpoints(client, job_id) > seen["completed"] or
                   job_state(client, job_id) == "FINISHED", timeout, f"a checkpoint completed after restart {restarts}")


def busy_taskmanagers(client, job_id) -> list[str]:
    """The ids of the TaskManagers that run subtasks of the job (killing an idle one tests nothing)."""
    details = client.get(f"/jobs/{job_id}")
    return sorted({s["taskmanager-id"] for v in details["vertices"] for s in v["subtasks"] if s["taskmanager-id"]})


def busy_taskmanager(client, job_id) -> str:
    """One TaskManager that runs subtasks of the job."""
    return busy_taskmanagers(client, job_id)[0]
