"""High-availability services: who leads, where it listens, and what a new leader must resume.

A JobManager contends for leadership through :meth:`HaServices.try_lead`; winning gives it a
:class:`LeaderSessionId`, the fencing token every write to the HA store carries, so a leader that has
lost its lease (paused, partitioned) cannot overwrite what the new leader wrote. TaskManagers and
clients find the leader with :meth:`HaServices.leader`. The store keeps each running job's graph, its
retained checkpoints (the latest last) and its checkpoint-id counter (as Flink's CheckpointIDCounter):
a new leader resumes every job found there and numbers its checkpoints after every id any earlier
leader reserved, so no two leaders ever write the same ``chk-<n>`` directory.

``high-availability.type`` picks the implementation (runtime.ha.drivers.ha_services): ``none``
(:class:`NoHaServices`, one JobManager, nothing stored), ``file`` (runtime.ha.file) or ``zookeeper``
(runtime.ha.zookeeper).
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

from runtime.checkpoint.fencing import fenced_by
from runtime.errors import ClusterError
from runtime.checkpoint import storage
from runtime.fileio import read_json, write_json_atomically
from runtime.ha.fence import LeaderFence, LeaseHolder
from runtime.ha.leadership import ConnectionSuspended, Reconnected, SessionLost
from runtime.ids import JobId, LeaderSessionId


class LeadershipLost(ClusterError):
    """A write carried a leader session id that no longer holds the lease: its sender is not the leader."""


class HaStoreUnavailable(OSError):
    """The HA store did not answer (connection lost, session expired, call timed out). Callers treat it
    like any unreachable store: a leader stops serving until it can confirm its lease again."""


@dataclass(frozen=True)
class LeaderInfo:
    """The current leader as TaskManagers and clients need it."""
    contender_id: str
    address: str
    session_id: LeaderSessionId


class HaServices(ABC):
    """Leader election, leader retrieval, a job graph store and checkpoint pointers. Calls block
    briefly (a file or a ZooKeeper round trip); the JobManager runs election calls off its loop."""

    #: seconds a lease lasts without renewal; None when leadership never moves (type ``none``)
    lease_duration: float | None = None
    #: URL of this cluster's HA storage (``<high-availability.storageDir>/<cluster-id>``), if any
    storage_url: str | None = None

    # -- election -----------------------------------------------------------------------------
    @abstractmethod
    def try_lead(self, contender_id: str, address: str) -> LeaderSessionId | None:
        """Take or renew the leadership: the session id while this contender leads, else None."""

    @abstractmethod
    def resign(self, session_id: LeaderSessionId) -> None:
        """Give the leadership up at once (a clean shutdown), so a standby need not wait for the lease."""

    @abstractmethod
    def leader(self) -> LeaderInfo | None:
        """The contender holding a valid lease, or None while nobody does."""

    @abstractmethod
    def leads(self, session_id: LeaderSessionId) -> bool:
        """Whether ``session_id`` holds the leadership now, as this process's connection to the store sees
        it (ZooKeeper: the leader znode is owned by this client's live session). OSError if unreachable."""

    def fence(self, session_id: LeaderSessionId, lease: LeaseHolder) -> LeaderFence | None:
        """The fence of what this JobManager writes while it leads under ``session_id`` (runtime.ha.fence)."""
        return LeaderFence(self, lease, session_id)

    # -- membership (for ``GET /jobmanagers``) -------------------------------------------------
    @abstractmethod
    def announce(self, contender_id: str, address: str, pid: int) -> None:
        """Say this JobManager is alive; repeated while it runs, so dead ones drop out of the list."""

    @abstractmethod
    def members(self) -> list[dict]:
        """Live JobManagers: ``id``, ``address``, ``pid``."""

    # -- job store and checkpoint pointers (writes are fenced) --------------------------------
    @abstractmethod
    def put_job_graph(self, session_id: LeaderSessionId, job_id: JobId, submission: dict) -> None:
        """Keep a submitted job (the REST submission body) until it ends. LeadershipLost if fenced off."""

    @abstractmethod
    def put_checkpoint_pointer(self, session_id: LeaderSessionId, job_id: JobId, directory: str,
                               retained: tuple[str, ...] = ()) -> None:
        """Record the job's latest completed checkpoint and, oldest first, every one it retains (the
        latest among them): a new leader can fall back to an older one. LeadershipLost if fenced off."""

    @abstractmethod
    def reserve_checkpoint_ids(self, session_id: LeaderSessionId, job_id: JobId, count: int, at_least: int) -> int:
        """Advance the job's checkpoint-id counter by ``count`` in one fenced, conditional update and return
        the first id reserved: ``first .. first + count - 1`` belong to this leader alone, and the counter
        never hands out an id below ``at_least`` (a checkpoint restored from before the counter existed).
        LeadershipLost if fenced off."""

    @abstractmethod
    def remove_job(self, session_id: LeaderSessionId, job_id: JobId) -> None:
        """The job reached a terminal state: drop its graph and pointer. LeadershipLost if fenced off."""

    @abstractmethod
    def job_graphs(self) -> dict[JobId, dict]:
        """Every stored submission by job id: the jobs a new leader resumes."""

    # -- the cluster's users (runtime.users; writes are fenced) -------------------------------
    @abstractmethod
    def put_users(self, session_id: LeaderSessionId, table: dict) -> None:
        """Keep the user table (its plain form) for every later leader. LeadershipLost if fenced off."""

    @abstractmethod
    def users(self) -> dict | None:
        """The stored user table's plain form, None before any user was added. OSError if unreachable."""

    def checkpoint_pointer(self, job_id: JobId) -> str | None:
        """Directory of the job's latest completed checkpoint, if it completed one."""
        pointer = self._pointer(job_id)
        return pointer["directory"] if pointer else None

    def retained_checkpoints(self, job_id: JobId) -> list[str]:
        """The directories of the job's retained checkpoints, oldest first (the latest last); just the
        latest for a pointer written before retained ones were recorded."""
        pointer = self._pointer(job_id)
        if not pointer:
            return []
        return list(pointer.get("retained") or [pointer["directory"]])

    @abstractmethod
    def _pointer(self, job_id: JobId) -> dict | None:
        """The job's checkpoint record as stored: ``directory`` and, since retained ones are kept, ``retained``."""

    def job_data_dir(self, job_id: JobId) -> str | None:
        """Where the leader keeps a job's push logs and collected rows for its successor; None without
        high-availability.storageDir (the data then lives in the leader's memory). Under
        ``<high-availability.storageDir>/<cluster-id>/jobs/<job>/`` (``file://`` or any fsspec URL), each
        written whole before it is acknowledged (runtime.checkpoint.storage.write_durably)::

            push/<source>/epoch                 which log positions count in (runtime.jobmanager.push)
            push/<source>/<first offset>.arrow  each batch of pushed rows, named by its first row's offset
            push/<source>/closed                the source takes no more rows
            results/<offset>.<subtask>.<checkpoint>.<sink>.arrow
                                                each collect delivery (runtime.jobmanager.collect)

        The job's directory goes when the job ends."""
        return storage.join(self.storage_url, "jobs", job_id) if self.storage_url else None

    def watch_connection(self, listener: Callable[[ConnectionSuspended | Reconnected | SessionLost], None]) -> None:
        """Call ``listener`` (from any thread) when the store's connection is suspended, comes back with the
        session alive, or loses the session. Stores without a connection of their own never call it."""
        return None

    def close(self) -> None:
        """Release connections; the default has none."""
        return None

    def entries(self, session_id: LeaderSessionId, job_id: JobId, lease: LeaseHolder) -> JobEntries:
        return JobEntries(self, session_id, job_id, LeaderFence(self, lease, session_id))


@dataclass
class JobEntries:
    """One job's HA entries as its leader writes them: each write carries the leader's session id, and
    ``fence`` guards what the leader writes and deletes for the job in checkpoint and HA storage."""
    services: HaServices
    session_id: LeaderSessionId
    job_id: JobId
    fence: LeaderFence

    def publish_checkpoint(self, directory: str, retained: tuple[str, ...] = ()) -> None:
        self.services.put_checkpoint_pointer(self.session_id, self.job_id, directory, retained)

    def reserve_checkpoint_ids(self, count: int, at_least: int) -> int:
        return self.services.reserve_checkpoint_ids(self.session_id, self.job_id, count, at_least)

    def leading(self) -> bool:
        return self.fence.leading()

    def clean(self) -> None:
        """The job ended: no later leader resumes it, so its entries and its data go."""
        self.services.remove_job(self.session_id, self.job_id)
        if self.data_dir:
            with fenced_by(self.fence):
                storage.remove(self.data_dir)

    @property
    def data_dir(self) -> str | None:
        return self.services.job_data_dir(self.job_id)


class NoHaServices(HaServices):
    """``high-availability.type: none``: the one JobManager always leads and nothing is stored."""

    def __init__(self, users_file: str | None = None) -> None:
        self.session_id = LeaderSessionId.new()
        self.users_file = users_file  # the one JobManager's users outlive it in its working directory
        self._me: LeaderInfo | None = None
        self._pid = os.getpid()
        self._next_ids: dict[JobId, int] = {}

    def try_lead(self, contender_id: str, address: str) -> LeaderSessionId:
        self._me = LeaderInfo(contender_id, address, self.session_id)
        return self.session_id

    def resign(self, session_id: LeaderSessionId) -> None:
        pass

    def leader(self) -> LeaderInfo | None:
        return self._me

    def leads(self, session_id: LeaderSessionId) -> bool:
        return session_id == self.session_id

    def fence(self, session_id: LeaderSessionId, lease: LeaseHolder) -> None:
        return None  # the only JobManager: nobody can take its place

    def announce(self, contender_id: str, address: str, pid: int) -> None:
        self._pid = pid

    def members(self) -> list[dict]:
        return [{"id": self._me.contender_id, "address": self._me.address, "pid": self._pid}] if self._me else []

    def put_job_graph(self, session_id, job_id, submission) -> None:
        pass

    def put_checkpoint_pointer(self, session_id, job_id, directory, retained=()) -> None:
        pass

    def reserve_checkpoint_ids(self, session_id, job_id, count, at_least) -> int:
        first = max(self._next_ids.get(job_id, 1), at_least)
        self._next_ids[job_id] = first + count
        return first

    def remove_job(self, session_id, job_id) -> None:
        pass

    def job_graphs(self) -> dict[JobId, dict]:
        return {}

    def put_users(self, session_id, table: dict) -> None:
        if self.users_file:
            write_json_atomically(self.users_file, table, durable=True)

    def users(self) -> dict | None:
        return read_json(self.users_file) if self.users_file else None

    def _pointer(self, job_id) -> dict | None:
        return None

    def entries(self, session_id, job_id, lease) -> None:  # type: ignore[override]
        return None  # nothing to record: no checkpoint coordinator waits on a store
