"""A process and what it started, as the benchmark counts them: the memory and CPU of each side's process trees.

A local cluster's JobManagers and TaskManagers, or Structured Streaming's driver, are the roots; their Spark
JVMs and Python workers are their descendants. A process that ends while it is read is left out of the sum.
Samplers read them in the background.
"""
from __future__ import annotations

import threading
import time

import psutil


def tree(pid: int, children: bool = True) -> list[psutil.Process]:
    """The process and (``children``) its living descendants; empty once it is gone."""
    try:
        root = psutil.Process(pid)
        return [root, *(root.children(recursive=True) if children else [])]
    except psutil.Error:
        return []


def tree_memory(pid: int, children: bool = True) -> tuple[int, int]:
    """RSS and PSS of the tree, in bytes ((0, 0) once it is gone). RSS counts a page shared by several
    processes once in each; PSS splits it among its sharers."""
    rss = pss = 0
    for proc in tree(pid, children):
        try:
            info = proc.memory_full_info()
        except psutil.Error:
            continue
        rss, pss = rss + info.rss, pss + info.pss
    return rss, pss


def tree_cpu_seconds(pid: int, children: bool = True) -> float:
    """User + system CPU seconds of the tree's living processes; 0 once it is gone."""
    used = 0.0
    for proc in tree(pid, children):
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        used += times.user + times.system
    return used


class Sampler:
    """Calls :meth:`sample` every ``interval`` s on a thread of its own inside a ``with`` block, and once more on
    leaving it. ``own_cpu_s`` is the CPU its thread took sampling, which a measurement of the process it runs in
    leaves out."""

    def __init__(self, interval: float, name: str):
        self.interval = interval
        self.own_cpu_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)

    def sample(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while True:
            started = time.thread_time()
            self.sample()
            self.own_cpu_s += time.thread_time() - started
            if self._stop.wait(self.interval):
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()
