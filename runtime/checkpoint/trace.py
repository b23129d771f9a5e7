"""An optional record of every write, rename and delete in checkpoint and HA storage, for fault runs.

With ``FLINKBENCH_STORAGE_TRACE=<file>`` in its environment, each process appends one JSON line per
storage operation — when (wall clock), which process, what, where, under which fencing token (a
JobManager's leader session, or a subtask attempt's checkpoint) and whether its fence refused it — and
one line per leadership taken or attempts superseded. A checker (tests/chaos/storage_audit.py) reads
the lines of every process and counts the operations a process made after it had lost its leadership
or its attempt had been superseded. Without the variable nothing is written and each call costs a
dictionary lookup.

Lines are appended with one ``write`` on a file opened with O_APPEND, short enough to land whole.
"""
from __future__ import annotations

import json
import os
import threading
import time

ENV = "FLINKBENCH_STORAGE_TRACE"
_lock = threading.Lock()


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def record(kind: str, **fields) -> None:
    """Append one line ``{"kind": ..., "t": <wall clock>, "pid": ..., **fields}``; nothing when not tracing.
    A trace that cannot be written is dropped quietly: tracing never fails an operation."""
    path = os.environ.get(ENV)
    if not path:
        return
    line = json.dumps({"kind": kind, "t": fields.pop("t", None) or time.time(), "pid": os.getpid(), **fields},
                      default=str) + "\n"
    try:
        with _lock, open(path, "a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError:
        pass
