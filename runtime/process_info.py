"""What a process can say about itself for the dashboard (its recent log lines and its memory), and whether
another process still runs."""
from __future__ import annotations

import collections
import glob
import logging
import os
import resource
import threading

LOG_LINES = 300


class LogTail(logging.Handler):
    """The last ``capacity`` log records of this process, formatted (add it to the root logger)."""

    def __init__(self, capacity: int = LOG_LINES):
        super().__init__(logging.INFO)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self._lines: collections.deque[str] = collections.deque(maxlen=capacity)
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # noqa: BLE001 - a record that does not format must not break logging
            return
        with self._guard:
            self._lines.append(line)

    def lines(self) -> list[str]:
        with self._guard:
            return list(self._lines)


def _rss_of(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def rss_bytes() -> int:
    """Resident memory of this process and its children (a TaskManager's Spark JVM is one), in bytes."""
    own = _rss_of("self")
    if not own:  # no /proc: the peak is what the OS tells
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    children: set[str] = set()
    for path in glob.glob("/proc/self/task/*/children"):
        try:
            with open(path, encoding="ascii") as fh:
                children.update(fh.read().split())
        except OSError:
            continue
    return own + sum(_rss_of(pid) for pid in children)


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs: it exists and is not a zombie (dead, its parent not having reaped it yet)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
