"""What a task reports about itself: counters, rates, and where its time goes (busy, idle, backpressured,
and per phase of a bundle's path)."""
from __future__ import annotations

import collections
import contextlib
import threading
import time

from runtime.messages import TaskMetrics


#: The phases of a bundle's path a task times (:class:`PhaseTimes`), with the Flink metric closest to each.
PHASES = {
    "schedule_wait": "a blocking step waiting for a thread of the TaskManager's pool (Flink: mailboxLatencyMs)",
    "input_wait": "a buffer waiting in the input gate until the task takes it up (Flink: none; inPoolUsage)",
    "source_plan": "a source reader cutting its next bundle into a Spark plan",
    "spark_action": "a Spark stage's one action: in a source task the read, stateless operators and "
                    "pre-aggregation together, as one plan",
    "spark_driver": "the part of spark_action Spark's driver spent analysing, optimising and planning the query, "
                    "outside any stage (its optimizer may compute a bundle's projection there: ConvertToLocalRelation)",
    "window_merge": "a stateful operator merging a bundle into its keyed state",
    "window_fire": "stateful operators firing for a watermark or timer (Flink: none)",
    "exchange_send": "splitting output by key group and queueing it for consumers, waiting for credit included "
                     "(Flink: backPressuredTimeMsPerSecond)",
    "sink_write": "a sink writer taking a bundle (collect: handing it to the JobManager)",
}


class PhaseTimes:
    """Seconds spent per phase: a running total, a count, and the longest since the last report.

    Phases are timed from the TaskManager's loop and from pool threads alike, hence the lock."""

    def __init__(self):
        self.total_s: dict[str, float] = {}
        self.count: dict[str, int] = {}
        self.max_s: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, name: str, seconds: float) -> None:
        with self._lock:
            self.total_s[name] = self.total_s.get(name, 0.0) + seconds
            self.count[name] = self.count.get(name, 0) + 1
            self.max_s[name] = max(self.max_s.get(name, 0.0), seconds)

    @contextlib.contextmanager
    def phase(self, name: str):
        """Count the time inside as ``name``."""
        t0 = time.monotonic()
        try:
            yield
        finally:
            self.add(name, time.monotonic() - t0)

    def report(self) -> tuple[dict[str, float], dict[str, int], dict[str, float]]:
        """Totals, counts, and the longest of each phase since the previous report (which this resets)."""
        with self._lock:
            worst, self.max_s = self.max_s, {}
            return ({k: round(v, 6) for k, v in self.total_s.items()}, dict(self.count),
                    {k: round(v, 6) for k, v in worst.items()})


#: Busy, idle and backpressured time per second are averages over the last this many seconds, as Flink's TimerGauge
#: averages them (over 60 s there; 10 s here, so that the job graph's hint follows a change within seconds): a
#: rate-limited source reading one bundle every two seconds is not 100 % busy in each second that holds a bundle.
TIME_SPAN_S = 10.0


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
        self._times: collections.deque = collections.deque()  # (when, idle s, backpressured s) of recent reports
        self.last_checkpoint: tuple[int | None, float | None, int | None] = (None, None, None)
        self.last_report: TaskMetrics | None = None  # what the TaskManager's Prometheus endpoint shows
        self.phases = PhaseTimes()
        self.pending_records: int | None = None  # a rate-limited source: rows due but not yet read

    def start(self) -> None:
        self.started = time.monotonic()
        self._last = (self.started, self.records_in, self.records_out)
        self._times = collections.deque([(self.started, 0.0, 0.0)])

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
        metrics.phase_s, metrics.phase_count, metrics.phase_max_s = self.phases.report()
        metrics.pending_records = self.pending_records
        if self.started is not None:
            self._fill_times(metrics, now, blocked_s)
        self.last_report = metrics
        return metrics

    def _fill_times(self, metrics: TaskMetrics, now: float, blocked_s: float) -> None:
        """Time per second over the last TIME_SPAN_S (from the oldest report within it), and the totals."""
        idle = self._idle_total(now)
        self._times.append((now, idle, blocked_s))
        while len(self._times) > 2 and now - self._times[1][0] >= TIME_SPAN_S:
            self._times.popleft()
        then, last_idle, last_blocked = self._times[0]
        span = max(now - then, 1e-6)
        idle_ms = min(1000.0, max(0.0, 1000.0 * (idle - last_idle) / span))
        blocked_ms = min(1000.0 - idle_ms, max(0.0, 1000.0 * (blocked_s - last_blocked) / span))
        metrics.idle_time_ms_per_s, metrics.backpressured_time_ms_per_s = idle_ms, blocked_ms
        metrics.busy_time_ms_per_s = 1000.0 - idle_ms - blocked_ms
        metrics.accumulated_idle_ms, metrics.accumulated_backpressured_ms = int(idle * 1000), int(blocked_s * 1000)
        metrics.accumulated_busy_ms = max(0, int((now - self.started - idle - blocked_s) * 1000))
