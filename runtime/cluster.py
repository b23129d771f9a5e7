"""LocalCluster: a JobManager and TaskManagers as child processes of this one, for users and tests.

    with LocalCluster(taskmanagers=2, slots=2) as cluster:
        env = cluster.environment()
        ...

``LocalCluster(jobmanagers=N)`` with N > 1 starts N JobManagers with file high availability under the
working directory (unless the config chooses another ``high-availability.type``): one leads, the
others stand by; :meth:`LocalCluster.kill_jobmanager` kills the leader to watch a standby take over.

Every child runs in its own process group (so its Spark JVM goes with it) and is asked to die with
this process; :meth:`LocalCluster.stop` ends them all, also when the block exits on an error.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

from runtime import tls
from runtime.child_process import ChildProcess, dynamic_properties, read_ready_file, spawn_runtime
from runtime.client import ClusterError, RestClient
from runtime.config import Configuration
from runtime.fileio import tidy_working_dir
from runtime.java import check_java
from runtime.security import ensure_token_file

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 15.0
CLEAN_EXITS = (0, -signal.SIGTERM)  # a child that ended by itself with either did not fail


class LocalCluster:
    """A real JobManager and TaskManagers as child processes on this host, for notebooks, tests and the demo."""
    def __init__(self, taskmanagers: int = 2, slots: int = 2, config: dict[str, Any] | None = None,
                 working_dir: str | None = None, python: str | None = None, jobmanagers: int = 1):
        if jobmanagers < 1:
            raise ValueError(f"jobmanagers must be at least 1, got {jobmanagers}")
        self.num_taskmanagers = taskmanagers
        self.slots = slots
        self.num_jobmanagers = jobmanagers
        self.config = {k: str(v) for k, v in (config or {}).items()}
        self._own_dir = working_dir is None
        self.working_dir = working_dir or tempfile.mkdtemp(prefix="flinkbench-cluster-")
        if jobmanagers > 1 and self.config.get("high-availability.type", "none") == "none":
            self.config["high-availability.type"] = "file"
        if self.config.get("high-availability.type", "none") != "none":  # job data for a successor leader
            self.config.setdefault("high-availability.storageDir", os.path.join(self.working_dir, "ha"))
        self.python = python or sys.executable
        self.jobmanager: ChildProcess | None = None  # the first one started
        self.jobmanager_processes: list[ChildProcess] = []
        self.taskmanagers: list[ChildProcess] = []
        self.url: str | None = None  # the first JobManager's; the client follows whoever leads
        self.urls: list[str] = []
        self.token_file: str | None = None
        tls_keys = {k: v for k, v in self.config.items() if k.startswith("security.ssl.")}
        rest_tls = tls.tls_files(Configuration(tls_keys), tls.REST)  # a bad TLS key stops here, naming it
        self.trust_cert: str | None = (rest_tls.trust_cert or None) if rest_tls else None
        self._tm_counter = 0
        self._killed: set[int] = set()  # pids of children killed on purpose (fault injection)
        self.kept: str | None = None  # what stop() kept of the working directory, and why

    # -- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> LocalCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> LocalCluster:
        """The JobManagers, then the TaskManagers; the TaskManagers start beside the first JobManager (their
        Spark JVMs take longest to start) and learn its URL from its ready file."""
        if self.num_taskmanagers and not self.config.get("spark.remote"):
            check_java()  # TaskManagers run Spark on a local JVM: say so in one line before starting anything
        self.start_jobmanager(wait=False)
        for _ in range(self.num_taskmanagers):
            self.add_taskmanager(wait=False)
        self._await_jobmanager(self.jobmanager_processes[0])
        for _ in range(1, self.num_jobmanagers):
            self.start_jobmanager()
        self.wait_for_taskmanagers(self.num_taskmanagers)
        return self

    def start_jobmanager(self, wait: bool = True) -> ChildProcess:
        """Start one more JobManager (the first leads; with HA, later ones stand by); ``wait=False`` returns
        at once (the first JobManager's address is known after :meth:`_await_jobmanager`)."""
        name = "jobmanager" if not self.jobmanager_processes else f"jobmanager-{len(self.jobmanager_processes) + 1}"
        ready = os.path.join(self.working_dir, f"{name}.ready")
        if os.path.exists(ready):
            os.remove(ready)
        if self.token_file is None:  # written now, so TaskManagers can start before the JobManager is up
            self.token_file = self.config.get("security.token-file") or os.path.join(self.working_dir, "token")
            ensure_token_file(self.token_file)
        conf = {"rest.port": "0", "cluster.working-dir": self.working_dir,
                "taskmanager.numberOfTaskSlots": str(self.slots), **self.config}  # the slots of TaskManagers it starts
        child = self._spawn("jobmanager", name, ["jobmanager", "--ready-file", ready, *self._dynamic(conf)])
        child.ready_file = ready
        self.jobmanager_processes.append(child)
        self.jobmanager = self.jobmanager or child
        if wait:
            self._await_jobmanager(child)
        return child

    def _await_jobmanager(self, child: ChildProcess) -> None:
        """Until ``child`` wrote its ready file (and, as the first of several, leads): its URL is known."""
        info = self._await_file(child.ready_file, child)
        self.urls.append(info["url"])
        self.url = self.url or info["url"]
        if len(self.jobmanager_processes) == 1 and self.num_jobmanagers > 1:
            self._wait_for(lambda: self.leader_url() == info["url"], child, f"{child.name} to lead")

    def add_taskmanager(self, slots: int | None = None, wait: bool = True, host: str | None = None,
                        config: dict[str, Any] | None = None) -> ChildProcess:
        """Start one more TaskManager; ``host`` is the address it binds and advertises (``taskmanager.host``),
        ``config`` keys of its own on top of the cluster's (e.g. ``spark.*`` for its Spark session)."""
        if not self.jobmanager_processes:
            raise ClusterError("start the JobManager first")
        self._tm_counter += 1
        conf = {"cluster.working-dir": self.working_dir, **self.config, **({"taskmanager.host": host} if host else {}),
                **{k: str(v) for k, v in (config or {}).items()}}
        where = ["--jobmanager", self.url] if self.url else ["--jobmanager-ready-file", self.jobmanager.ready_file]
        child = self._spawn("taskmanager", f"taskmanager-{self._tm_counter}", [
            "taskmanager", *where, "--token-file", str(self.token_file),
            "--slots", str(slots or self.slots), *self._dynamic(conf)])
        self.taskmanagers.append(child)
        if wait:
            self._wait_for(lambda: any(tm["pid"] == child.pid for tm in self._registered()), child,
                           f"{child.name} to register")
        return child

    def wait_for_taskmanagers(self, count: int, timeout: float = START_TIMEOUT_S) -> None:
        self._wait_for(lambda: len(self._registered()) >= count, self.jobmanager,
                       f"{count} TaskManagers to register", timeout)

    def stop(self) -> str | None:
        """Stop every child, the JobManagers first: they cancel their jobs and end the TaskManagers their
        provider started before the other TaskManagers go, so that nobody sees a TaskManager leave a running
        job. SIGTERM, then SIGKILL for any still alive after a grace period.

        A working directory this cluster made (logs, token, default checkpoints) is removed when every child
        stopped cleanly, savepoints taken into it excepted; otherwise it is kept for its logs. Returns what
        was kept and why (also in ``self.kept``), None when nothing was."""
        problems = self._stop_all(self.jobmanager_processes) + self._stop_all(self.taskmanagers)
        self.kept = tidy_working_dir(self.working_dir, self._savepoints_dir(), problems) if self._own_dir else None
        self._own_dir = False  # stopped: a second stop() has nothing left to tidy
        return self.kept

    def _stop_all(self, children: list[ChildProcess]) -> list[str]:
        """SIGTERM ``children`` together, wait, SIGKILL the ones still alive; what went wrong, one line each."""
        problems = [f"{c.name} had exited with code {c.popen.returncode}" for c in children
                    if not c.alive() and c.pid not in self._killed and c.popen.returncode not in CLEAN_EXITS]
        stopping = [c for c in children if c.alive()]
        for child in stopping:
            child.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for child in stopping:
            try:
                child.popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                problems.append(f"{child.name} did not stop within {STOP_TIMEOUT_S:g} s")
            child.signal_group(signal.SIGKILL)  # its Spark JVM too, should it outlive it
            try:
                child.popen.wait(5)
            except subprocess.TimeoutExpired:
                pass
        return problems

    def _savepoints_dir(self) -> str:
        """Where savepoints without a target go: state.savepoints.dir, else <state.checkpoints.dir>/savepoints."""
        checkpoints = self.config.get("state.checkpoints.dir") or os.path.join(self.working_dir, "checkpoints")
        return self.config.get("state.savepoints.dir") or os.path.join(checkpoints, "savepoints")

    # -- fault injection ----------------------------------------------------------------------
    def taskmanager_by_id(self, tm_id: str) -> ChildProcess:
        pid = next((tm["pid"] for tm in self._registered() if tm["id"] == tm_id), None)
        for child in self.taskmanagers:
            if child.pid == pid:
                return child
        raise KeyError(f"no live TaskManager {tm_id} in this cluster")

    def kill_taskmanager(self, which: int | str = 0) -> ChildProcess:
        child = self.taskmanager_by_id(which) if isinstance(which, str) else [c for c in self.taskmanagers if c.alive()][which]
        self._killed.add(child.pid)  # on purpose: not a failure that keeps the working directory
        child.kill()
        return child

    def leader_url(self) -> str | None:
        """The leading JobManager's address as the JobManagers report it (None while none leads)."""
        leader = self.client.get("/jobmanagers").get("leader")
        return leader["url"].rstrip("/") if leader else None

    def jobmanager_at(self, url: str) -> ChildProcess:
        for child, address in zip(self.jobmanager_processes, self.urls):
            if address == url.rstrip("/"):
                return child
        raise KeyError(f"no JobManager of this cluster listens at {url}")

    def kill_jobmanager(self, which: str | None = None) -> ChildProcess:
        """SIGKILL a JobManager (its address; the leader by default), as a crash would end it."""
        child = self.jobmanager_at(which or self.leader_url() or "")
        self._killed.add(child.pid)
        child.kill()
        return child

    # -- clients ------------------------------------------------------------------------------
    @property
    def client(self) -> RestClient:
        return RestClient(self.urls, token_file=self.token_file, trust_cert=self.trust_cert)

    @property
    def token(self) -> str:
        return self.client.token

    def environment(self, **config):
        from runtime.api.environment import StreamExecutionEnvironment

        return StreamExecutionEnvironment(self.client, config)

    def export_environment(self) -> None:
        """Point StreamExecutionEnvironment() in this process (and its children) at this cluster."""
        os.environ["FLINKBENCH_JOBMANAGER_URL"] = ",".join(self.urls)  # several: the client follows the leader
        os.environ["FLINKBENCH_TOKEN_FILE"] = self.token_file
        if self.trust_cert:
            os.environ[tls.TRUST_CERT_ENV] = self.trust_cert

    # -- helpers ------------------------------------------------------------------------------
    def _spawn(self, role: str, name: str, args: list[str]) -> ChildProcess:
        return spawn_runtime(role, name, args, self.working_dir, self.python)

    @staticmethod
    def _dynamic(conf: dict[str, str]) -> list[str]:
        return dynamic_properties(conf)

    def _registered(self) -> list[dict]:
        return [tm for tm in self.client.get("/taskmanagers")["taskmanagers"] if tm["state"] == "REGISTERED"]

    def _await_file(self, path: str, child: ChildProcess) -> dict:
        holder: dict = {}

        def ready() -> bool:
            holder.update(read_ready_file(path) or {})
            return bool(holder)

        self._wait_for(ready, child, f"{child.name} to start")
        return holder

    @staticmethod
    def _wait_for(condition, child: ChildProcess | None, what: str, timeout: float = START_TIMEOUT_S) -> None:
        """Poll a cross-process fact until it holds; fail fast with the child's log if the child died."""
        deadline = time.monotonic() + timeout
        delay = 0.05
        while True:
            try:
                if condition():
                    return
            except ClusterError:
                pass
            if child is not None and not child.alive():
                raise ClusterError(f"{child.name} exited with code {child.popen.returncode} while waiting for "
                                   f"{what}; its log ends:\n{child.log_tail()}")
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out after {timeout:g} s waiting for {what}")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)
