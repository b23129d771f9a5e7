"""The views' event stream says when the JobManager is lost, reconnects when one is back at its
address, and stops on a refused token (real JobManager processes, killed with SIGKILL)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from runtime.child_process import die_with_parent
from runtime.security import new_token, write_token_file
from runtime.views.model import ClusterModel
from runtime.views.stream import EventStream
from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port


class JobManagerProcess:
    """A bare JobManager (no TaskManagers) on a fixed port and token file, so a second can replace it."""

    def __init__(self, workdir, port: int, token_file: str):
        self.ready = workdir / f"ready-{port}-{id(self)}.json"
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "runtime.cli", "jobmanager", "--ready-file", str(self.ready),
             "-D", f"rest.port={port}", "-D", f"security.token-file={token_file}",
             "-D", f"cluster.working-dir={workdir}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
        wait_until(lambda: self.ready.exists() or self.popen.poll() is not None, 60, "JobManager ready")
        assert self.popen.poll() is None, "the JobManager exited at start"
        self.pid = json.loads(self.ready.read_text())["pid"]

    def kill(self) -> None:
        self.popen.kill()
        self.popen.wait(10)


@pytest.fixture
def jobmanagers(tmp_path):
    started = []
    token_file = str(tmp_path / "token")
    write_token_file(token_file, new_token())
    port = free_port()

    def start():
        jm = JobManagerProcess(tmp_path, port, token_file)
        started.append(jm)
        return jm

    start.url = f"http://127.0.0.1:{port}"
    start.token = open(token_file).read().strip()
    yield start
    for jm in started:
        if jm.popen.poll() is None:
            jm.kill()


def test_a_lost_jobmanager_is_reported_and_its_successor_reconnected(jobmanagers):
    first = jobmanagers()
    model = ClusterModel()
    stream = EventStream(model, jobmanagers.url, jobmanagers.token).start()
    try:
        assert stream.wait_connected(30)
        assert model.connection["state"] == "connected"
        assert [jm["pid"] for jm in model.jobmanagers] == [first.pid]

        first.kill()
        wait_until(lambda: model.connection["state"] == "lost", 30, "the model to say the connection is lost")
        assert "lost the connection to the JobManager" in model.connection["message"]
        assert "reconnecting" in model.connection["message"]

        second = jobmanagers()
        wait_until(lambda: model.connection["state"] == "connected", 60, "the stream to reconnect")
        assert [jm["pid"] for jm in model.jobmanagers] == [second.pid], "a fresh snapshot from the new JobManager"
    finally:
        stream.close()


def test_a_refused_token_is_reported_and_not_retried(jobmanagers):
    jobmanagers()
    model = ClusterModel()
    stream = EventStream(model, jobmanagers.url, "w" * 43).start()
    try:
        wait_until(lambda: model.connection["state"] == "refused", 30, "the token to be refused")
        assert "refused the cluster token" in model.connection["message"]
        stream._thread.join(5)
        assert not stream._thread.is_alive(), "no retries with a token the cluster refused"
    finally:
        stream.close()
