"""Keyed state and timers of one subtask, held by (key group, key) so checkpoints can be split on rescale.

State is Python values per key and state name; timers are (timestamp, key) pairs per time domain. A
snapshot is one Arrow table, one row per state value or timer, carrying the key group, so a subtask
restored at another parallelism keeps exactly the rows of the key groups it now owns. Keys and values
travel cloudpickled. Everything here runs on the task's executor thread (between bundles), never
concurrently with itself.
"""
from __future__ import annotations

import heapq
import itertools
import pickle
from typing import Any

import cloudpickle
import pyarrow as pa
import pyarrow.compute as pc

from runtime.api.process import EVENT_TIME, PROCESSING_TIME
from runtime.keygroups import KEY_GROUP_COLUMN

STATE = "state"
SNAPSHOT_SCHEMA = pa.schema([(KEY_GROUP_COLUMN, pa.int64()), ("key", pa.binary()), ("kind", pa.string()),
                             ("name", pa.string()), ("timestamp", pa.int64()), ("value", pa.binary())])


_PLAIN = frozenset({int, float, str, bytes, bool, type(None)})


def dumps(value: Any) -> bytes:
    """``value`` pickled as cloudpickle would, but plain values (numbers, strings, tuples of them: most
    keys and counts) by the standard pickler, many times faster, so large state snapshots quickly."""
    kind = type(value)
    if kind in _PLAIN or (kind is tuple and all(type(v) in _PLAIN for v in value)):
        return pickle.dumps(value, protocol=cloudpickle.DEFAULT_PROTOCOL)
    return cloudpickle.dumps(value)


class TimerQueue:
    """The timers of one time domain: at most one per (timestamp, key group, key), popped in timestamp order."""

    def __init__(self):
        self._heap: list[tuple] = []
        self._live: set[tuple] = set()
        self._order = itertools.count()  # ties fire in registration order; keys need not be comparable

    def register(self, timestamp: int, key_group: int, key: Any) -> None:
        timer = (timestamp, key_group, key)
        if timer not in self._live:
            self._live.add(timer)
            heapq.heappush(self._heap, (timestamp, next(self._order), key_group, key))

    def delete(self, timestamp: int, key_group: int, key: Any) -> None:
        self._live.discard((timestamp, key_group, key))  # its heap entry is skipped when it comes up

    def next_time(self) -> int | None:
        while self._heap:
            timestamp, _, key_group, key = self._heap[0]
            if (timestamp, key_group, key) in self._live:
                return timestamp
            heapq.heappop(self._heap)
        return None

    def pop_due(self, until: int) -> tuple[int, int, Any] | None:
        """The earliest timer at or before ``until``, removed; None if there is none."""
        timestamp = self.next_time()
        if timestamp is None or timestamp > until:
            return None
        _, _, key_group, key = heapq.heappop(self._heap)
        self._live.remove((timestamp, key_group, key))
        return timestamp, key_group, key

    def __iter__(self):
        return iter(sorted(self._live, key=lambda t: t[0]))

    def __len__(self) -> int:
        return len(self._live)


class KeyedStateBackend:
    """Values per (key group, key) and state name, read and written for the current key."""

    def __init__(self):
        self.values: dict[tuple[int, Any], dict[str, Any]] = {}
        self.timers = {EVENT_TIME: TimerQueue(), PROCESSING_TIME: TimerQueue()}
        self.current: tuple[int, Any] | None = None

    def set_current_key(self, key_group: int, key: Any) -> None:
        self.current = (key_group, key)

    def _key(self) -> tuple[int, Any]:
        if self.current is None:
            raise RuntimeError("keyed state and timers belong to a key: use them in process_element or on_timer")
        return self.current

    # -- the store behind ValueState, ListState and MapState ------------------------------------
    def read(self, name: str, default: Any) -> Any:
        return self.values.get(self._key(), {}).get(name, default)

    def write(self, name: str, value: Any) -> None:
        self.values.setdefault(self._key(), {})[name] = value

    def clear(self, name: str) -> None:
        key = self._key()
        entry = self.values.get(key)
        if entry is not None:
            entry.pop(name, None)
            if not entry:
                del self.values[key]

    # -- timers of the current key --------------------------------------------------------------
    def register_timer(self, domain: str, timestamp: int) -> None:
        self.timers[domain].register(int(timestamp), *self._key())

    def delete_timer(self, domain: str, timestamp: int) -> None:
        self.timers[domain].delete(int(timestamp), *self._key())

    # -- checkpoints ----------------------------------------------------------------------------
    @property
    def rows(self) -> int:
        return sum(len(v) for v in self.values.values()) + sum(len(q) for q in self.timers.values())

    def snapshot(self) -> pa.Table | None:
        """Every value and timer as a row of SNAPSHOT_SCHEMA (pickled now: later changes do not leak in)."""
        rows: list[tuple] = [(kg, key, STATE, name, None, dumps(value))
                for (kg, key), entry in self.values.items() for name, value in entry.items()]
        rows += [(kg, key, domain, None, ts, None) for domain, queue in self.timers.items() for ts, kg, key in queue]
        if not rows:
            return None
        columns: list = list(zip(*rows))
        columns[1] = [dumps(key) for key in columns[1]]
        return pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(columns, SNAPSHOT_SCHEMA)],
                                    schema=SNAPSHOT_SCHEMA)

    def restore(self, tables: list[pa.Table], key_groups: range) -> None:
        """Take the rows of ``tables`` (snapshots of any old subtasks) whose key group is in ``key_groups``."""
        for table in tables:
            if table is None or table.num_rows == 0:
                continue
            kg = table.column(KEY_GROUP_COLUMN)
            mine = table.filter(pc.and_(pc.greater_equal(kg, key_groups.start), pc.less(kg, key_groups.stop)))
            for row in mine.to_pylist():
                self._restore_row(row)

    def _restore_row(self, row: dict) -> None:
        key_group, key = row[KEY_GROUP_COLUMN], cloudpickle.loads(row["key"])
        if row["kind"] == STATE:
            self.values.setdefault((key_group, key), {})[row["name"]] = cloudpickle.loads(row["value"])
        else:
            self.timers[row["kind"]].register(row["timestamp"], key_group, key)


class KeyedStateOperator:
    """An operator whose whole checkpointed state is one KeyedStateBackend: its snapshot, restore and size.

    ``state_rows`` counts what a snapshot would hold (a row per state value and per timer)."""

    def __init__(self):
        self.backend = KeyedStateBackend()

    def snapshot(self) -> pa.Table | None:
        return self.backend.snapshot()

    def restore(self, tables: list[pa.Table], key_groups: range) -> None:
        self.backend.restore(tables, key_groups)

    @property
    def state_rows(self) -> int:
        return self.backend.rows
