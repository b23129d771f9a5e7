"""File-based HA for several JobManagers on one host (or on hosts sharing one file system).

Layout under ``<high-availability.storageDir>/<cluster-id>/``::

    state/<n>.json        what the JobManagers agree on (runtime.ha.file_state): the leader's lease (contender
                          id, REST address, session id, expiry on the wall clock), the jobs whose graphs are
                          stored, each job's checkpoint pointer and checkpoint-id counter, the cluster's
                          users (runtime.users: names, quotas, token hashes); version n, the newest is
                          current (runtime.ha.file_register)
    jobmanagers/<id>.json each JobManager's announcement (address, pid, last seen)
    jobgraphs/<job>.json  submissions of jobs that have not ended (listed in the state: an unlisted one is not a job)
    jobs/<job>/           push logs and collected rows of each job (runtime.ha.services.HaServices.job_data_dir)

The leader renews its lease well within ``high-availability.lease-duration``; a standby takes over once the
lease has expired. Every change to the state is a compare-and-set of its next version: the change is
decided on the version read and written only if no other version came in between, so a fenced write
(the writer's session must hold the lease) lands only while it does, and a leader that lost the lease
(a long pause) cannot change what its successor wrote. No lock is held anywhere: a JobManager stopped in
the middle of a write holds nobody back, and the standby takes the lease once it lapses.
"""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import TypeVar

from runtime.fileio import read_json, write_json_atomically
from runtime.checkpoint import storage
from runtime.ha import file_state as fs
from runtime.ha.file_register import FileRegister
from runtime.ha.services import HaServices, HaStoreUnavailable, LeaderInfo, LeadershipLost
from runtime.ids import JobId, LeaderSessionId

MEMBER_TTL_LEASES = 3  # an announcement older than this many lease durations belongs to a dead JobManager
UPDATE_ATTEMPTS = 100  # compare-and-set rounds lost in a row (to this leader's own other writes) before giving up
T = TypeVar("T")
Change = Callable[[fs.StoreState], tuple[fs.StoreState | None, T]]


def write_atomically(path: str, data: dict) -> None:
    """Write JSON to ``path`` durably, all or nothing (others read the job graphs and announcements)."""
    write_json_atomically(path, data, durable=True)


def remove_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


class FileHaServices(HaServices):
    """HA services on a shared directory: a lease and the fenced entries in one compare-and-set register,
    JSON files for job graphs and announcements."""
    def __init__(self, root: str, lease_duration: float, clock=time.time):
        self.root = root
        self.lease_duration = lease_duration
        self.storage_url = storage.normalise(root)
        self.clock = clock
        for sub in ("jobmanagers", "jobgraphs"):
            os.makedirs(os.path.join(root, sub), exist_ok=True)
        self._register = FileRegister(os.path.join(root, "state"))

    def _state(self) -> fs.StoreState:
        return fs.StoreState.from_json(self._register.read()[1])

    def _update(self, change: Change[T]) -> T:
        """Apply ``change`` to the newest state and write the result as the next version; when another
        version came in between, decide again on it. A change that raises leaves the state as it was."""
        for _ in range(UPDATE_ATTEMPTS):
            version, document = self._register.read()
            state, result = change(fs.StoreState.from_json(document))
            if state is None or self._register.compare_and_set(version, state.to_json()):
                return result
        raise HaStoreUnavailable(f"{self._register.directory}: {UPDATE_ATTEMPTS} updates in a row lost to others")

    def _fenced(self, session_id: LeaderSessionId, change: Callable[[fs.StoreState], fs.StoreState | None]) -> None:
        """``change`` made only while ``session_id`` holds the lease, checked on the very version it changes."""
        def checked(state: fs.StoreState) -> tuple[fs.StoreState | None, None]:
            refused = fs.refusal(state, session_id)
            if refused is not None:
                raise LeadershipLost(refused)
            return change(state), None
        self._update(checked)

    # -- election -----------------------------------------------------------------------------
    def try_lead(self, contender_id: str, address: str) -> LeaderSessionId | None:
        return self._update(lambda state: fs.take_lease(state, contender_id, address, self.clock(),
                                                        self.lease_duration, LeaderSessionId.new()))

    def resign(self, session_id: LeaderSessionId) -> None:
        self._update(lambda state: (fs.resign(state, session_id), None))

    def leader(self) -> LeaderInfo | None:
        lease = fs.valid_lease(self._state(), self.clock())
        return LeaderInfo(lease.contender_id, lease.address, lease.session_id) if lease else None

    def leads(self, session_id: LeaderSessionId) -> bool:
        return fs.leads(self._state(), session_id, self.clock())

    # -- membership ---------------------------------------------------------------------------
    def announce(self, contender_id: str, address: str, pid: int) -> None:
        write_atomically(self._path("jobmanagers", contender_id),
                         {"id": contender_id, "address": address, "pid": pid, "seen": self.clock()})

    def members(self) -> list[dict]:
        oldest = self.clock() - MEMBER_TTL_LEASES * self.lease_duration
        found = [read_json(p) for p in self._files("jobmanagers")]
        return sorted((m for m in found if m and m["seen"] >= oldest), key=lambda m: m["address"])

    # -- job store and pointers ---------------------------------------------------------------
    def put_job_graph(self, session_id: LeaderSessionId, job_id: JobId, submission: dict) -> None:
        """The graph's file first, then the job listed in the state (fenced): a refused leader's file is
        never listed, and goes again."""
        path = self._path("jobgraphs", job_id)
        write_atomically(path, submission)
        try:
            self._fenced(session_id, lambda state: fs.with_job(state, job_id))
        except LeadershipLost:
            if job_id not in self._state().jobs:
                remove_quietly(path)
            raise

    def put_checkpoint_pointer(self, session_id: LeaderSessionId, job_id: JobId, directory: str,
                               retained: tuple[str, ...] = ()) -> None:
        self._fenced(session_id, lambda state: fs.with_pointer(state, job_id, directory, retained))

    def reserve_checkpoint_ids(self, session_id: LeaderSessionId, job_id: JobId, count: int, at_least: int) -> int:
        """Decided on the version it replaces: two leaders never read the same counter and both write."""
        def reserve(state: fs.StoreState) -> tuple[fs.StoreState, int]:
            refused = fs.refusal(state, session_id)
            if refused is not None:
                raise LeadershipLost(refused)
            return fs.with_ids_reserved(state, job_id, count, at_least)
        return self._update(reserve)

    def remove_job(self, session_id: LeaderSessionId, job_id: JobId) -> None:
        """Unlisted first (fenced), then the graph's file: a refused leader removes nothing."""
        self._fenced(session_id, lambda state: fs.without_job(state, job_id))
        remove_quietly(self._path("jobgraphs", job_id))

    def job_graphs(self) -> dict[JobId, dict]:
        graphs = {job_id: read_json(self._path("jobgraphs", job_id)) for job_id in self._state().jobs}
        return {job_id: g for job_id, g in graphs.items() if g is not None}

    def _pointer(self, job_id: JobId) -> dict | None:
        return self._state().checkpoints.get(job_id)

    def put_users(self, session_id: LeaderSessionId, table: dict) -> None:
        self._fenced(session_id, lambda state: fs.with_users(state, table))

    def users(self) -> dict | None:
        return self._state().users

    # -- paths --------------------------------------------------------------------------------
    def _path(self, kind: str, name: str) -> str:
        return os.path.join(self.root, kind, f"{name}.json")

    def _files(self, kind: str) -> list[str]:
        folder = os.path.join(self.root, kind)
        return [os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".json")]
