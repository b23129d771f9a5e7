"""Watermarks inside a task: made from observed event times, and combined across input channels.

All times are int64 microseconds since the epoch. A watermark ``w`` promises that no more rows with
event time ``<= w`` are expected (Flink's convention), so a window [start, end) fires at ``end - 1``.
"""
from __future__ import annotations

import time

from runtime.taskmanager.window_operator import BEFORE_TIME, END_OF_TIME


class BoundedOutOfOrderness:
    """Watermark = largest event time seen - allowed out-of-orderness - 1, never going back."""

    def __init__(self, lag_us: int, idle_us: int | None = None):
        self.lag_us = lag_us
        self.idle_us = idle_us
        self.max_seen = BEFORE_TIME
        self._last_rows_at = time.monotonic()

    def observe(self, max_event_time_us: int | None) -> None:
        if max_event_time_us is None:
            return
        self._last_rows_at = time.monotonic()
        self.max_seen = max(self.max_seen, int(max_event_time_us))

    @property
    def current(self) -> int:
        if self.max_seen == BEFORE_TIME:
            return BEFORE_TIME
        return self.max_seen - self.lag_us - 1

    def is_idle(self) -> bool:
        return self.idle_us is not None and (time.monotonic() - self._last_rows_at) * 1e6 >= self.idle_us


class WatermarkValve:
    """The watermark of a task with several input channels: the minimum over channels that are active.

    Finished channels count as the end of time; idle channels are left out until they send again, and
    when every channel is idle the valve holds its last value.
    """

    def __init__(self, channels: int):
        self.per_channel = [BEFORE_TIME] * channels
        self.idle = [False] * channels
        self.current = BEFORE_TIME

    def update(self, channel: int, watermark: int) -> int | None:
        """Record ``channel``'s watermark; returns the task's new watermark if it advanced."""
        self.idle[channel] = False
        self.per_channel[channel] = max(self.per_channel[channel], watermark)
        return self._recompute()

    def mark_idle(self, channel: int) -> int | None:
        self.idle[channel] = True
        return self._recompute()

    def mark_active(self, channel: int) -> None:
        self.idle[channel] = False

    def finish(self, channel: int) -> int | None:
        return self.update(channel, END_OF_TIME)

    def _recompute(self) -> int | None:
        active = [w for w, idle in zip(self.per_channel, self.idle) if not idle]
        if not active:
            return None
        candidate = min(active)
        if candidate > self.current:
            self.current = candidate
            return candidate
        return None


def to_wire(watermark_us: int) -> float:
    """A watermark in microseconds as the seconds a Watermark message carries."""
    return watermark_us / 1e6


def from_wire(seconds: float) -> int:
    """A Watermark message's seconds as microseconds (the inverse of to_wire)."""
    return int(round(seconds * 1e6))
