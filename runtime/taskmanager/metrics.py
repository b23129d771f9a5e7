"""What a task reports about itself: counters, rates, and where its time goes (busy, idle, backpressured)."""
from __future__ import annotations

import contextlib
import time

from runtime.messages import TaskMetrics


class TaskMetricsTracker:
    """Counters for one task, reported to the JobManager about once a second.

    Time is split as Flink splits it: idle (waiting for input, or a source waiting for data or its
    rate), backpressured (an output waiting for credit; the result partitions count it) and busy
    (everything else), counted from :meth:`start` when the task begins to run."""

    def __init__(self):
        self.records_in = self.records_out = self.bytes_in = self.bytes_out = self.bundles = 0
        self.bundle_time_s = 0.0
        self.watermark: float | None = None
        self._last = (time.monotonic(), 0, 0)
        self.sent_to: dict[str, int] = {}
        self.started: float | None = None
        self.idle_s = 0.0
        self._idle_since: float | None = None
        self._last_times = (0.0, 0.0)  # idle and backpressured seconds at the last report
        self.last_checkpoint: tuple[int | None, float | None, int | None] = (None, None, None)
        self.last_report: TaskMetrics | None = None  # what the TaskManager's Prometheus endpoint shows

    def start(self) -> None:
        self.started = time.monotonic()
        self._last = (self.started, self.records_in, self.records_out)

    @contextlib.contextmanager
    def idle(self):
        """Count the time inside as idle (the task waits for input)."""
        self._idle_since = since = time.monotonic()
        try:
            yield
        finally:
            self.idle_s += time.monotonic() - since
            self._idle_since = None

    def _idle_total(self, now: float) -> float:
        return self.idle_s + (now - self._idle_since if self._idle_since is not None else 0.0)

    def snapshot(self, job_id, attempt_id, backpressure: float, late: int, state_rows: int,
                 blocked_s: float = 0.0) -> TaskMetrics:
        now = time.monotonic()
        then, rin, rout = self._last
        span = max(now - then, 1e-6)
        self._last = (now, self.records_in, self.records_out)
        metrics = TaskMetrics(job_id, attempt_id, self.records_in, self.records_out, self.bytes_in, self.bytes_out,
                              (self.records_in - rin) / span, (self.records_out - rout) / span, backpressure,
                              self.watermark, self.bundle_time_s, self.bundles, dict(self.sent_to), late, state_rows)
        metrics.last_checkpoint_id, metrics.last_checkpoint_duration_s, metrics.last_checkpoint_size = \
            self.last_checkpoint
        if self.started is not None:
            self._fill_times(metrics, now, span, blocked_s)
        self.last_report = metrics
        return metrics

    def _fill_times(self, metrics: TaskMetrics, now: float, span: float, blocked_s: float) -> None:
        idle = self._idle_total(now)
        last_idle, last_blocked = self._last_times
        self._last_times = (idle, blocked_s)
        idle_ms = min(1000.0, max(0.0, 1000.0 * (idle - last_idle) / span))
        blocked_ms = min(1000.0 - idle_ms, max(0.0, 1000.0 * (blocked_s - last_blocked) / span))
        metrics.idle_time_ms_per_s, metrics.backpressured_time_ms_per_s = idle_ms, blocked_ms
        metrics.busy_time_ms_per_s = 1000.0 - idle_ms - blocked_ms
        metrics.accumulated_idle_ms, metrics.accumulated_backpressured_ms = int(idle * 1000), int(blocked_s * 1000)
        metrics.accumulated_busy_ms = max(0, int((now - self.started - idle - blocked_s) * 1000))
