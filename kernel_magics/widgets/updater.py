"""ViewUpdater: the one thread per kernel that changes live views, at most ``1/interval`` times a second.

A Bokeh document must be changed from one thread at a time, and a jupyter_bokeh widget sends each
change as several comm messages that must not interleave; so every live view (a job's view, a
cluster dashboard) is refreshed here and nowhere else once it is shown. The event stream and result
readers only wake this thread; they never touch a view.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Protocol

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 0.2  # five redraws a second at most
IDLE_WAKE_S = 1.0  # redraw clocks (in-progress checkpoints, durations) even without events


class LiveView(Protocol):
    def refresh(self) -> bool:
        """Redraw from the current state; return False once the view is final and needs no more updates."""


class ViewUpdater:
    def __init__(self, interval: float = DEFAULT_INTERVAL_S):
        self.interval = interval
        self._views: list[LiveView] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._cycles = 0
        self._flushes = 0
        self._cycle_done = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="flinkbench-views", daemon=True)
        self._thread.start()

    def add(self, view: LiveView) -> None:
        with self._lock:
            self._views.append(view)
        self._wake.set()

    def remove(self, view: LiveView) -> None:
        with self._lock:
            if view in self._views:
                self._views.remove(view)

    def views(self) -> list[LiveView]:
        with self._lock:
            return list(self._views)

    def poke(self) -> None:
        """Ask for a redraw soon (called from any thread)."""
        self._wake.set()

    def flush(self, timeout: float = 5.0) -> bool:
        """Block until a whole refresh pass has run after this call (so views show what is known now)."""
        with self._cycle_done:
            target = self._cycles + 2  # the pass under way may have started before the call
            self._flushes += 1
            self._wake.set()
            try:
                return self._cycle_done.wait_for(lambda: self._cycles >= target or self._closed.is_set(), timeout)
            finally:
                self._flushes -= 1

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        if self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        while not self._closed.is_set():
            self._wake.wait(IDLE_WAKE_S)
            self._wake.clear()
            if self._closed.is_set():
                return
            started = time.monotonic()
            for view in self.views():
                try:
                    keep = view.refresh()
                except Exception:
                    log.exception("a live view failed to refresh; it stops updating")
                    keep = False
                if not keep:
                    self.remove(view)
            with self._cycle_done:
                self._cycles += 1
                self._cycle_done.notify_all()
                flushing = self._flushes > 0
                if flushing:
                    self._wake.set()  # a flush is waiting for one more pass
            if not flushing:  # a cell waiting for its view's last state is not held back by the redraw limit
                self._closed.wait(max(0.0, self.interval - (time.monotonic() - started)))
