"""Asynchronous operations a REST client triggers and then polls by trigger id (Flink's
CompletedOperationCache): savepoints, manual checkpoints, savepoint disposal.

An operation is IN_PROGRESS until its future settles, then COMPLETED with a result or a failure. The
oldest entries are forgotten beyond ``max_entries``, so a long-lived JobManager does not grow.
"""
from __future__ import annotations

import asyncio
from typing import Any
from collections.abc import Callable

from runtime.ids import TriggerId
from runtime.snapshots import OperationState, OperationStatus

MAX_ENTRIES = 1000


class OperationCache:
    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = max_entries
        self._ops: dict[TriggerId, OperationStatus] = {}

    def track(self, future: asyncio.Future, result_of: Callable[[Any], str | int | None]) -> TriggerId:
        """A new trigger id for ``future``; once it settles, its status holds ``result_of(value)`` or the
        exception's text."""
        trigger_id = self._add(OperationStatus(OperationState.IN_PROGRESS))

        def settled(fut: asyncio.Future) -> None:
            if fut.cancelled():
                self._ops[trigger_id] = OperationStatus(OperationState.COMPLETED, failure="the operation was cancelled")
            elif fut.exception() is not None:
                self._ops[trigger_id] = OperationStatus(OperationState.COMPLETED, failure=str(fut.exception()))
            else:
                self._ops[trigger_id] = OperationStatus(OperationState.COMPLETED, result=result_of(fut.result()))
        future.add_done_callback(settled)
        return trigger_id

    def failed(self, reason: str) -> TriggerId:
        """A trigger id for an operation that failed before it started."""
        return self._add(OperationStatus(OperationState.COMPLETED, failure=reason))

    def status(self, trigger_id: str) -> OperationStatus | None:
        return self._ops.get(trigger_id)  # type: ignore[call-overload]

    def _add(self, status: OperationStatus) -> TriggerId:
        trigger_id = TriggerId.new()
        self._ops[trigger_id] = status
        while len(self._ops) > self.max_entries:
            del self._ops[next(iter(self._ops))]
        return trigger_id
