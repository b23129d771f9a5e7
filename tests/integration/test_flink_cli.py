"""Flink's own command-line client (``bin/flink`` of apache-flink 2.3.0) against a live Flinkbench
cluster: list, savepoint, stop with savepoint and cancel each succeed and show our job's name and state.

The client calls the versioned paths (``/v1/jobs/overview`` ...), parses every answer with Flink's
own message classes, and sends the cluster token from ``FLINK_REST_CLIENT_HEADERS``. apache-flink is
installed into a cached virtual environment of its own (tests.helpers.pyflink); the test fails, not
skips, when that is impossible.
"""
from __future__ import annotations

import os

import pytest

from tests.helpers.clusters import wait_until
from tests.helpers.pyflink import pyflink

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def flink():
    return pyflink()


def endless_job(cluster, name: str):
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("2 s")
    env.datagen("seq BIGINT, user INT", rows_per_second=500, fields={"seq": {"kind": "sequence"}}).blackhole()
    job = env.execute_async(name)
    wait_until(lambda: all(s["status"] == "RUNNING" for v in job.details()["vertices"] for s in v["subtasks"]),
               180, f"every subtask of {name} RUNNING")
    return job


def run(flink, cluster, *args):
    done = flink.run_cli(list(args), cluster.url, cluster.token)
    assert done.returncode == 0, f"flink {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


def savepoint_path(stdout: str) -> str:
    line = next((ln for ln in stdout.splitlines() if "Savepoint completed. Path:" in ln), None)
    assert line, stdout
    return line.split("Path:", 1)[1].strip()


def test_flink_list_savepoint_stop_and_cancel_work_against_flinkbench(flink, cluster, tmp_path):
    job = endless_job(cluster, "flink-cli-compat")
    for listing in (run(flink, cluster, "list"), run(flink, cluster, "list", "-a")):
        assert f"{job.job_id} : flink-cli-compat (RUNNING)" in listing, listing

    taken = savepoint_path(run(flink, cluster, "savepoint", job.job_id, f"file://{tmp_path}/sp"))
    assert os.path.exists(os.path.join(taken.removeprefix("file://"), "_metadata")), taken
    assert job.status() == "RUNNING", "a savepoint without cancel leaves the job running"

    stopped = savepoint_path(run(flink, cluster, "stop", "--savepointPath", f"file://{tmp_path}/stop", job.job_id))
    assert os.path.exists(os.path.join(stopped.removeprefix("file://"), "_metadata")), stopped
    assert job.wait(120) == "FINISHED"
    assert f"{job.job_id} : flink-cli-compat (FINISHED)" in run(flink, cluster, "list", "-a")

    other = endless_job(cluster, "flink-cli-cancel")
    assert "Cancelled job" in run(flink, cluster, "cancel", other.job_id)
    assert other.wait(120) == "CANCELED"
    listing = run(flink, cluster, "list", "-a")
    assert f"{other.job_id} : flink-cli-cancel (CANCELED)" in listing, listing


def test_flink_cli_without_the_token_is_refused(flink, cluster):
    done = flink.run_cli(["list"], cluster.url, token=None)
    assert done.returncode != 0
    assert "token" in (done.stdout + done.stderr), done.stdout + done.stderr


def test_flinks_cli_with_a_users_token_lists_and_cancels_that_users_jobs_only(flink, cluster):
    """Flink's client sends a user's token as it sends the cluster's: another user's job is one it cannot find."""
    suffix = os.urandom(3).hex()
    token = cluster.client.post("/users", {"name": f"heidi-{suffix}"})["token"]
    theirs = endless_job(cluster, f"not heidi's {suffix}")
    try:
        listing = flink.run_cli(["list"], cluster.url, token)
        assert listing.returncode == 0 and theirs.job_id not in listing.stdout, listing.stdout
        refused = flink.run_cli(["cancel", theirs.job_id], cluster.url, token)
        assert refused.returncode != 0 and f"Job {theirs.job_id} not found" in refused.stdout + refused.stderr
        assert theirs.status() == "RUNNING"
    finally:
        theirs.cancel()
        cluster.client.request("DELETE", f"/users/heidi-{suffix}")
    assert theirs.wait(120) == "CANCELED"
