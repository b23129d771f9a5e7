"""What a TaskManager says about itself every few heartbeats: memory, hardware, its Spark JVM, log lines.

A TaskManager's JVM is its Spark driver's, so the ``Status.JVM.*`` metrics Flink's TaskManagers report
(heap, non-heap, metaspace, direct and mapped buffers, threads, garbage collectors, classes) are read from
that JVM's management beans through py4j, under Flink's names; a Spark Connect session has no JVM here
and reports none. (CPU load is left out: the JDK's operating-system bean is a class py4j may not call.)
The JobManager keeps the latest report for the TaskManager's REST views
(``/taskmanagers/:id``, ``/taskmanagers/:id/metrics``) and its dashboard page.

Everything here blocks (py4j round trips, /proc): call from an executor thread, never the loop.
"""
from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import Executor
from urllib.parse import urlsplit

from runtime.ids import TaskManagerId
from runtime.messages import TaskManagerStatus
from runtime.process_info import LogTail, rss_bytes

log = logging.getLogger(__name__)

HEAP, NON_HEAP, METASPACE = "Status.JVM.Memory.Heap", "Status.JVM.Memory.NonHeap", "Status.JVM.Memory.Metaspace"


def hardware() -> dict[str, int]:
    """Flink's HardwareDescription of this machine: cores and physical memory (bytes)."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        physical = -1
    return {"cpuCores": os.cpu_count() or 1, "physicalMemory": physical}


def _usage(prefix: str, usage) -> dict[str, float]:
    return {f"{prefix}.Used": usage.getUsed(), f"{prefix}.Committed": usage.getCommitted(),
            f"{prefix}.Max": usage.getMax()}


def jvm_metrics(session) -> dict[str, float]:
    """The ``Status.JVM.*`` metrics of a classic session's driver JVM; none for Spark Connect or a JVM
    that does not answer (a status report must never fail the TaskManager)."""
    context = getattr(session, "sparkContext", None)
    jvm = getattr(context, "_jvm", None) if context is not None else None
    if jvm is None:
        return {}
    try:
        return _read(jvm.java.lang.management.ManagementFactory, jvm)
    except Exception as err:  # noqa: BLE001 - a JVM going away between two reports
        log.debug("could not read the Spark JVM's metrics: %s", err)
        return {}


def spark_ui_url(session, host: str) -> str | None:
    """Where the JobManager reaches this TaskManager's Spark UI (its driver's, when ``spark.ui.enabled``): the
    port the UI bound, at the host the TaskManager advertises; None without a UI or for Spark Connect."""
    context = getattr(session, "sparkContext", None)
    try:
        url = context.uiWebUrl if context is not None else None
    except Exception as err:  # noqa: BLE001 - a JVM going away between two reports
        log.debug("could not read the Spark UI's address: %s", err)
        return None
    return f"http://{host}:{urlsplit(url).port}" if url and urlsplit(url).port else None


def _read(beans, jvm) -> dict[str, float]:
    memory = beans.getMemoryMXBean()
    out = {**_usage(HEAP, memory.getHeapMemoryUsage()), **_usage(NON_HEAP, memory.getNonHeapMemoryUsage())}
    for pool in beans.getMemoryPoolMXBeans():
        if pool.getName() == "Metaspace":
            out.update(_usage(METASPACE, pool.getUsage()))
    buffer_beans = jvm.java.lang.Class.forName("java.lang.management.BufferPoolMXBean")
    for pool in beans.getPlatformMXBeans(buffer_beans):
        if pool.getName() in ("direct", "mapped"):
            prefix = f"Status.JVM.Memory.{pool.getName().capitalize()}"
            out.update({f"{prefix}.Count": pool.getCount(), f"{prefix}.MemoryUsed": pool.getMemoryUsed(),
                        f"{prefix}.TotalCapacity": pool.getTotalCapacity()})
    for gc in beans.getGarbageCollectorMXBeans():
        name = gc.getName().replace(" ", "_")
        out[f"Status.JVM.GarbageCollector.{name}.Count"] = gc.getCollectionCount()
        out[f"Status.JVM.GarbageCollector.{name}.Time"] = gc.getCollectionTime()
    out["Status.JVM.Threads.Count"] = beans.getThreadMXBean().getThreadCount()
    out["Status.JVM.ClassLoader.ClassesLoaded"] = beans.getClassLoadingMXBean().getLoadedClassCount()
    return {name: float(value) for name, value in out.items()}


class StatusReporter:
    """Reads a TaskManager's status in a pool thread, so that the control endpoint's cadence (every few
    heartbeats) never waits for the Spark JVM: :meth:`current` hands over the latest read and starts the next.

    ``keeper`` is its Spark session keeper (runtime.taskmanager.spark_session): asked for the session only
    if one is up, never to start one."""

    def __init__(self, tm_id: TaskManagerId, driver_memory: str, keeper, log_tail: LogTail):
        self.tm_id, self.driver_memory, self.keeper, self.log_tail = tm_id, driver_memory, keeper, log_tail
        self._latest: TaskManagerStatus | None = None
        self._reading = False

    def report(self) -> TaskManagerStatus:
        """The status now (blocks: /proc and py4j)."""
        session = self.keeper.current()
        return TaskManagerStatus(self.tm_id, rss_bytes(), self.driver_memory, self.log_tail.lines(), hardware(),
                                 jvm_metrics(session) if session is not None else {},
                                 spark_ui_url(session, self.keeper.advertised_host) if session is not None else None)

    def current(self, loop: asyncio.AbstractEventLoop, executor: Executor) -> TaskManagerStatus:
        """On the loop: the latest status read (before the first, one without its JVM's), and the next read started."""
        if not self._reading:
            self._reading = True
            loop.run_in_executor(executor, self.report).add_done_callback(self._read)
        return self._latest or TaskManagerStatus(self.tm_id, rss_bytes(), self.driver_memory, self.log_tail.lines(),
                                                 hardware())

    def _read(self, done) -> None:
        self._reading = False
        if not done.cancelled() and done.exception() is None:
            self._latest = done.result()
