"""ZooKeeper HA (kazoo): for JobManagers on several hosts, against a real ZooKeeper ensemble.

Under ``<high-availability.zookeeper.path.root>/<cluster-id>``::

    leader            ephemeral: contender id, REST address, session id; gone when its owner's
                      ZooKeeper session ends (``high-availability.lease-duration`` is the session timeout)
    jobmanagers/<id>  ephemeral announcements
    jobgraphs/<job>   submissions of jobs that have not ended
    checkpoints/<job> pointer to each job's latest completed checkpoint

Fenced writes run in a transaction that also checks the leader znode's version, after reading that it
holds the writer's session id: a deposed leader's write fails as a whole.
"""
from __future__ import annotations

import json

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from runtime.ha.services import HaServices, LeaderInfo, LeadershipLost
from runtime.ids import JobId, LeaderSessionId


class ZooKeeperHaServices(HaServices):
    def __init__(self, quorum: str, root: str, lease_duration: float):
        self.root = root
        self.lease_duration = lease_duration
        self.zk = KazooClient(hosts=quorum, timeout=max(lease_duration, 2.0))
        self.zk.start(timeout=15)
        for sub in ("jobmanagers", "jobgraphs", "checkpoints"):
            self.zk.ensure_path(f"{root}/{sub}")
        self._leader = f"{root}/leader"

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()

    def _read(self, path: str):
        try:
            data, stat = self.zk.get(path)
        except NoNodeError:
            return None, None
        return json.loads(data), stat

    # -- election -----------------------------------------------------------------------------
    def try_lead(self, contender_id: str, address: str) -> LeaderSessionId | None:
        lease, _ = self._read(self._leader)
        if lease is not None:
            return LeaderSessionId(lease["session_id"]) if lease["contender_id"] == contender_id else None
        session = LeaderSessionId.new()
        try:
            self.zk.create(self._leader, _json({"contender_id": contender_id, "address": address,
                                                "session_id": session}), ephemeral=True)
        except NodeExistsError:
            return None
        return session

    def resign(self, session_id: LeaderSessionId) -> None:
        lease, stat = self._read(self._leader)
        if lease and lease["session_id"] == session_id:
            try:
                self.zk.delete(self._leader, version=stat.version)
            except NoNodeError:
                pass

    def leader(self) -> LeaderInfo | None:
        lease, _ = self._read(self._leader)
        return LeaderInfo(lease["contender_id"], lease["address"], LeaderSessionId(lease["session_id"])) if lease else None

    # -- membership ---------------------------------------------------------------------------
    def announce(self, contender_id: str, address: str, pid: int) -> None:
        path = f"{self.root}/jobmanagers/{contender_id}"
        if not self.zk.exists(path):
            self.zk.create(path, _json({"id": contender_id, "address": address, "pid": pid}), ephemeral=True)

    def members(self) -> list[dict]:
        found = [self._read(f"{self.root}/jobmanagers/{name}")[0] for name in self.zk.get_children(f"{self.root}/jobmanagers")]
        return sorted((m for m in found if m), key=lambda m: m["address"])

    # -- job store and pointers ---------------------------------------------------------------
    def _fenced_put(self, session_id: LeaderSessionId, path: str, data: dict | None) -> None:
        """Write (or with ``data`` None delete) ``path`` only while ``session_id`` holds the leader znode."""
        lease, stat = self._read(self._leader)
        if not lease or lease["session_id"] != session_id:
            raise LeadershipLost(f"leader session {session_id} no longer leads "
                                 f"(the leader is {lease['address'] if lease else 'nobody'})")
        exists = self.zk.exists(path)
        tx = self.zk.transaction()
        tx.check(self._leader, stat.version)
        if data is None:
            if exists:
                tx.delete(path)
        elif exists:
            tx.set_data(path, _json(data))
        else:
            tx.create(path, _json(data))
        results = tx.commit()
        if any(isinstance(r, Exception) for r in results):
            raise LeadershipLost(f"leader session {session_id}: fenced write to {path} refused: {results}")

    def put_job_graph(self, session_id: LeaderSessionId, job_id: JobId, submission: dict) -> None:
        self._fenced_put(session_id, f"{self.root}/jobgraphs/{job_id}", submission)

    def put_checkpoint_pointer(self, session_id: LeaderSessionId, job_id: JobId, directory: str) -> None:
        self._fenced_put(session_id, f"{self.root}/checkpoints/{job_id}", {"directory": directory})

    def remove_job(self, session_id: LeaderSessionId, job_id: JobId) -> None:
        self._fenced_put(session_id, f"{self.root}/jobgraphs/{job_id}", None)
        self._fenced_put(session_id, f"{self.root}/checkpoints/{job_id}", None)

    def job_graphs(self) -> dict[JobId, dict]:
        names = self.zk.get_children(f"{self.root}/jobgraphs")
        graphs = {JobId(n): self._read(f"{self.root}/jobgraphs/{n}")[0] for n in names}
        return {job_id: g for job_id, g in graphs.items() if g is not None}

    def checkpoint_pointer(self, job_id: JobId) -> str | None:
        pointer, _ = self._read(f"{self.root}/checkpoints/{job_id}")
        return pointer["directory"] if pointer else None


def _json(data: dict) -> bytes:
    return json.dumps(data).encode()
