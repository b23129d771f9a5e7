"""The HA services ``high-availability.type`` names, made from the configuration.

This module sits above the interface (runtime.ha.services) and its implementations, which import only
the interface: the choice of driver lives here, not in the interface module. ZooKeeper's driver is
imported only when chosen (kazoo is an optional dependency).
"""
from __future__ import annotations

import os
import time

from runtime.config import ConfigError, Configuration
from runtime.checkpoint import storage
from runtime.ha.file import FileHaServices
from runtime.ha.services import HaServices, NoHaServices


def ha_services(conf: Configuration, working_dir: str | None = None, clock=time.time) -> HaServices:
    """The services ``high-availability.type`` names. ConfigError names a missing key."""
    kind = conf.get("high-availability.type")
    if kind == "none":
        return NoHaServices(os.path.join(working_dir, "users.json") if working_dir else None)
    cluster_id = conf.get("high-availability.cluster-id")
    if kind == "file":
        base = conf.get("high-availability.storageDir") or (os.path.join(working_dir, "ha") if working_dir else "")
        if not base:
            raise ConfigError("high-availability.storageDir: file HA needs a directory shared by the JobManagers")
        return FileHaServices(os.path.join(base, cluster_id), conf.get("high-availability.lease-duration"), clock)
    try:
        from runtime.ha.zookeeper import ZooKeeperHaServices
    except ImportError as err:
        raise ConfigError(f"high-availability.type: zookeeper needs kazoo ({err}); "
                          "install it with pip install 'flinkbench[zookeeper]'") from None
    quorum = conf.get("high-availability.zookeeper.quorum")
    if not quorum:
        raise ConfigError("high-availability.zookeeper.quorum: zookeeper HA needs a connect string, e.g. 127.0.0.1:2181")
    base = conf.get("high-availability.storageDir")
    return ZooKeeperHaServices(quorum, conf.get("high-availability.zookeeper.path.root").rstrip("/") + "/" + cluster_id,
                               conf.get("high-availability.lease-duration"),
                               storage.join(storage.normalise(base), cluster_id) if base else None)
