"""Keyed process functions: Python per row, with keyed state and timers (Flink's KeyedProcessFunction).

``stream.key_by("user").process(MyFunction(), schema="user BIGINT, n BIGINT")`` runs
``MyFunction.process_element(row, ctx, out)`` for every row (a dict of the row's columns), with the
state of that row's key, and ``on_timer(timestamp, ctx, out)`` when a timer of a key fires.
``out.collect(...)`` emits a dict or a tuple that fits ``schema``.

Times are milliseconds since the epoch, as in Flink: ``ctx.timestamp()`` (the row's event time, or
None when the stream has no timestamps; in ``on_timer`` the timer's time), timers, watermarks and
processing time. An event-time timer at ``t`` fires once the watermark reaches ``t`` (no more rows
at or before ``t`` are expected), in timestamp order; the end of a bounded input fires them all.
Processing-time timers fire by the TaskManager's clock, also while no rows arrive; they do not fire
at the end of the input. State and timers belong to the current key, are checkpointed by key group
and follow their keys when a job is restored at another parallelism.

State values are pickled into checkpoints, so they must be picklable (cloudpickle); a default value
is shared between keys, so keep it immutable.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol
from collections.abc import Iterator

from runtime.ddl import arrow_schema

EVENT_TIME = "event_time"
PROCESSING_TIME = "processing_time"


class KeyedProcessFunction:
    """Subclass and override ``process_element`` (and ``on_timer`` when you register timers)."""

    def open(self, ctx: Context) -> None:
        """Called once per subtask before the first row or timer: get state handles here."""

    def process_element(self, row: dict, ctx: Context, out: Collector) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement process_element(row, ctx, out)")

    def on_timer(self, timestamp: int, ctx: Context, out: Collector) -> None:
        """A timer of ``ctx.get_current_key()`` fired; ``ctx.time_domain()`` says which kind."""


# -- what the runtime hands to the function ----------------------------------------------------
class Collector(Protocol):
    def collect(self, row: dict | tuple) -> None:
        """Emit one row: a dict with exactly the schema's columns, or a tuple in the schema's order."""


class TimerService(Protocol):
    def register_event_time_timer(self, timestamp: int) -> None: ...
    def register_processing_time_timer(self, timestamp: int) -> None: ...
    def delete_event_time_timer(self, timestamp: int) -> None: ...
    def delete_processing_time_timer(self, timestamp: int) -> None: ...
    def current_watermark(self) -> int: ...
    def current_processing_time(self) -> int: ...


class Context(Protocol):
    def get_state(self, descriptor: ValueStateDescriptor) -> ValueState: ...
    def get_list_state(self, descriptor: ListStateDescriptor) -> ListState: ...
    def get_map_state(self, descriptor: MapStateDescriptor) -> MapState: ...
    def timer_service(self) -> TimerService: ...
    def get_current_key(self) -> Any: ...
    def timestamp(self) -> int | None: ...
    def time_domain(self) -> str | None: ...


# -- state --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ValueStateDescriptor:
    name: str
    default: Any = None

    def __post_init__(self):
        _check_name(self.name)


@dataclass(frozen=True)
class ListStateDescriptor:
    name: str

    def __post_init__(self):
        _check_name(self.name)


@dataclass(frozen=True)
class MapStateDescriptor:
    name: str

    def __post_init__(self):
        _check_name(self.name)


class KeyedStateStore(Protocol):
    """The runtime's side of a state handle: values of the current key, by state name."""

    def read(self, name: str, default: Any) -> Any: ...
    def write(self, name: str, value: Any) -> None: ...
    def clear(self, name: str) -> None: ...


class ValueState:
    """One value per key; ``update(None)`` clears it."""

    def __init__(self, store: KeyedStateStore, descriptor: ValueStateDescriptor):
        self._store, self._name, self._default = store, descriptor.name, descriptor.default

    def value(self) -> Any:
        return self._store.read(self._name, self._default)

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._store.write(self._name, value)

    def clear(self) -> None:
        self._store.clear(self._name)


class ListState:
    """A list per key (empty until something is added)."""

    def __init__(self, store: KeyedStateStore, descriptor: ListStateDescriptor):
        self._store, self._name = store, descriptor.name

    def get(self) -> list:
        return list(self._store.read(self._name, ()))

    def add(self, value: Any) -> None:
        self.add_all([value])

    def add_all(self, values) -> None:
        items = self._store.read(self._name, None)
        if items is None:
            self.update(values)
        else:
            items.extend(values)

    def update(self, values) -> None:
        items = list(values)
        if items:
            self._store.write(self._name, items)
        else:
            self.clear()

    def clear(self) -> None:
        self._store.clear(self._name)


class MapState:
    """A dict per key."""

    def __init__(self, store: KeyedStateStore, descriptor: MapStateDescriptor):
        self._store, self._name = store, descriptor.name

    def _map(self) -> dict:
        return self._store.read(self._name, None) or {}

    def get(self, key: Any, default: Any = None) -> Any:
        return self._map().get(key, default)

    def put(self, key: Any, value: Any) -> None:
        self.put_all({key: value})

    def put_all(self, entries: dict) -> None:
        current = self._store.read(self._name, None)
        if current is None:
            self._store.write(self._name, dict(entries))
        else:
            current.update(entries)

    def remove(self, key: Any) -> None:
        current = self._store.read(self._name, None)
        if current is not None:
            current.pop(key, None)
            if not current:
                self.clear()

    def contains(self, key: Any) -> bool:
        return key in self._map()

    def keys(self) -> Iterator:
        return iter(list(self._map()))

    def values(self) -> Iterator:
        return iter(list(self._map().values()))

    def items(self) -> Iterator[tuple]:
        return iter(list(self._map().items()))

    def is_empty(self) -> bool:
        return not self._map()

    def clear(self) -> None:
        self._store.clear(self._name)


STATE_TYPES = {ValueStateDescriptor: ValueState, ListStateDescriptor: ListState, MapStateDescriptor: MapState}


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"a state descriptor needs a non-empty name, got {name!r}")


# -- the client side of ``KeyedStream.process`` -------------------------------------------------
def process_params(fn: Any, schema: Any, keys: list[str], ts_column: str | None) -> dict:
    """The operator's params; TypeError/ValueError now, when the job is built, for a bad function or schema."""
    if not isinstance(fn, KeyedProcessFunction):
        raise TypeError(f"process takes an instance of a KeyedProcessFunction subclass, got {fn!r}")
    if schema is None:
        raise TypeError("process needs the schema of the rows it emits, e.g. schema=\"user BIGINT, n BIGINT\"")
    arrow_schema(schema)
    return {"keys": list(keys), "schema": schema, "ts_column": ts_column}
