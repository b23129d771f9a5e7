"""Peak resident memory of a local cluster: every JobManager and TaskManager process with everything it
started (the TaskManagers' Spark JVMs and Python workers), summed, sampled in the background."""
from __future__ import annotations

import threading

import psutil

GIB = 1024 ** 3


def tree_rss(pid: int) -> int:
    """RSS of a process and all its descendants, in bytes (0 once it is gone)."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for proc in procs:
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            continue
    return total


class PeakRss:
    """``with PeakRss(cluster) as peak: ...`` then ``peak.gib``: the largest sum seen, every ``interval`` s."""

    def __init__(self, cluster, interval: float = 0.5):
        self.cluster, self.interval = cluster, interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="peak-rss")

    def sample(self) -> int:
        processes = [*self.cluster.jobmanager_processes, *self.cluster.taskmanagers]
        return sum(tree_rss(p.pid) for p in processes if p.alive())

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.sample())
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def gib(self) -> float:
        return round(self.peak / GIB, 3)
