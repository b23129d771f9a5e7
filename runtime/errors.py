"""Every error Flinkbench raises on purpose, as one small tree, and the two helpers that format them.

Callers catch by category (``except ClusterError``), never by tuples of builtins::

    FlinkbenchError
     +-- ConfigurationError   a key that is unknown or a value that does not parse (also ValueError)
     +-- SubmissionError      a job, graph, DDL or SQL text that cannot be accepted (also ValueError)
     +-- ClusterError         the cluster cannot do it now: unreachable, not the leader, no slots,
     |                        a TaskManager gone, a lost lease
     +-- CheckpointError      a checkpoint or savepoint that did not complete, storage that fails
     +-- ConnectorError       a source or sink that cannot be built or read (also ValueError)
     +-- UserFunctionError    user code raised; the message carries its traceback
     +-- JobFailed            a job ended FAILED; the message holds its root cause

Each module keeps its own named errors (``NoResourceAvailable``, ``StorageError`` ...) as subclasses
of one category, so a message can be precise while a caller stays general. Where an error used to be
a builtin (``ValueError``, ``OSError``), it still is one too, so older ``except`` clauses keep working.
"""
from __future__ import annotations

import traceback


class FlinkbenchError(Exception):
    """Base of every error Flinkbench raises on purpose."""


class ConfigurationError(FlinkbenchError, ValueError):
    """A configuration key is unknown or its value cannot be read as the declared type."""


class SubmissionError(FlinkbenchError, ValueError):
    """A job that cannot be accepted as submitted (graph, configuration, DDL, SQL); the message says why."""


class ClusterError(FlinkbenchError):
    """The cluster cannot serve the request now: unreachable, not the leader, short of slots, a
    TaskManager gone. ``status`` is the HTTP status when a JobManager answered with one."""

    def __init__(self, message: str = "", status: int | None = None):
        super().__init__(message)
        self.status = status


class CheckpointError(FlinkbenchError):
    """A checkpoint or savepoint that did not complete, or checkpoint storage that fails."""


class StorageError(CheckpointError, OSError):
    """Checkpoint storage that cannot be read or written; the message names the URL."""


class RestoreFailed(CheckpointError):
    """A subtask could not read its part of the checkpoint it was deployed to restore (files missing or
    damaged). The JobMaster tells it by this name: a restore point that fails this way in a few restart
    rounds is given up for an older retained one."""


class ConnectorError(FlinkbenchError, ValueError):
    """A connector that is unknown, misconfigured, or cannot read or write its data."""


class UserFunctionError(FlinkbenchError):
    """User code (a map function, a process function, a source) raised; the message has its traceback."""


class JobFailed(FlinkbenchError):
    """The job ended FAILED; the message holds the root cause from ``/jobs/<id>/exceptions``."""

    def __init__(self, job_id: str, cause: str):
        super().__init__(f"job {job_id} failed:\n{cause}")
        self.job_id = job_id
        self.cause = cause


def format_traceback(err: BaseException) -> str:
    """``err`` with its traceback, as Python prints it: what a job's exception history shows."""
    return "".join(traceback.format_exception(type(err), err, err.__traceback__))


def last_line(text: str | None) -> str:
    """The last non-empty line of a traceback or message (``ValueError: bad row``), or ``""``."""
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ""
