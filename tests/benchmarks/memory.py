"""Peak resident memory of a local cluster: every JobManager and TaskManager process with everything it
started (the TaskManagers' Spark JVMs and Python workers), summed, sampled in the background; or of any
process trees (Structured Streaming's driver and its JVM), and of the client.

Two sums: RSS, which counts a page shared by several processes (the JVM's and Python's libraries, the
Spark class archive) once in each, and PSS, which splits each shared page among its sharers: the memory
the cluster takes from the machine."""
from __future__ import annotations

import os
from collections.abc import Callable

from tests.benchmarks.process_trees import Sampler, tree_memory

GIB = 1024 ** 3


def cluster_roots(cluster) -> Callable[[], list[int]]:
    """The pids of a local cluster's living JobManagers and TaskManagers, asked anew at each sample."""
    return lambda: [p.pid for p in [*cluster.jobmanager_processes, *cluster.taskmanagers] if p.alive()]


class PeakRss(Sampler):
    """``with PeakRss(cluster) as peak: ...`` then ``peak.gib`` (RSS) and ``peak.pss_gib``: the largest sums
    seen, sampled every ``interval`` s, of the cluster's process trees, or of the trees whose roots ``roots()``
    names. ``client=True`` adds this process alone (the client that submits jobs and reads their results;
    its children are the cluster, counted already). ``own_cpu_s`` is the CPU the sampling took, which a
    measurement of this process's CPU leaves out."""

    def __init__(self, cluster=None, interval: float = 0.5, roots: Callable[[], list[int]] | None = None,
                 client: bool = False):
        if (cluster is None) == (roots is None):
            raise ValueError("give a cluster or the roots of the process trees to sample, not both")
        super().__init__(interval, "peak-rss")
        self.roots = roots or cluster_roots(cluster)
        self.client = client
        self.peak = self.peak_pss = self.peak_roots = 0

    def sample(self) -> None:
        """The sums now: the largest so far are kept, and the trees' RSS without the client's apart."""
        sums = [tree_memory(pid) for pid in self.roots()]
        self.peak_roots = max(self.peak_roots, sum(rss for rss, _ in sums))
        if self.client:
            sums.append(tree_memory(os.getpid(), children=False))
        self.peak = max(self.peak, sum(rss for rss, _ in sums))
        self.peak_pss = max(self.peak_pss, sum(pss for _, pss in sums))

    @property
    def gib(self) -> float:
        return round(self.peak / GIB, 3)

    @property
    def roots_gib(self) -> float:
        """The trees' peak RSS without the client's."""
        return round(self.peak_roots / GIB, 3)

    @property
    def pss_gib(self) -> float:
        return round(self.peak_pss / GIB, 3)
