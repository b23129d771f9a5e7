"""Rows a Structured Streaming query processed, counted from its progress reports, batch end to batch end."""
from __future__ import annotations

import datetime
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """Rows processed between two batch ends (epoch seconds)."""
    rows: int
    start: float
    end: float

    @property
    def rate(self) -> float:
        return self.rows / (self.end - self.start)


class MicroBatchRows:
    """Rows a streaming query read in its completed micro-batches, and when each batch ended.

    Micro-batches last seconds (a saturated time-driven source's grow to tens of seconds), so counting
    the rows of the batches that happen to complete inside a fixed window says more about where batch
    ends fall than about speed. ``measure`` measures from one batch end to another instead: the rows of
    the batches in between over the time they took. The query keeps only its last 100 progress reports,
    which a fast query passes within a long measurement: they are merged as they come."""

    def __init__(self, query, interval: float = 0.5):
        self.query, self.interval = query, interval
        self.by_batch: dict[int, tuple[int, float]] = {}  # batch id -> (input rows, end as epoch seconds)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True, name="micro-batch-rows")
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            self._merge()

    def _merge(self) -> None:
        reports = self.query.recentProgress
        with self._lock:
            self.by_batch.update({p["batchId"]: (p["numInputRows"], batch_end(p)) for p in reports})

    def rows(self) -> int:
        self._merge()
        with self._lock:
            return sum(rows for rows, _ in self.by_batch.values())

    def measure(self, warmup: float, measure: float, timeout: float = 300.0) -> Span:
        """The whole batches that ended from ``warmup`` to ``warmup + measure`` seconds from now (waiting on
        for the next batch end if fewer than two ended in that span)."""
        time.sleep(warmup)
        start = time.time()
        time.sleep(measure)
        deadline = time.monotonic() + timeout
        while True:
            self._merge()
            with self._lock:
                span = span_after(list(self.by_batch.values()), start)
            if span is not None:
                return span
            if time.monotonic() > deadline:
                raise TimeoutError(f"no micro-batch ended within {timeout:g} s of the measurement")
            time.sleep(self.interval)

    def sustained(self, warmup: float, measure: float, timeout: float = 300.0) -> float:
        """Rows/s of :meth:`measure`."""
        return self.measure(warmup, measure, timeout).rate

    def wait_first(self, timeout: float = 300.0) -> None:
        """Until a micro-batch with rows completed (the session and its code are warm)."""
        deadline = time.monotonic() + timeout
        while self.rows() == 0:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no micro-batch of the Structured Streaming query completed in {timeout:g} s")
            time.sleep(self.interval)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def span_after(batches: list[tuple[int, float]], start: float) -> Span | None:
    """The rows of the (rows, end) batches that ended after ``start``, timed from the last batch end at or
    before it to the last end; None until a batch ended on each side."""
    ends = sorted((end, rows) for rows, end in batches if rows)
    before = [end for end, _ in ends if end <= start]
    after = [(end, rows) for end, rows in ends if end > start]
    if not before or not after:
        return None
    return Span(sum(rows for _, rows in after), before[-1], after[-1][0])


def rate_after(batches: list[tuple[int, float]], start: float) -> float | None:
    """Rows/s of :func:`span_after`."""
    span = span_after(batches, start)
    return None if span is None else span.rate


def batch_end(progress: dict) -> float:
    """When a micro-batch ended (epoch seconds): its trigger's start plus the trigger's duration."""
    started = datetime.datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp()
    return started + progress["durationMs"]["triggerExecution"] / 1000.0
