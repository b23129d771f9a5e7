"""A kernel's local cluster: killing its JobManager is reported as a lost connection, and the kernel's
shutdown ends every process the cluster started, without '%flink stop'."""
from __future__ import annotations

import psutil
import pytest

from tests.helpers.clusters import wait_until
from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of

pytestmark = pytest.mark.slow


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_killed_jobmanager_is_reported_and_kernel_exit_stops_the_cluster(tmp_path):
    nb = execute(code_notebook(
        "%load_ext kernel_magics\n%flink local --taskmanagers 1 --slots 1 -D spark.driver.memory=512m",
        "from kernel_magics import current_session\n"
        "from tests.helpers.clusters import wait_until\n"
        "from tests.helpers.live_checks import report\n"
        "session = current_session()\n"
        "report(pids=[c.pid for c in [session.cluster.jobmanager, *session.cluster.taskmanagers]])",
        "%flink kill jobmanager --show-api",
        "wait_until(lambda: session.model.connection['state'] == 'lost', 30, 'the lost connection')\n"
        "report(connection=session.model.connection['message'],\n"
        "       taskmanager_alive=[c.alive() for c in session.cluster.taskmanagers])",
        "%flink status",
    ), timeout=120, allow_errors=True, save_to=tmp_path / "lifecycle.ipynb")
    started, pids_cell, killed, lost, status = nb.cells
    assert error_of(started) is None and error_of(pids_cell) is None and error_of(lost) is None

    pids = json_lines(pids_cell)["pids"]
    assert len(pids) == 2
    assert "REST: POST /jobmanager/kill" in text_of(killed) and "killed the leading JobManager" in text_of(killed)
    assert "lost the connection to the JobManager" in json_lines(lost)["connection"]
    assert json_lines(lost)["taskmanager_alive"] == [True], "the TaskManager outlives its JobManager..."
    assert error_of(status).ename == "FlinkError"
    assert "cannot reach the JobManager" in text_of(status) and "connection to the cluster is lost" in text_of(status)

    wait_until(lambda: all(gone(pid) for pid in pids), 60, "...but not the kernel that started it")
