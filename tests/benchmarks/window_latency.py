"""Window latency as a user sees it: the time each window fire reaches the client, less the window's end.

A window is counted when its last row arrives (the client has the whole window then), and it is whole when
every user of the job has a row in it: the latency job sizes its users so that each expects many rows per
window (:func:`users_for_rate`), so a user missing from a window after its later windows arrived is as
good as impossible. A measured span is the windows that start after the warm-up and end before the
measurement's end; the reader reads on until each of them is whole (a stalled window is waited for, not
dropped) or a stall limit passes, and windows still missing then are reported as such. Pure: times are
handed in.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

ROWS_PER_USER = 30  # rows each user expects per window: P(a user has none) = e^-30


def users_for_rate(rate: float, window_s: float, passing: float, most: int) -> int:
    """How many users the latency job may have at ``rate`` rows/s so that each expects ROWS_PER_USER rows
    in every window (``passing`` of the rows get past the job's filter); at most ``most``, at least 1."""
    return max(1, min(most, int(rate * window_s * passing / ROWS_PER_USER)))


def span_window_ends(start: float, end: float, window_s: float) -> list[float]:
    """Ends of the tumbling windows (aligned on multiples of ``window_s`` since the epoch) that start at or
    after ``start`` and end at or before ``end``."""
    first_start = math.ceil(start / window_s) * window_s
    ends = []
    window_end = first_start + window_s
    while window_end <= end + 1e-9:
        ends.append(round(window_end, 6))
        window_end += window_s
    return ends


def epoch_seconds(column) -> list[float]:
    """A timestamp column as epoch seconds: an instant's, or a wall time's read in UTC (both engines' sessions
    run in UTC)."""
    micros = pc.cast(pc.cast(column, pa.timestamp("us", tz=column.type.tz)), pa.int64())
    return [m / 1e6 for m in micros.to_pylist()]


class WindowArrivals:
    """What arrived of each window, by window end: the users seen and when the last of them came."""

    def __init__(self, users: int):
        self.users = users
        self._seen: dict[float, set[int]] = {}
        self._completed: dict[float, float] = {}
        self._first: dict[float, float] = {}

    def add(self, received: float, window_ends: Iterable[float], users: Iterable[int]) -> None:
        """Rows received at ``received`` (epoch seconds): the end of each one's window and its user."""
        for window_end, user in zip(window_ends, users):
            window_end = round(window_end, 6)
            self._first.setdefault(window_end, received)
            if window_end in self._completed:
                continue
            seen = self._seen.setdefault(window_end, set())
            seen.add(user)
            if len(seen) >= self.users:
                self._completed[window_end] = received
                del self._seen[window_end]

    def complete(self, window_ends: list[float]) -> bool:
        return all(round(e, 6) in self._completed for e in window_ends)

    def missing(self, window_ends: list[float]) -> list[float]:
        """Windows of ``window_ends`` not whole yet."""
        return [e for e in window_ends if round(e, 6) not in self._completed]

    def latencies(self, window_ends: list[float]) -> list[float]:
        """Seconds from each whole window's end to its last row's arrival, in window order."""
        return [self._completed[round(e, 6)] - e for e in window_ends if round(e, 6) in self._completed]

    def first_row_latencies(self, window_ends: list[float]) -> list[float]:
        """Seconds from each window's end to the arrival of its first row."""
        return [self._first[round(e, 6)] - e for e in window_ends if round(e, 6) in self._first]

    def ends_seen(self) -> list[float]:
        return sorted(self._first)


def summary(latencies: list[float], expected: int) -> dict:
    """Median, min and max over the windows, how many arrived whole of how many expected, and each one."""
    ordered = sorted(latencies)
    median = None
    if ordered:
        mid = len(ordered) // 2
        median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return {"windows": len(latencies), "windows_expected": expected,
            "median_s": None if median is None else round(median, 3),
            "min_s": round(ordered[0], 3) if ordered else None, "max_s": round(ordered[-1], 3) if ordered else None,
            "per_window_s": [round(v, 3) for v in latencies]}
