"""A LocalCluster owned by the Jupyter server, started and stopped from the side panel.

LocalCluster blocks while its processes start (a Spark JVM per TaskManager takes seconds), so it
runs on a worker thread, never on the server's loop. That thread is dedicated and lives as long as the
server: LocalCluster's children are bound to the thread that spawned them (PR_SET_PDEATHSIG fires
when that thread ends), so a pooled thread that retires would take the cluster down with it.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import tempfile
from typing import Any

from runtime.errors import ClusterError
from runtime.cluster import LocalCluster

log = logging.getLogger(__name__)

MAX_TASKMANAGERS = 8
MAX_SLOTS = 16


class LocalClusterError(ClusterError):
    """A start that cannot be done: already running (409), a bad shape (400), or the cluster failed (500)."""

    def __init__(self, message: str, status: int = 500):
        super().__init__(message)
        self.status = status


class LocalClusterManager:
    """Owns at most one LocalCluster; its methods run on the server's loop."""

    def __init__(self, working_root: str | None = None):
        self.working_root = working_root
        self.cluster: LocalCluster | None = None
        self.state = "stopped"  # stopped | starting | running | stopping | failed
        self.error: str | None = None
        self.shape: dict[str, Any] = {}
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="flinkbench-local-cluster")
        self._saved_env: dict[str, str | None] = {}

    def status(self) -> dict:
        cluster = self.cluster
        return {"state": self.state, "error": self.error, **self.shape,
                "url": cluster.url if cluster and self.state == "running" else None,
                "working_dir": cluster.working_dir if cluster else None}

    async def start(self, taskmanagers: int, slots: int, fault_injection: bool) -> LocalCluster:
        if self.state in ("starting", "running", "stopping"):
            raise LocalClusterError(f"a local cluster is already {self.state}; stop it first", 409)
        if not 1 <= taskmanagers <= MAX_TASKMANAGERS or not 1 <= slots <= MAX_SLOTS:
            raise LocalClusterError(f"a local cluster needs 1-{MAX_TASKMANAGERS} TaskManagers with 1-{MAX_SLOTS} "
                                    f"slots each, got {taskmanagers} x {slots}", 400)
        config = {"cluster.fault-injection.enabled": "true" if fault_injection else "false"}
        working_dir = None
        if self.working_root:
            os.makedirs(self.working_root, mode=0o700, exist_ok=True)
            working_dir = tempfile.mkdtemp(prefix="cluster-", dir=self.working_root)
        cluster = LocalCluster(taskmanagers, slots, config, working_dir=working_dir)
        self.cluster, self.state, self.error = cluster, "starting", None
        self.shape = {"taskmanagers": taskmanagers, "slots": slots, "fault_injection": fault_injection}
        try:
            await asyncio.get_running_loop().run_in_executor(self._thread, cluster.__enter__)
        except Exception as err:  # noqa: BLE001 - any start failure is reported to the panel
            self.cluster, self.state, self.error = None, "failed", f"the local cluster did not start: {err}"
            raise LocalClusterError(self.error) from None
        self.state = "running"
        self._export(cluster)
        log.info("Flinkbench local cluster running at %s", cluster.url)
        return cluster

    async def stop(self) -> None:
        cluster = self.cluster
        if cluster is None or self.state == "stopping":
            return
        self.state = "stopping"
        try:
            await asyncio.get_running_loop().run_in_executor(self._thread, cluster.stop)
        finally:
            self._restore_env()
            self.cluster, self.state = None, "stopped"
            log.info("Flinkbench local cluster stopped")

    def shutdown(self) -> None:
        """Stop the cluster from any thread, blocking; for server shutdown."""
        if self.cluster is not None:
            self.cluster.stop()
            self._restore_env()
            self.cluster, self.state = None, "stopped"
        self._thread.shutdown(wait=False)

    # Kernels started after this inherit the server's environment, so `%%flink` cells in notebooks
    # opened later find this cluster through FLINKBENCH_JOBMANAGER_URL like any LocalCluster user.
    def _export(self, cluster: LocalCluster) -> None:
        for key, value in (("FLINKBENCH_JOBMANAGER_URL", cluster.url), ("FLINKBENCH_TOKEN_FILE", cluster.token_file)):
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def _restore_env(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()
