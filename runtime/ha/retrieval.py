"""Finding the leading JobManager from outside the cluster, through its HA services (Flink's leader
retrieval): clients that know the HA configuration rather than, or besides, a JobManager's address.

    retriever = LeaderRetrieval({"high-availability.type": "zookeeper",
                                 "high-availability.zookeeper.quorum": "zk1:2181,zk2:2181"})
    retriever.leader_address()      # 'http://10.0.0.7:8081', or None while none leads

Only the ``high-availability.*`` keys are taken: ``type`` (``file`` or ``zookeeper``),
``zookeeper.quorum``, ``zookeeper.path.root``, ``cluster-id`` and, for file HA, ``storageDir``. The
store is opened on first use and kept; reading it blocks for at most a ZooKeeper call's timeout.
"""
from __future__ import annotations

import os

from runtime.config import ConfigError, Configuration
from runtime.ha.drivers import ha_services
from runtime.ha.services import HaServices

HA_KEYS = ("high-availability.type", "high-availability.storageDir", "high-availability.cluster-id",
           "high-availability.zookeeper.quorum", "high-availability.zookeeper.path.root")


def ha_settings(entries: dict[str, str]) -> dict[str, str]:
    """The HA keys among ``entries`` (e.g. a cluster's ``/jobmanager/config``); empty without HA."""
    found = {k: str(v) for k, v in entries.items() if k in HA_KEYS and v not in (None, "")}
    return found if found.get("high-availability.type", "none") != "none" else {}


class LeaderRetrieval:
    def __init__(self, settings: dict[str, str]):
        settings = ha_settings(settings)
        if not settings:
            raise ConfigError("high-availability.type: leader retrieval needs 'file' or 'zookeeper'")
        if settings["high-availability.type"] == "file" and "high-availability.storageDir" not in settings:
            raise ConfigError("high-availability.storageDir: file HA keeps the leader's lease there; name it")
        self.conf = Configuration(settings)
        self._services: HaServices | None = None

    def leader_address(self) -> str | None:
        """The leader's REST address as the HA store names it; None while none leads.
        OSError (HaStoreUnavailable) if the store does not answer."""
        if self._services is None:
            if self.conf.get("high-availability.type") == "file" and not os.path.isdir(self._file_root()):
                return None  # not this host's directory (or not yet made): nothing to read, nothing to create
            self._services = ha_services(self.conf)
        leader = self._services.leader()
        return leader.address.rstrip("/") if leader else None

    def _file_root(self) -> str:
        return os.path.join(self.conf.get("high-availability.storageDir"), self.conf.get("high-availability.cluster-id"))

    def close(self) -> None:
        if self._services is not None:
            self._services.close()
            self._services = None
