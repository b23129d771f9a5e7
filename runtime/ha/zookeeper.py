"""ZooKeeper HA (kazoo): for JobManagers on several hosts, against a real ZooKeeper ensemble.

Under ``<high-availability.zookeeper.path.root>/<cluster-id>``::

    leader            ephemeral: contender id, REST address, session id; gone when its owner's
                      ZooKeeper session ends (``high-availability.lease-duration`` is the session timeout)
    jobmanagers/<id>  ephemeral announcements
    jobgraphs/<job>   submissions of jobs that have not ended
    checkpoints/<job> pointer to each job's latest completed checkpoint and its retained ones
    checkpoint-counters/<job>  the job's checkpoint-id counter: the next id no leader has reserved
    users             the cluster's users (runtime.users): names, quotas, token hashes

Fenced writes run in a transaction that also checks the leader znode's version, after reading that it
holds the writer's session id: a deposed leader's write fails as a whole. The checkpoint-id counter is
also updated conditionally on its own version, as Flink's ZooKeeperCheckpointIDCounter does. Job data too large for znodes
(push logs, collected rows) goes to ``high-availability.storageDir`` (runtime.ha.services.HaServices.job_data_dir), which a
JobManager needs with ZooKeeper HA as Flink's does.

A contender leads only while the leader znode is owned by its *current* ZooKeeper session: after a
session expiry the old znode may linger for a moment, and it no longer counts. Every call waits at most
one lease duration; a lost connection, an expired session or a call that timed out raises
:class:`HaStoreUnavailable` (an OSError), and :meth:`watch_connection` reports kazoo's SUSPENDED,
CONNECTED and LOST states as leadership events.
"""
from __future__ import annotations

import contextlib
import json
import logging

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (ConnectionLoss, NodeExistsError, NoNodeError, OperationTimeoutError,
                              RolledBackError, SessionExpiredError)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry

from runtime.ha.leadership import ConnectionSuspended, Reconnected, SessionLost
from runtime.ha.services import HaServices, HaStoreUnavailable, LeaderInfo, LeadershipLost
from runtime.ids import JobId, LeaderSessionId

log = logging.getLogger(__name__)

_UNAVAILABLE = (ConnectionLoss, SessionExpiredError, OperationTimeoutError, KazooTimeoutError)
COUNTER_ATTEMPTS = 5  # conditional updates of a checkpoint-id counter before giving up on a busy one


@contextlib.contextmanager
def _store_call(what: str):
    """Turn kazoo's connection failures into HaStoreUnavailable naming the call."""
    try:
        yield
    except _UNAVAILABLE as err:
        raise HaStoreUnavailable(f"ZooKeeper did not answer {what}: {type(err).__name__} {err}".rstrip()) from None


class ZooKeeperHaServices(HaServices):
    """HA services on ZooKeeper: an ephemeral leader znode, fenced writes as transactions checking its version."""
    def __init__(self, quorum: str, root: str, lease_duration: float, storage_url: str | None = None):
        self.root = root
        self.lease_duration = lease_duration
        self.storage_url = storage_url
        self.call_timeout = max(lease_duration, 2.0)
        # Reconnect within a second of ZooKeeper coming back, however long it was away (kazoo's own
        # backoff grows to an hour); the session timeout is the lease duration.
        self.zk = KazooClient(hosts=quorum, timeout=max(lease_duration, 2.0),
                              connection_retry=KazooRetry(max_tries=-1, delay=0.1, backoff=2, max_delay=1.0))
        self.zk.start(timeout=15)
        for sub in ("jobmanagers", "jobgraphs", "checkpoints", "checkpoint-counters"):
            self.zk.ensure_path(f"{root}/{sub}")
        self._leader = f"{root}/leader"

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()

    def watch_connection(self, listener) -> None:
        events = {KazooState.SUSPENDED: ConnectionSuspended(), KazooState.CONNECTED: Reconnected(),
                  KazooState.LOST: SessionLost()}

        def on_state(state: str) -> None:  # kazoo's connection thread: must not block
            log.warning("ZooKeeper connection %s", state)
            listener(events[state])
        self.zk.add_listener(on_state)

    def _wait(self, what: str, async_result):
        with _store_call(what):
            return async_result.get(timeout=self.call_timeout)

    def _read(self, path: str):
        try:
            data, stat = self._wait(f"get {path}", self.zk.get_async(path))
        except NoNodeError:
            return None, None
        return json.loads(data), stat

    def _session(self) -> int:
        """This client's ZooKeeper session id; HaStoreUnavailable while disconnected (it may yet live)."""
        client_id = self.zk.client_id
        if not client_id:
            raise HaStoreUnavailable("ZooKeeper is not connected: whose session holds the leader node is unknown")
        return client_id[0]

    # -- election -----------------------------------------------------------------------------
    def try_lead(self, contender_id: str, address: str) -> LeaderSessionId | None:
        lease, stat = self._read(self._leader)
        if lease is not None:
            ours = lease["contender_id"] == contender_id and stat.ephemeralOwner == self._session()
            return LeaderSessionId(lease["session_id"]) if ours else None
        session = LeaderSessionId.new()
        data = _json({"contender_id": contender_id, "address": address, "session_id": session})
        try:
            self._wait(f"create {self._leader}", self.zk.create_async(self._leader, data, ephemeral=True))
        except NodeExistsError:
            return None
        return session

    def resign(self, session_id: LeaderSessionId) -> None:
        lease, stat = self._read(self._leader)
        if lease and lease["session_id"] == session_id:
            try:
                self._wait(f"delete {self._leader}", self.zk.delete_async(self._leader, version=stat.version))
            except NoNodeError:
                pass

    def leader(self) -> LeaderInfo | None:
        lease, _ = self._read(self._leader)
        return LeaderInfo(lease["contender_id"], lease["address"], LeaderSessionId(lease["session_id"])) if lease else None

    def leads(self, session_id: LeaderSessionId) -> bool:
        """The leader znode names ``session_id`` and belongs to this client's current ZooKeeper session
        (after an expiry the old znode may linger a moment: it no longer counts)."""
        lease, stat = self._read(self._leader)
        return lease is not None and lease["session_id"] == session_id and stat.ephemeralOwner == self._session()

    # -- membership ---------------------------------------------------------------------------
    def announce(self, contender_id: str, address: str, pid: int) -> None:
        path = f"{self.root}/jobmanagers/{contender_id}"
        if self._wait(f"exists {path}", self.zk.exists_async(path)) is None:
            try:
                self._wait(f"create {path}", self.zk.create_async(
                    path, _json({"id": contender_id, "address": address, "pid": pid}), ephemeral=True))
            except NodeExistsError:
                pass

    def members(self) -> list[dict]:
        folder = f"{self.root}/jobmanagers"
        found = [self._read(f"{folder}/{name}")[0] for name in self._children(folder)]
        return sorted((m for m in found if m), key=lambda m: m["address"])

    def _children(self, path: str) -> list[str]:
        return self._wait(f"children of {path}", self.zk.get_children_async(path))

    # -- job store and pointers ---------------------------------------------------------------
    def _leader_version(self, session_id: LeaderSessionId) -> int:
        """The leader znode's version while it holds ``session_id``; LeadershipLost otherwise."""
        lease, stat = self._read(self._leader)
        if not lease or lease["session_id"] != session_id:
            raise LeadershipLost(f"leader session {session_id} no longer leads "
                                 f"(the leader is {lease['address'] if lease else 'nobody'})")
        return stat.version

    def _commit(self, session_id: LeaderSessionId, path: str, tx) -> bool:
        """Commit ``tx`` (its first operation checks the leader znode). False when only a later operation
        failed (a conditional update lost a race); LeadershipLost when the leader check did."""
        results = self._wait(f"fenced write to {path}", tx.commit_async())
        if not any(isinstance(r, Exception) for r in results):
            return True
        if not isinstance(results[0], RolledBackError):
            raise LeadershipLost(f"leader session {session_id}: fenced write to {path} refused: {results}")
        return False

    def _fenced_put(self, session_id: LeaderSessionId, path: str, data: dict | None) -> None:
        """Write (or with ``data`` None delete) ``path`` only while ``session_id`` holds the leader znode."""
        version = self._leader_version(session_id)
        exists = self._wait(f"exists {path}", self.zk.exists_async(path)) is not None
        tx = self.zk.transaction()
        tx.check(self._leader, version)
        if data is None:
            if exists:
                tx.delete(path)
        elif exists:
            tx.set_data(path, _json(data))
        else:
            tx.create(path, _json(data))
        if not self._commit(session_id, path, tx):
            raise HaStoreUnavailable(f"fenced write to {path} failed: the node changed while it was written")

    def put_job_graph(self, session_id: LeaderSessionId, job_id: JobId, submission: dict) -> None:
        self._fenced_put(session_id, f"{self.root}/jobgraphs/{job_id}", submission)

    def put_checkpoint_pointer(self, session_id: LeaderSessionId, job_id: JobId, directory: str,
                               retained: tuple[str, ...] = ()) -> None:
        self._fenced_put(session_id, f"{self.root}/checkpoints/{job_id}",
                         {"directory": directory, "retained": list(retained or (directory,))})

    def reserve_checkpoint_ids(self, session_id: LeaderSessionId, job_id: JobId, count: int, at_least: int) -> int:
        """One transaction checks the leader znode and sets the counter at the version just read: a deposed
        leader's reservation fails whole, and one that raced another update reads the counter again."""
        path = f"{self.root}/checkpoint-counters/{job_id}"
        for _ in range(COUNTER_ATTEMPTS):
            version = self._leader_version(session_id)
            counter, stat = self._read(path)
            first = max(int(counter["next"]) if counter else 1, at_least)
            tx = self.zk.transaction()
            tx.check(self._leader, version)
            if stat is None:
                tx.create(path, _json({"next": first + count}))
            else:
                tx.set_data(path, _json({"next": first + count}), version=stat.version)
            if self._commit(session_id, path, tx):
                return first
        raise HaStoreUnavailable(f"the checkpoint-id counter {path} changed under {COUNTER_ATTEMPTS} reservations")

    def remove_job(self, session_id: LeaderSessionId, job_id: JobId) -> None:
        for kind in ("jobgraphs", "checkpoints", "checkpoint-counters"):
            self._fenced_put(session_id, f"{self.root}/{kind}/{job_id}", None)

    def job_graphs(self) -> dict[JobId, dict]:
        names = self._children(f"{self.root}/jobgraphs")
        graphs = {JobId(n): self._read(f"{self.root}/jobgraphs/{n}")[0] for n in names}
        return {job_id: g for job_id, g in graphs.items() if g is not None}

    def _pointer(self, job_id: JobId) -> dict | None:
        return self._read(f"{self.root}/checkpoints/{job_id}")[0]

    def put_users(self, session_id: LeaderSessionId, table: dict) -> None:
        self._fenced_put(session_id, f"{self.root}/users", table)

    def users(self) -> dict | None:
        return self._read(f"{self.root}/users")[0]


def _json(data: dict) -> bytes:
    return json.dumps(data).encode()
