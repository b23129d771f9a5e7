"""A process's own log files, as Flink's log endpoints serve them (``/jobmanager/logs``, ``.../log``,
``.../stdout``, and the same per TaskManager).

A Flinkbench process logs to its standard error; whoever starts it (``flinkbench cluster start``,
``LocalCluster``, the local resource provider) sends that to ``<working dir>/<name>.log``. The log file is
therefore the file this process's stderr is open on, its stdout file the one stdout is open on (the print
sink writes there, as in Flink's ``.out`` file; the same file when both go to one), and the listing adds
the rotated files beside the log (``<log>.1`` ...). A process whose output goes to a terminal or a pipe has
no log file: asking for it is an error that says so. Only listed names can be read, so a name from a
request never reaches the file system as a path.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

MAX_BYTES = 8 << 20  # a log is served from its end: at most this much of it


class NoLogFile(LookupError):
    """The log file asked for does not exist (or this process writes its output to no file)."""


@dataclass(frozen=True)
class LogFile:
    name: str
    size: int
    mtime_ms: int


def _file_of(fd: int) -> str | None:
    """The regular file ``fd`` is open on, or None (a terminal, a pipe, no /proc)."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return target if os.path.isfile(target) else None


def log_path() -> str | None:
    return _file_of(2)


def stdout_path() -> str | None:
    return _file_of(1)


def _candidates() -> dict[str, str]:
    """Every file a client may read, by name: the log, its rotations, the stdout file."""
    found: dict[str, str] = {}
    log = log_path()
    if log is not None:
        folder, base = os.path.split(log)
        for name in sorted(os.listdir(folder)):
            if name == base or (name.startswith(base + ".") and name[len(base) + 1:].isdigit()):
                found[name] = os.path.join(folder, name)
    out = stdout_path()
    if out is not None:
        found.setdefault(os.path.basename(out), out)
    return found


def listing() -> list[LogFile]:
    out = []
    for name, path in _candidates().items():
        try:
            stat = os.stat(path)
        except OSError:
            continue
        out.append(LogFile(name, stat.st_size, int(stat.st_mtime * 1000)))
    return out


def read(name: str | None, what: str = "log", limit: int = MAX_BYTES) -> bytes:
    """The end (``limit`` bytes) of the file called ``name``, or with None of the log itself. NoLogFile
    names what is missing; ``what`` says whose log it is in that message."""
    path = _candidates().get(name) if name is not None else log_path()
    if path is None:
        if name is None:
            raise NoLogFile(f"this {what} writes its log to a terminal or a pipe, not to a file "
                            "(flinkbench cluster start and LocalCluster give each process a log file)")
        raise NoLogFile(f"this {what} has no log file called {name!r}; GET its logs list for the names")
    return tail(path, limit)


def read_stdout(what: str = "log", limit: int = MAX_BYTES) -> bytes:
    path = stdout_path()
    if path is None:
        raise NoLogFile(f"this {what} writes its standard output to a terminal or a pipe, not to a file")
    return tail(path, limit)


def tail(path: str, limit: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - limit))
            data = fh.read(limit)
    except OSError as err:
        raise NoLogFile(f"cannot read {os.path.basename(path)}: {err.strerror}") from None
    if size > limit:  # start at a line, and say what was left out
        data = f"[... the first {size - limit} bytes are not shown]\n".encode() + data[data.find(b"\n") + 1:]
    return data
