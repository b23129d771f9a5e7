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
