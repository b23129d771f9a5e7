"""Which cluster each notebook's kernel follows, so the panel shows the cluster of the notebook in focus.

Kernels this server starts inherit a records folder (kernel_magics.kernel_registration writes one
record per kernel there: the JobManager it follows, that cluster's token file, whether the kernel
started it, its own pid). Here the server reads the record of a kernel it knows by id and decides what
the panel should show for it (:func:`kernel_cluster`, a pure decision):

=============================================  =========  ==========================================
record                                         shows      why
=============================================  =========  ==========================================
none                                           none       the kernel follows no cluster (yet)
running, kernel alive                          running    forward to its JobManager
running, kernel gone, the kernel started it    stopped    a local cluster ends with its kernel
running, kernel gone, connected elsewhere      none       that cluster may live on, but no one follows it
stopped (``%flink stop``, the kernel's exit)   stopped    with the reason the kernel gave
running without a token file                   none       the server cannot authenticate for it
=============================================  =========  ==========================================

A stopped cluster is never forwarded to: the panel says it stopped instead of retrying a dead port.
Each running kernel cluster gets a :class:`Connection` of its own, so that the event stream relay
follows its leader (HA) as it does for the server's own connection.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from kernel_magics.kernel_registration import RECORDS_ENV
from kernel_magics.server.target import Connection, JobManagerTarget, TargetError
from runtime.process_info import process_alive

SOURCE = "notebook kernel"
NO_CLUSTER = "this notebook's kernel follows no cluster: run '%load_ext kernel_magics' and '%flink local' in it"


@dataclass(frozen=True)
class KernelCluster:
    """What the panel shows for one kernel: ``running`` (with its target), ``stopped`` or ``none``."""
    state: str
    target: JobManagerTarget | None = None
    url: str | None = None
    reason: str = ""

    def describe(self) -> dict:
        public = self.target.public() if self.target else {"url": self.url, "token_file": None, "source": SOURCE,
                                                           "trust_cert": None}
        return {"state": self.state, "reason": self.reason, "configured": self.state == "running", **public}


def kernel_cluster(record: dict | None, alive: Callable[[int], bool]) -> KernelCluster:
    """The decision in the table above, from a kernel's record and whether a pid still runs."""
    if not isinstance(record, dict) or not record.get("url"):
        return KernelCluster("none", reason=NO_CLUSTER)
    url, owned = str(record["url"]), bool(record.get("owned"))
    if record.get("state") == "stopped":
        return KernelCluster("stopped", url=url, reason=str(record.get("reason") or "it stopped"))
    if not alive(int(record.get("pid") or 0)):
        if owned:
            return KernelCluster("stopped", url=url, reason="it stopped with the kernel that started it")
        return KernelCluster("none", reason=NO_CLUSTER)
    if not record.get("token_file"):
        return KernelCluster("none", reason=f"this notebook's kernel follows {url} with a token given inline; the "
                                            "panel needs a token file (%flink connect URL --token-file FILE)")
    try:
        target = JobManagerTarget.make(url, record["token_file"], SOURCE, record.get("trust_cert"))
    except TargetError as err:
        return KernelCluster("none", reason=str(err))
    return KernelCluster("running", target=target, url=target.url)


class KernelClusters:
    """The records folder this server gives its kernels, and a Connection per kernel that follows a cluster."""

    def __init__(self, parent: str | None = None, alive: Callable[[int], bool] = process_alive):
        if parent:
            os.makedirs(parent, mode=0o700, exist_ok=True)
        self.folder = tempfile.mkdtemp(prefix="flinkbench-kernels-", dir=parent)
        self._alive = alive
        self._connections: dict[str, Connection] = {}

    def export(self) -> None:
        """Kernels started from now on inherit the folder (the server starts them with its environment)."""
        os.environ[RECORDS_ENV] = self.folder

    def cluster_of(self, connection_file: str) -> KernelCluster:
        """What the record of the kernel with ``connection_file`` says (the record is named after it)."""
        try:
            with open(os.path.join(self.folder, os.path.basename(connection_file)), encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            record = None
        return kernel_cluster(record, self._alive)

    def connection(self, kernel_id: str, cluster: KernelCluster) -> Connection:
        """The Connection for a running kernel cluster; a new one when the kernel moved to another cluster."""
        if cluster.target is None:
            raise TargetError(cluster.reason)
        known = self._connections.get(kernel_id)
        if known is None or known.default is None or (known.default.url, known.default.token_file) != (
                cluster.target.url, cluster.target.token_file):
            known = self._connections[kernel_id] = Connection(cluster.target)
        return known

    def close(self) -> None:
        if os.environ.get(RECORDS_ENV) == self.folder:
            del os.environ[RECORDS_ENV]
        shutil.rmtree(self.folder, ignore_errors=True)
