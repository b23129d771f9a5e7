"""The flinkbench command against real processes: a detached local cluster started from a config file
and stopped again, and Flink's job verbs (run attached and detached, list, checkpoint, savepoint and its
disposal, cancel, stop --drain) driven against a live cluster."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.client import RestClient
from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path) -> Path:
    """A HOME of its own: `cluster start` records its cluster under ~/.flinkbench."""
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def flinkbench(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLINKBENCH_")}
    env.update(HOME=str(home), PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "runtime.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=home)


def recorded(home: Path) -> dict | None:
    path = home / ".flinkbench" / "current-cluster.json"
    return json.loads(path.read_text()) if path.exists() else None


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_cluster_start_detached_honours_its_conf_file_and_cluster_stop_ends_it(home, tmp_path):
    port = free_port()
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text(f"rest.port: {port}\nheartbeat:\n  timeout: 7 s\n")
    started = flinkbench(home, "cluster", "start", "--detach", "--taskmanagers", "0", "--conf", str(conf))
    assert started.returncode == 0, started.stderr
    assert f"cluster running: JobManager http://127.0.0.1:{port}," in started.stdout
    info = recorded(home)
    try:
        config = RestClient(info["url"], token_file=info["token_file"]).get("/jobmanager/config")
        assert {"key": "heartbeat.timeout", "value": "7 s"} in config
        again = flinkbench(home, "cluster", "start", "--detach", "--taskmanagers", "0")
        assert again.returncode == 2 and f"already running at http://127.0.0.1:{port}" in again.stderr
    finally:
        stopped = flinkbench(home, "cluster", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not alive(info["pid"]) and recorded(home) is None
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    nothing = flinkbench(home, "cluster", "stop")
    assert nothing.returncode == 2 and "no cluster to stop" in nothing.stderr


BOUNDED = """
from runtime.api.environment import StreamExecutionEnvironment
from runtime.api.functions import col

env = StreamExecutionEnvironment()
env.datagen("seq BIGINT", number_of_rows=2_000, fields={"seq": {"kind": "sequence"}}).filter(col("seq") % 2 == 0).collect()
env.execute("bounded evens")
"""

UNBOUNDED = """
import sys
from runtime.api.environment import StreamExecutionEnvironment

env = StreamExecutionEnvironment()
env.datagen("seq BIGINT", rows_per_second=500, fields={"seq": {"kind": "sequence"}}).blackhole()
env.execute(sys.argv[1])
"""


def submitted_id(out: str) -> str:
    match = re.search(r"Job has been submitted with JobID ([0-9a-f]{32})", out)
    assert match, out
    return match.group(1)


def test_flink_verbs_against_a_live_cluster(home, tmp_path):
    (tmp_path / "bounded.py").write_text(BOUNDED)
    (tmp_path / "unbounded.py").write_text(UNBOUNDED)
    started = flinkbench(home, "cluster", "start", "--detach", "--taskmanagers", "1", "--slots", "2")
    assert started.returncode == 0, started.stderr
    info = recorded(home)
    rest = RestClient(info["url"], token_file=info["token_file"])
    target = ["-m", info["url"].removeprefix("http://"), "--token-file", info["token_file"]]
    try:
        attached = flinkbench(home, "run", *target, "-p", "2", str(tmp_path / "bounded.py"))
        assert attached.returncode == 0, attached.stderr
        bounded = submitted_id(attached.stdout)
        assert re.search(rf"Job {bounded} \(bounded evens\) FINISHED after", attached.stdout)
        assert {v["parallelism"] for v in rest.get(f"/jobs/{bounded}")["vertices"]} == {2}

        detached = flinkbench(home, "run", "--detached", "-D", "execution.checkpointing.interval=1 s",
                              str(tmp_path / "unbounded.py"), "endless")
        assert detached.returncode == 0, detached.stderr
        endless = submitted_id(detached.stdout)
        assert rest.get(f"/jobs/{endless}/checkpoints/config")["interval"] == 1000
        wait_until(lambda: rest.get(f"/jobs/{endless}")["state"] == "RUNNING", 120, "the detached job to run")

        running = flinkbench(home, "list", "-r").stdout  # found through the recorded cluster, no flags
        assert f": {endless} : endless (RUNNING)" in running and bounded not in running
        every = flinkbench(home, "list", "-a", *target).stdout
        assert f": {bounded} : bounded evens (FINISHED)" in every and "Terminated Jobs" in every

        manual = flinkbench(home, "checkpoint", *target, endless)
        assert manual.returncode == 0, manual.stderr
        checkpoint_id = int(re.search(rf"Checkpoint (\d+) for job {endless} completed\.", manual.stdout).group(1))
        history = rest.get(f"/jobs/{endless}/checkpoints")["history"]
        assert any(c["id"] == checkpoint_id and c["status"] == "COMPLETED" for c in history)

        taken = flinkbench(home, "savepoint", *target, endless, str(tmp_path / "savepoints"))
        assert taken.returncode == 0 and f"savepoint of {endless} completed: file://" in taken.stdout, taken.stderr
        location = taken.stdout.split("completed: ")[1].split()[0]
        assert Path(location.removeprefix("file://"), "_metadata").exists()
        disposed = flinkbench(home, "savepoint", *target, "--dispose", location)
        assert disposed.returncode == 0 and "disposed" in disposed.stdout, disposed.stderr
        assert not Path(location.removeprefix("file://")).exists()

        doomed = submitted_id(flinkbench(home, "run", *target, "-d", str(tmp_path / "unbounded.py"), "doomed").stdout)
        wait_until(lambda: rest.get(f"/jobs/{doomed}")["state"] == "RUNNING", 120, "the second detached job to run")
        cancelled = flinkbench(home, "cancel", *target, doomed)
        assert cancelled.returncode == 0 and f"Cancelled job {doomed}." in cancelled.stdout
        wait_until(lambda: rest.get(f"/jobs/{doomed}")["state"] == "CANCELED", 60, "the job to be cancelled")

        drained = flinkbench(home, "stop", *target, "--drain", "-p", str(tmp_path / "final"), endless)
        assert drained.returncode == 0 and f"Job {endless} stopped after draining." in drained.stdout, drained.stderr
        wait_until(lambda: rest.get(f"/jobs/{endless}")["state"] == "FINISHED", 60, "the drained job to finish")
    finally:
        stopped = flinkbench(home, "cluster", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not alive(info["pid"])
