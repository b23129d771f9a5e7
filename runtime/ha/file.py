"""File-based HA for several JobManagers on one host (or on hosts sharing one file system).

Layout under ``<high-availability.storageDir>/<cluster-id>/``::

    lease.json            the leader's lease: contender id, REST address, session id, expiry (wall clock)
    lease.lock            flock'd around every read-modify-write of the lease and every fenced write
    jobmanagers/<id>.json each JobManager's announcement (address, pid, last seen)
    jobgraphs/<job>.json  submissions of jobs that have not ended
    checkpoints/<job>.json pointer to each job's latest completed checkpoint and its retained ones
    counters/<job>.json   each job's checkpoint-id counter: the next id no leader has reserved
    users.json            the cluster's users (runtime.users): names, quotas, token hashes
    jobs/<job>/           push logs and collected rows of each job (runtime.ha.services.HaServices.job_data_dir)

Every file is written to a temporary name and renamed, so a reader sees it whole or not at all. The
leader renews its lease well within ``high-availability.lease-duration``; a standby takes over once the
lease has expired. Fenced writes check, under the lock, that the writer's session id still holds the
lease, so a leader that lost it (a long pause) cannot change what its successor wrote.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import time

from runtime.fileio import read_json, write_json_atomically
from runtime.checkpoint import storage
from runtime.ha.services import HaServices, LeaderInfo, LeadershipLost
from runtime.ids import JobId, LeaderSessionId

MEMBER_TTL_LEASES = 3  # an announcement older than this many lease durations belongs to a dead JobManager


def write_atomically(path: str, data: dict) -> None:
    """Write JSON to ``path`` durably, all or nothing (the lease and the job entries are read by others)."""
    write_json_atomically(path, data, durable=True)


def remove_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


class FileHaServices(HaServices):
    """HA services on a shared directory: a renewed lease file for leadership, JSON files for jobs and checkpoints."""
    def __init__(self, root: str, lease_duration: float, clock=time.time):
        self.root = root
        self.lease_duration = lease_duration
        self.storage_url = storage.normalise(root)
        self.clock = clock
        for sub in ("jobmanagers", "jobgraphs", "checkpoints", "counters"):
            os.makedirs(os.path.join(root, sub), exist_ok=True)
        self._lease = os.path.join(root, "lease.json")
        self._lock = os.path.join(root, "lease.lock")

    @contextlib.contextmanager
    def _locked(self):
        with open(self._lock, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _valid_lease(self) -> dict | None:
        lease = read_json(self._lease)
        return lease if lease and lease["expires"] > self.clock() else None

    # -- election -----------------------------------------------------------------------------
    def try_lead(self, contender_id: str, address: str) -> LeaderSessionId | None:
        with self._locked():
            lease = self._valid_lease()
            if lease is not None and lease["contender_id"] != contender_id:
                return None
            session = LeaderSessionId(lease["session_id"]) if lease else LeaderSessionId.new()
            write_atomically(self._lease, {"contender_id": contender_id, "address": address,
                                           "session_id": session, "expires": self.clock() + self.lease_duration})
            return session

    def resign(self, session_id: LeaderSessionId) -> None:
        with self._locked():
            lease = read_json(self._lease)
            if lease and lease["session_id"] == session_id:
                remove_quietly(self._lease)

    def leader(self) -> LeaderInfo | None:
        lease = self._valid_lease()
        return LeaderInfo(lease["contender_id"], lease["address"], LeaderSessionId(lease["session_id"])) if lease else None

    def leads(self, session_id: LeaderSessionId) -> bool:
        lease = self._valid_lease()
        return lease is not None and lease["session_id"] == session_id

    # -- membership ---------------------------------------------------------------------------
    def announce(self, contender_id: str, address: str, pid: int) -> None:
        write_atomically(self._path("jobmanagers", contender_id),
                         {"id": contender_id, "address": address, "pid": pid, "seen": self.clock()})

    def members(self) -> list[dict]:
        oldest = self.clock() - MEMBER_TTL_LEASES * self.lease_duration
        found = [read_json(p) for p in self._files("jobmanagers")]
        return sorted((m for m in found if m and m["seen"] >= oldest), key=lambda m: m["address"])

    # -- job store and pointers ---------------------------------------------------------------
    @contextlib.contextmanager
    def _fenced(self, session_id: LeaderSessionId):
        """Hold the lease lock while writing, after checking ``session_id`` still holds the lease."""
        with self._locked():
            lease = read_json(self._lease)
            if not lease or lease["session_id"] != session_id:
                holder = lease["address"] if lease else "nobody"
                raise LeadershipLost(f"leader session {session_id} no longer holds the lease (held by {holder})")
            yield

    def put_job_graph(self, session_id: LeaderSessionId, job_id: JobId, submission: dict) -> None:
        with self._fenced(session_id):
            write_atomically(self._path("jobgraphs", job_id), submission)

    def put_checkpoint_pointer(self, session_id: LeaderSessionId, job_id: JobId, directory: str,
                               retained: tuple[str, ...] = ()) -> None:
        with self._fenced(session_id):
            write_atomically(self._path("checkpoints", job_id),
                             {"directory": directory, "retained": list(retained or (directory,))})

    def reserve_checkpoint_ids(self, session_id: LeaderSessionId, job_id: JobId, count: int, at_least: int) -> int:
        """Under the lease lock, after checking the lease: nobody else can read the counter in between."""
        with self._fenced(session_id):
            counter = read_json(self._path("counters", job_id)) or {"next": 1}
            first = max(int(counter["next"]), at_least)
            write_atomically(self._path("counters", job_id), {"next": first + count})
            return first

    def remove_job(self, session_id: LeaderSessionId, job_id: JobId) -> None:
        with self._fenced(session_id):
            for kind in ("jobgraphs", "checkpoints", "counters"):
                remove_quietly(self._path(kind, job_id))

    def job_graphs(self) -> dict[JobId, dict]:
        graphs = {JobId(os.path.basename(p)[:-len(".json")]): read_json(p) for p in self._files("jobgraphs")}
        return {job_id: g for job_id, g in graphs.items() if g is not None}

    def _pointer(self, job_id: JobId) -> dict | None:
        return read_json(self._path("checkpoints", job_id))

    def put_users(self, session_id: LeaderSessionId, table: dict) -> None:
        with self._fenced(session_id):
            write_atomically(os.path.join(self.root, "users.json"), table)

    def users(self) -> dict | None:
        return read_json(os.path.join(self.root, "users.json"))

    # -- paths --------------------------------------------------------------------------------
    def _path(self, kind: str, name: str) -> str:
        return os.path.join(self.root, kind, f"{name}.json")

    def _files(self, kind: str) -> list[str]:
        folder = os.path.join(self.root, kind)
        return [os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".json")]
