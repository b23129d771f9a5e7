"""The savepoint browser and ``--allowNonRestoredState`` against Apache Flink itself, on a keyed job whose v2 drops
one stateful operator (``maxes``; tests.helpers.savepoint_jobs and its PyFlink twin tests/programs/pyflink_counts.py).

On the shared cluster: the savepoint is listed with its job, parallelism and each operator's state and keys; the
compatibility check finds that v2 needs --allowNonRestoredState to drop ``maxes``; ``flinkbench run -s`` is
refused without the flag and resumes with it, the remaining state exact (every count written once across the
two runs). On a real Flink cluster, Flink's own CLI does the same with the same job: ``flink run -s`` refuses,
naming the operator ``maxes`` (by the id its uid hashes to), and ``--allowNonRestoredState`` resumes it with
the remaining counts exact.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.jobgraph import job_graph_json
from tests.helpers import savepoint_jobs
from tests.helpers.clusters import wait_until
from tests.helpers.flink_cluster import flink_cluster
from tests.helpers.pyflink import pyflink

PROGRAM = Path(savepoint_jobs.__file__)
# run by Flink's Python, never imported here; in a folder of its own (beside tests/helpers/pyflink.py, Flink's
# Python would import that module as its pyflink package)
PYFLINK_PROGRAM = PROGRAM.parents[1] / "programs" / "pyflink_counts.py"
ROWS = 12_000
FLINK_ROWS = 3_000  # v1 holds each 10 ms (30 s of input) and is stopped part of the way; v2 reads the rest unheld


@pytest.fixture(scope="module")
def stopped_v1(cluster, tmp_path_factory) -> dict:
    """v1 run part of the way, then stopped with a savepoint: its job id, savepoint and output folder."""
    folder = tmp_path_factory.mktemp("savepoint-browser")
    job_id, savepoint = savepoint_jobs.stopped_with_savepoint(cluster, "counts v1", ROWS, str(folder / "out"), 500,
                                                              str(folder / "savepoints"), checkpoints=2)
    return {"job": job_id, "savepoint": savepoint, "out": folder / "out", "folder": folder}


def v2_fit(cluster, savepoint: str, allow: bool = False) -> dict:
    graph = job_graph_json(savepoint_jobs.build(StreamExecutionEnvironment(), "v2", ROWS, "/unused").job_graph("v2"))
    return cluster.client.post("/savepoints/compatibility",
                               {"path": savepoint, "job_graph": graph, "allowNonRestoredState": allow})


def run_v2(cluster, savepoint: str, out: Path, *flags: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLINKBENCH_")}
    env["PYTHONPATH"] = str(PROGRAM.parents[2])
    return subprocess.run([sys.executable, "-m", "runtime.cli", "run", "-m", cluster.url, "--token-file",
                           cluster.token_file, "-s", savepoint, *flags, str(PROGRAM), "v2", str(out), str(ROWS)],
                          env=env, capture_output=True, text=True, timeout=600)


def test_a_changed_job_needs_allow_non_restored_state_and_resumes_exact_with_it(cluster, stopped_v1):
    savepoint, out = stopped_v1["savepoint"], stopped_v1["out"]
    listed = cluster.client.get(f"/savepoints?dir={stopped_v1['folder'] / 'savepoints'}")
    found = next(s for s in listed["savepoints"] if s["path"] == savepoint)
    assert (found["kind"], found["job-id"], found["job-name"], found["parallelism"]) == \
        ("savepoint", stopped_v1["job"], "counts v1", 2)
    assert {s["operator"] for s in found["state"]} == {"src", "counts", "maxes", "out"}
    details = cluster.client.get(f"/savepoints/details?path={savepoint}")
    keyed = {s["operator"]: s for s in details["state"] if "keyed state" in s["kinds"]}
    assert keyed["counts"]["keys"] == keyed["maxes"]["keys"] == savepoint_jobs.USERS

    fit = v2_fit(cluster, savepoint)
    assert (fit["compatible"], fit["needsAllowNonRestoredState"], fit["dropped"]) == (False, True, ["maxes"])
    assert set(fit["matched"]) == {"src", "counts", "out"} and "--allowNonRestoredState" in fit["problems"][0]
    allowed = v2_fit(cluster, savepoint, allow=True)
    assert allowed["compatible"] and allowed["dropped"] == ["maxes"]

    refused = run_v2(cluster, savepoint, out)
    assert refused.returncode != 0 and "Cannot map checkpoint/savepoint state for operator maxes" in refused.stderr, \
        refused.stdout + refused.stderr
    resumed = run_v2(cluster, savepoint, out, "--allowNonRestoredState")
    assert resumed.returncode == 0 and "FINISHED" in resumed.stdout, resumed.stdout + resumed.stderr
    written = pq.read_table(str(out)).to_pylist()
    expected = {(u, n) for u in range(savepoint_jobs.USERS) for n in range(1, ROWS // savepoint_jobs.USERS + 1)}
    assert len(written) == len(expected) and {(r["user"], r["n"]) for r in written} == expected, \
        "every user's count written once across the savepoint"


def flink_run(flink, cluster, version: str, *options: str) -> subprocess.CompletedProcess:
    """``flink run -d OPTIONS -py pyflink_counts.py VERSION ROWS`` with Flink's own CLI."""
    return flink.run_cli(["run", "-d", *options, "-py", str(PYFLINK_PROGRAM), "-pyexec", str(flink.python), version,
                          str(FLINK_ROWS)], cluster.rest, timeout=300)


def flink_job(done: subprocess.CompletedProcess) -> str:
    match = re.search(r"JobID ([0-9a-f]{32})", done.stdout)
    assert done.returncode == 0 and match, done.stdout + done.stderr
    return match.group(1)


@pytest.mark.timeout(900)
def test_flinks_own_cli_agrees_refusing_without_the_flag_and_resuming_exact_with_it(cluster, stopped_v1, tmp_path):
    flink = pyflink()
    with flink_cluster(flink, tmp_path / "flink") as real:
        v1 = flink_job(flink_run(flink, real, "v1"))
        wait_until(lambda: real.get(f"/jobs/{v1}/checkpoints")["counts"]["completed"] >= 1, 240, "a checkpoint of v1")
        stopped = flink.run_cli(["stop", "--savepointPath", f"file://{tmp_path}/flink-sp", v1], real.rest, timeout=300)
        assert "Savepoint completed. Path:" in stopped.stdout, stopped.stdout + stopped.stderr
        savepoint = stopped.stdout.split("Savepoint completed. Path:", 1)[1].split()[0]
        maxes = real.get(f"/jobs/{v1}")["vertices"][-1]  # headed by the operator of uid 'maxes' (its id: the uid's hash)

        refused = flink_run(flink, real, "v2", "-s", savepoint)
        assert refused.returncode != 0
        assert f"Cannot map checkpoint/savepoint state for operator {maxes['id']}" in refused.stdout + refused.stderr
        assert v2_fit(cluster, stopped_v1["savepoint"])["dropped"] == ["maxes"], "the browser names the same operator"

        v2 = flink_job(flink_run(flink, real, "v2", "-s", savepoint, "--allowNonRestoredState"))
        wait_until(lambda: real.get(f"/jobs/{v2}")["state"] == "FINISHED", 300, "v2 resumed to the end of its input")
        printed = re.findall(r"^\((\d+),(\d+)\)$", real.stdout.read_text(), re.M)
        expected = {(k, n) for k in range(10) for n in range(1, FLINK_ROWS // 10 + 1)}
        assert len(printed) == len(expected) and {(int(k), int(n)) for k, n in printed} == expected, \
            "Flink's remaining state exact: every count printed once across the savepoint"
