"""Peak resident memory of a local cluster: every JobManager and TaskManager process with everything it
started (the TaskManagers' Spark JVMs and Python workers), summed, sampled in the background.

Two sums: RSS, which counts a page shared by several processes (the JVM's and Python's libraries, the
Spark class archive) once in each, and PSS, which splits each shared page among its sharers: the memory
the cluster takes from the machine."""
from __future__ import annotations

import threading

import psutil

GIB = 1024 ** 3


def tree_memory(pid: int) -> tuple[int, int]:
    """RSS and PSS of a process and all its descendants, in bytes ((0, 0) once it is gone)."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0, 0
    rss = pss = 0
    for proc in procs:
        try:
            info = proc.memory_full_info()
        except psutil.Error:
            continue
        rss, pss = rss + info.rss, pss + info.pss
    return rss, pss


class PeakRss:
    """``with PeakRss(cluster) as peak: ...`` then ``peak.gib`` (RSS) and ``peak.pss_gib``: the largest sums
    seen, sampled every ``interval`` s."""

    def __init__(self, cluster, interval: float = 0.5):
        self.cluster, self.interval = cluster, interval
        self.peak = self.peak_pss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="peak-rss")

    def sample(self) -> tuple[int, int]:
        processes = [*self.cluster.jobmanager_processes, *self.cluster.taskmanagers]
        sums = [tree_memory(p.pid) for p in processes if p.alive()]
        return sum(rss for rss, _ in sums), sum(pss for _, pss in sums)

    def _run(self) -> None:
        while not self._stop.is_set():
            rss, pss = self.sample()
            self.peak, self.peak_pss = max(self.peak, rss), max(self.peak_pss, pss)
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

    @property
    def pss_gib(self) -> float:
        return round(self.peak_pss / GIB, 3)
