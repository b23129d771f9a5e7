"""CPU a side of the benchmark used: its processes' trees summed, and what the rest of the machine used meanwhile.

Rows per CPU-second need the CPU of every process a side runs (Flinkbench: the client, the JobManager, the
TaskManagers, their Spark JVMs and Python workers; Structured Streaming: its driver's Python process, its JVM
and workers) over exactly the span whose rows are counted. Structured Streaming's span runs from one batch
end to another, known only afterwards, so CPU is sampled as a series and read between two instants by
interpolation. The machine's busy time less the side's is the CPU others used meanwhile: a run on a loaded
machine says so in its figures.
"""
from __future__ import annotations

import bisect
import os
import threading
import time

import psutil

from tests.benchmarks.process_trees import Sampler



def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent on anything but idling, over all cores, since boot."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def between(samples: list[tuple[float, float]], start: float, end: float) -> float | None:
    """How much a cumulative quantity sampled as (time, value) grew from ``start`` to ``end``, interpolated
    between the samples around each instant; None when the samples do not cover both."""
    if not samples or start < samples[0][0] or end > samples[-1][0] or end < start:
        return None
    return _at(samples, end) - _at(samples, start)


def _at(samples: list[tuple[float, float]], t: float) -> float:
    times = [s[0] for s in samples]
    i = bisect.bisect_left(times, t)
    if i < len(samples) and samples[i][0] == t:
        return samples[i][1]
    (t0, v0), (t1, v1) = samples[i - 1], samples[i]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def others_share(machine_busy: float | None, side_cpu: float | None, seconds: float, cores: int) -> float | None:
    """The share of the machine's cores that other processes kept busy during a span of ``seconds``."""
    if machine_busy is None or side_cpu is None or seconds <= 0:
        return None
    return max(0.0, machine_busy - side_cpu) / (seconds * cores)


class CpuSeries(Sampler):
    """Samples, every ``interval`` s on a thread of its own, the CPU of a process tree (``cpu()``) and of the
    machine, with wall-clock times; read spans with :meth:`side` and :meth:`machine`. The sampling thread runs
    inside the measured process (the client, or Structured Streaming's driver): its own CPU is left out."""

    def __init__(self, cpu, interval: float = 0.5):
        super().__init__(interval, "cpu-series")
        self.cpu = cpu
        self._samples: list[tuple[float, float, float]] = []
        self._lock = threading.Lock()

    def sample(self) -> None:
        point = (time.time(), self.cpu() - self.own_cpu_s, machine_busy_seconds())
        with self._lock:
            self._samples.append(point)

    def side(self, start: float, end: float) -> float | None:
        with self._lock:
            return between([(t, c) for t, c, _ in self._samples], start, end)

    def machine(self, start: float, end: float) -> float | None:
        with self._lock:
            return between([(t, m) for t, _, m in self._samples], start, end)


def span_figures(rows: int, start: float, end: float, cpu: CpuSeries) -> dict:
    """Rows/s and rows per CPU-second of a side over a span (epoch seconds), with the share of the machine's
    cores that others kept busy meanwhile."""
    seconds = end - start
    used = cpu.side(start, end)
    return {"rows": rows, "seconds": round(seconds, 3), "rows_per_s": round(rows / seconds),
            "cpu_s": None if used is None else round(used, 2),
            "rows_per_cpu_s": None if not used else round(rows / used), "others_share": others_during(cpu, start, end)}


def others_during(cpu: CpuSeries, start: float, end: float) -> float | None:
    """The share of the machine's cores that others kept busy from ``start`` to ``end`` (rounded)."""
    others = others_share(cpu.machine(start, end), cpu.side(start, end), end - start, os.cpu_count() or 1)
    return None if others is None else round(others, 3)
