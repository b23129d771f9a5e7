"""Fenced storage: every write, rename and delete of checkpoint and HA storage asks its writer's fence
first, and the operation of a writer that may have been superseded is refused.

A fence tells, right before an operation, why its holder may no longer write (None while it may): a
JobManager's leader fence (runtime.ha.fence: its lease still confirmed, and the HA store still naming
its session), or a subtask's :class:`UploadFence` (its attempt not cancelled, its TaskManager still
following the leader session that triggered the checkpoint and still heard by it). The fence of the
current thread is set around a call with :func:`fenced_by` (:func:`run_fenced` in a worker thread);
the storage functions call :func:`guard` before they act, which records the operation in the trace
(runtime.checkpoint.trace) and, when the fence refuses, logs "fenced write refused" and raises
:class:`FencedOut` (a StorageError) so that nothing is written or deleted.

A check on a plain file system precedes the operation by microseconds; a process stopped exactly in
between acts late. Checkpoint directories are never shared between leaders or attempts (ids from the HA
store's counter, one snapshot directory per attempt), so such a late operation touches only what its
own, superseded, writer made.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from runtime.checkpoint import trace
from runtime.errors import StorageError

log = logging.getLogger(__name__)
_current = threading.local()


class WriteFence(Protocol):
    """Who writes (``token``, recorded in the trace) and whether it still may."""

    @property
    def token(self) -> dict[str, Any]: ...

    def refusal(self) -> str | None:
        """Why this writer may not write now, or None. May block briefly (a store round trip)."""
        ...


class FencedOut(StorageError):
    """A write or delete refused because its writer lost its leadership or its attempt was superseded."""


@contextlib.contextmanager
def fenced_by(fence: WriteFence | None):
    """Storage operations of this thread inside the block ask ``fence`` first (None: unfenced)."""
    previous = getattr(_current, "fence", None)
    _current.fence = fence
    try:
        yield
    finally:
        _current.fence = previous


def run_fenced(fence: WriteFence | None, fn: Callable, *args) -> Any:
    """``fn(*args)`` with ``fence`` guarding its storage operations: what an executor thread runs."""
    with fenced_by(fence):
        return fn(*args)


def guard(op: str, url: str) -> None:
    """Called by the storage functions before ``op`` (write, rename, delete) on ``url``: FencedOut if the
    current fence refuses it. Every operation is traced, refused ones too."""
    fence: WriteFence | None = getattr(_current, "fence", None)
    reason = fence.refusal() if fence is not None else None
    trace.record("storage", op=op, url=url, token=fence.token if fence is not None else None, refused=reason)
    if reason is not None:
        log.warning("fenced write refused: %s %s: %s", op, url, reason)
        raise FencedOut(f"fenced write refused: {op} {url}: {reason}")


def upload_refusal(cancelled: bool, session: str | None, current_session: str | None, silence_s: float,
                   timeout_s: float) -> str | None:
    """Why a subtask's snapshot upload must stop, or None: the decision of :class:`UploadFence`, pure."""
    if cancelled:
        return "its attempt was cancelled"
    if current_session != session:
        return f"its TaskManager no longer follows leader session {session} (now {current_session})"
    if silence_s >= timeout_s:
        return (f"no heartbeat of its TaskManager was acknowledged for {silence_s:.1f} s (heartbeat.timeout "
                f"{timeout_s:g} s): the JobManager may have declared it lost and superseded the attempt")
    return None


class HeartbeatView(Protocol):
    timeout_s: float

    def silence(self) -> float: ...


class UploadingTaskManager(Protocol):
    """What an upload fence reads of its TaskManager (runtime.taskmanager.heartbeat_lease has the lease)."""

    @property
    def leader_session_id(self) -> Any: ...

    @property
    def heartbeats(self) -> HeartbeatView: ...


@dataclass(frozen=True)
class UploadFence:
    """A subtask attempt's snapshot upload for one checkpoint, triggered under leader ``session``. The
    callables read the TaskManager's view from the upload thread; ``heartbeat_silence`` is the time since
    the last heartbeat the leader acknowledged was sent (the leader cannot have heard it earlier)."""
    attempt: str
    checkpoint_id: int
    session: str | None
    cancelled: Callable[[], bool]
    current_session: Callable[[], str | None]
    heartbeat_silence: Callable[[], float]
    heartbeat_timeout_s: float

    @property
    def token(self) -> dict[str, Any]:
        return {"role": "taskmanager", "attempt": self.attempt, "checkpoint": self.checkpoint_id,
                "session": self.session}

    def refusal(self) -> str | None:
        return upload_refusal(self.cancelled(), self.session, self.current_session(), self.heartbeat_silence(),
                              self.heartbeat_timeout_s)

    @classmethod
    def of(cls, attempt: str, checkpoint_id: int, tm: UploadingTaskManager, cancelled: Callable[[], bool]) -> UploadFence:
        """The fence of an upload starting now on ``tm``, under the leader session it follows now."""
        return cls(attempt, checkpoint_id, tm.leader_session_id, cancelled, lambda: tm.leader_session_id,
                   tm.heartbeats.silence, tm.heartbeats.timeout_s)
