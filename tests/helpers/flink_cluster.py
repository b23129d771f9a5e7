"""A real Apache Flink standalone cluster (one JobManager, one TaskManager) from the apache-flink wheel, for
tests that check Flinkbench against what Flink itself does. Its JVMs run in the foreground as children of the
test, on free loopback ports, with a configuration, logs and standard output in the test's folder; the
TaskManager runs Python functions with the apache-flink environment's interpreter."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port
from tests.helpers.pyflink import PyFlink

START_TIMEOUT_S = 240


@dataclass(frozen=True)
class FlinkCluster:
    rest: str  # host:port, what `flink -m` takes
    stdout: Path  # the TaskManager's standard output (print sinks write there)

    @property
    def url(self) -> str:
        return f"http://{self.rest}"

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(self.url + path, timeout=30) as reply:
            return json.loads(reply.read())


def _start(flink: PyFlink, script: str, args: list[str], folder: Path, name: str) -> subprocess.Popen:
    env = flink.env(FLINK_CONF_DIR=str(folder / "conf"), FLINK_LOG_DIR=str(folder / "log"))
    with open(folder / f"{name}.out", "wb") as out:
        return subprocess.Popen([str(flink.flink_home / "bin" / script), "start-foreground", *args], env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


@contextlib.contextmanager
def flink_cluster(flink: PyFlink, folder: Path):
    """A standalone Flink cluster with two slots; stopped (its process groups killed) on exit."""
    shutil.copytree(flink.flink_home / "conf", folder / "conf")
    (folder / "log").mkdir()
    rest, rpc = free_port(), free_port()
    common = ["-D", f"jobmanager.rpc.port={rpc}", "-D", "jobmanager.rpc.address=localhost"]
    processes = [
        _start(flink, "jobmanager.sh", [*common, "-D", f"rest.port={rest}", "-D", "jobmanager.memory.process.size=800m"],
               folder, "jobmanager"),
        _start(flink, "taskmanager.sh", [*common, "-D", "taskmanager.memory.process.size=1200m", "-D",
                                         "taskmanager.numberOfTaskSlots=2", "-D", f"python.executable={flink.python}"],
               folder, "taskmanager")]
    cluster = FlinkCluster(f"localhost:{rest}", folder / "taskmanager.out")
    try:
        wait_until(lambda: _registered(cluster), START_TIMEOUT_S, "Flink's TaskManager registered", interval=1)
        yield cluster
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _registered(cluster: FlinkCluster) -> bool:
    try:
        return cluster.get("/overview")["taskmanagers"] >= 1
    except OSError:
        return False
