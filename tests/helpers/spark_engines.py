"""Real Spark engines for tests, from the jars the pyspark wheel ships: a standalone cluster (one master,
workers) and a Spark Connect server, each on 127.0.0.1 with free ports, killed with everything they
started (executors, Python workers) when the block ends.

Their Python workers run this machine's interpreter but must not need flinkbench (a real cluster does not
have it installed): a ``runtime`` package that refuses to import comes first on their PYTHONPATH, so a
plan that referred to flinkbench's code instead of carrying it fails the test.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from dataclasses import dataclass

import pyspark

from runtime.child_process import die_with_parent
from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port

SPARK_HOME = os.path.dirname(pyspark.__file__)


NOT_INSTALLED = 'raise ImportError("flinkbench is not installed on this Spark engine")\n'


def _engine_env(directory: str) -> dict[str, str]:
    guard = os.path.join(directory, "no-flinkbench")
    os.makedirs(os.path.join(guard, "runtime"), exist_ok=True)
    with open(os.path.join(guard, "runtime", "__init__.py"), "w", encoding="utf-8") as fh:
        fh.write(NOT_INSTALLED)
    env = dict(os.environ)
    env.update(SPARK_HOME=SPARK_HOME, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable, PYTHONPATH=guard)
    return env


class _Engine:
    """The processes of one engine, each in its own process group so that its children go with it."""

    def __init__(self, directory):
        self.directory = str(directory)
        os.makedirs(self.directory, exist_ok=True)
        self.procs: list[tuple[subprocess.Popen, str]] = []

    def spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log_path = os.path.join(self.directory, f"{name}.log")
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=_engine_env(self.directory), cwd=self.directory, preexec_fn=die_with_parent)
        self.procs.append((proc, log_path))
        return proc

    def check_alive(self) -> None:
        for proc, log_path in self.procs:
            if proc.poll() is not None:
                with open(log_path, encoding="utf-8", errors="replace") as fh:
                    raise AssertionError(f"{log_path} exited with {proc.returncode}:\n{fh.read()[-3000:]}")

    def stop(self) -> None:
        for proc, _ in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@dataclass
class StandaloneCluster:
    url: str  # spark://127.0.0.1:port
    ui_port: int

    def state(self) -> dict:
        """The master's view (its web UI's JSON): workers, cores used, running applications."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as answer:
                return json.load(answer)
        except OSError:
            return {}


@contextlib.contextmanager
def spark_standalone(directory, workers: int = 2, cores: int = 1, memory: str = "1g"):
    """Yield a :class:`StandaloneCluster`: a master with ``workers`` registered workers of ``cores`` cores each."""
    engine = _Engine(str(directory))
    spark_class = os.path.join(SPARK_HOME, "bin", "spark-class")
    port, ui_port = free_port(), free_port()
    try:
        engine.spawn("master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                "--port", str(port), "--webui-port", str(ui_port)])
        cluster = StandaloneCluster(f"spark://127.0.0.1:{port}", ui_port)
        url = cluster.url
        for i in range(workers):
            work_dir = os.path.join(str(directory), f"worker-{i}")
            os.makedirs(work_dir, exist_ok=True)
            engine.spawn(f"worker-{i}", [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                         "--webui-port", str(free_port()), "--cores", str(cores), "--memory", memory,
                                         "--work-dir", work_dir, url])

        def all_alive():
            engine.check_alive()
            return len([w for w in cluster.state().get("workers", []) if w.get("state") == "ALIVE"]) == workers

        wait_until(all_alive, 120, f"{workers} Spark workers to register with {url}", interval=0.5)
        yield cluster
    finally:
        engine.stop()


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def spark_connect_server(directory, master: str = "local[2]", memory: str = "1g"):
    """Yield the ``sc://`` address of a Spark Connect server (its own driver on ``master``)."""
    engine = _Engine(str(directory))
    port = free_port()
    try:
        engine.spawn("connect-server", [
            os.path.join(SPARK_HOME, "bin", "spark-submit"), "--class",
            "org.apache.spark.sql.connect.service.SparkConnectServer", "--name", "Spark Connect server",
            "--master", master, "--driver-memory", memory,
            "--conf", f"spark.connect.grpc.binding.port={port}",
            "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.driver.host=127.0.0.1",
            "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.session.timeZone=UTC",
            "--conf", "spark.sql.shuffle.partitions=2", "spark-internal"])

        def listening():
            engine.check_alive()
            return _answers(port)

        wait_until(listening, 120, "the Spark Connect server to listen", interval=0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        engine.stop()


@contextlib.contextmanager
def silent_spark_connect():
    """A Spark Connect address that takes connections and never answers: a TaskManager given it as
    ``spark.remote`` stays with its Spark session starting for as long as the block lasts."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):  # the listener closed
            while True:
                held.append(listener.accept()[0])

    threading.Thread(target=accept, name="silent-spark-connect", daemon=True).start()
    try:
        yield f"sc://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        for conn in held:
            conn.close()
