"""Fan-out of JobManager events to every WebSocket subscriber and in-process listener.

Runs on the JobManager's loop. Each subscriber has a bounded queue; one that falls too far behind is
dropped (it reconnects and gets a fresh snapshot) instead of growing memory without bound.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import Any
from collections.abc import Callable

from runtime.codec import to_plain

log = logging.getLogger(__name__)

SUBSCRIBER_QUEUE = 10_000
HISTORY = 2_000


class Subscription:
    """One reader of the event stream: a bounded queue of the events published since it subscribed."""
    def __init__(self, bus: EventBus):
        self._bus = bus
        self.seq = bus.seq  # the last event published before this subscription: it sees every later one
        self.queue: asyncio.Queue[dict | None] = asyncio.Queue(SUBSCRIBER_QUEUE)

    async def next(self) -> dict | None:
        """The next event, or None when the bus dropped this subscriber or closed."""
        return await self.queue.get()

    def close(self) -> None:
        self._bus._subscribers.discard(self)


class EventBus:
    """Fans the JobManager's events out to every subscriber of /events, keeping a short history for late readers."""
    def __init__(self):
        self._seq = 0
        self._subscribers: set[Subscription] = set()
        self._listeners: list[Callable[[dict], Any]] = []
        self.history: collections.deque[dict] = collections.deque(maxlen=HISTORY)

    def publish(self, event: Any) -> dict:
        self._seq += 1
        record = to_plain(event)
        record["seq"] = self._seq
        record["ts"] = time.time()
        self.history.append(record)
        for sub in list(self._subscribers):
            try:
                sub.queue.put_nowait(record)
            except asyncio.QueueFull:
                log.warning("dropping an event subscriber that fell %d events behind", SUBSCRIBER_QUEUE)
                self._subscribers.discard(sub)
                sub.queue = asyncio.Queue(1)
                sub.queue.put_nowait(None)
        for listener in list(self._listeners):
            listener(record)
        return record

    @property
    def seq(self) -> int:
        return self._seq

    def subscribe(self) -> Subscription:
        sub = Subscription(self)
        self._subscribers.add(sub)
        return sub

    def add_listener(self, fn: Callable[[dict], Any]) -> None:
        self._listeners.append(fn)

    def remove_listener(self, fn: Callable[[dict], Any]) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def close(self) -> None:
        for sub in list(self._subscribers):
            try:
                sub.queue.put_nowait(None)
            except asyncio.QueueFull:
                pass
        self._subscribers.clear()
