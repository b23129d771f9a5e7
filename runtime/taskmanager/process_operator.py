"""The keyed process operator: the TaskManager side of ``key_by(...).process(fn, schema=...)``.

A user's KeyedProcessFunction is Python per row, so it cannot be a Spark plan: the stage before it
stays one, and this operator takes each Arrow bundle after the hash exchange, groups its rows by key
(each key's rows keep their order) and calls ``process_element`` row by row with that key's state.
Timers fire on watermarks (event time) and when the task polls the clock (processing time); what the
function emits in one call of ``process``/``on_watermark``/``on_processing_time`` leaves as one Arrow
table of the declared schema.

Times the function sees are milliseconds (Flink's convention); the task's watermarks are
microseconds (runtime.taskmanager.watermarks), converted here. State and timers live in a
KeyedStateBackend, checkpointed and rescaled by key group like the window operator's state.
"""
from __future__ import annotations

import time
from typing import Any
from collections.abc import Callable

import pyarrow as pa

from runtime import errors
from runtime.api.process import (EVENT_TIME, PROCESSING_TIME, STATE_TYPES, KeyedProcessFunction,
                                 ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor)
from runtime.ddl import arrow_schema
from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager.keyed_state import KeyedStateOperator
from runtime.taskmanager.spark import UserFunctionError
from runtime.taskmanager.window_operator import BEFORE_TIME, END_OF_TIME


class OutputRowError(errors.UserFunctionError, ValueError):
    """A row a process function emitted that the declared schema cannot hold; the message names the field."""


def wall_clock_millis() -> int:
    """Processing time in epoch milliseconds, as process functions see it."""
    return time.time_ns() // 1_000_000


class KeyedProcessOperator(KeyedStateOperator):
    """A KeyedProcessFunction over bundles; ``clock`` (ms) is the processing time, replaceable in tests."""

    late_records = 0  # nothing is dropped: the function sees late rows (ctx.timestamp() <= the watermark)

    def __init__(self, params: dict, fn: KeyedProcessFunction, clock: Callable[[], int] = wall_clock_millis):
        if not isinstance(fn, KeyedProcessFunction):
            raise TypeError(f"keyed_process runs a KeyedProcessFunction, got {fn!r}")
        self.fn = fn
        self.keys: list[str] = params["keys"]
        self.ts_column: str | None = params.get("ts_column")
        self.schema = arrow_schema(params["schema"])
        self.clock = clock
        super().__init__()
        self.watermark = BEFORE_TIME
        self.ctx = ProcessContext(self)
        self._opened = False

    # -- rows ----------------------------------------------------------------------------------
    def process(self, table: pa.Table) -> pa.Table | None:
        """Call process_element for every row, one key at a time; KeyError if a needed column is missing."""
        if table.num_rows == 0:
            return None
        missing = [c for c in [KEY_GROUP_COLUMN, *self.keys, *([self.ts_column] if self.ts_column else [])]
                   if c not in table.column_names]
        if missing:
            raise KeyError(missing)
        self._open()
        rows = table.drop_columns([KEY_GROUP_COLUMN]).to_pylist()
        times = self._event_times(table)
        out = Output(self.schema)
        for (key_group, key), indices in self._by_key(table).items():
            self.backend.set_current_key(key_group, key)
            for i in indices:
                self.ctx.at(times[i], None)
                self._call(self.fn.process_element, rows[i], self.ctx, out)
        self.ctx.at(None, None)
        return out.table()

    def _by_key(self, table: pa.Table) -> dict[tuple[int, Any], list[int]]:
        """Row indices per (key group, key), keys in order of first appearance."""
        values = [table.column(k).to_pylist() for k in self.keys]
        keys = values[0] if len(values) == 1 else list(zip(*values))
        groups: dict[tuple[int, Any], list[int]] = {}
        for i, kg_key in enumerate(zip(table.column(KEY_GROUP_COLUMN).to_pylist(), keys)):
            groups.setdefault(kg_key, []).append(i)
        return groups

    def _event_times(self, table: pa.Table) -> list[int | None]:
        if self.ts_column is None:
            return [None] * table.num_rows
        column = table.column(self.ts_column)
        micros = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64()).to_pylist()
        return [None if us is None else us // 1000 for us in micros]

    # -- time ----------------------------------------------------------------------------------
    def on_watermark(self, watermark: int) -> pa.Table | None:
        """Fire the event-time timers the watermark (microseconds) has reached, in timestamp order."""
        if watermark <= self.watermark:
            return None
        self.watermark = watermark
        return self._fire(EVENT_TIME, to_millis(watermark))

    def on_processing_time(self) -> pa.Table | None:
        """Fire the processing-time timers that are due by the clock."""
        return self._fire(PROCESSING_TIME, self.clock())

    def processing_timer_delay(self) -> float | None:
        """Seconds until the earliest processing-time timer is due (<= 0: now); None without timers."""
        due = self.backend.timers[PROCESSING_TIME].next_time()
        return None if due is None else (due - self.clock()) / 1000

    def _fire(self, domain: str, until: int) -> pa.Table | None:
        timers = self.backend.timers[domain]
        out = Output(self.schema)
        while (timer := timers.pop_due(until)) is not None:  # timers set while firing may be due too
            self._open()
            timestamp, key_group, key = timer
            self.backend.set_current_key(key_group, key)
            self.ctx.at(timestamp, domain)
            self._call(self.fn.on_timer, timestamp, self.ctx, out)
        self.ctx.at(None, None)
        return out.table()

    # -- the user's code -----------------------------------------------------------------------
    def _open(self) -> None:
        if not self._opened:
            self._opened = True
            self._call(self.fn.open, self.ctx)

    @staticmethod
    def _call(method: Callable, *args) -> None:
        """Run a method of the function; what it raises comes back with its traceback (bad rows as they are)."""
        try:
            method(*args)
        except OutputRowError:
            raise
        except Exception as err:  # noqa: BLE001 - any user error fails the task, naming the function
            raise UserFunctionError(method, err) from None

    # -- state ---------------------------------------------------------------------------------

def to_millis(micros: int) -> int:
    """Microseconds to milliseconds, rounding down; the start and end of time stay what they are."""
    return micros if micros in (BEFORE_TIME, END_OF_TIME) else micros // 1000


class ProcessContext:
    """The ``ctx`` of open, process_element and on_timer: keyed state, timers, the current key and time."""

    def __init__(self, operator: KeyedProcessOperator):
        self._operator = operator
        self._timers = Timers(operator)
        self._handles: dict[str, tuple[Any, Any]] = {}
        self._timestamp: int | None = None
        self._domain: str | None = None

    def at(self, timestamp: int | None, domain: str | None) -> None:
        self._timestamp, self._domain = timestamp, domain

    def get_state(self, descriptor: ValueStateDescriptor):
        return self._handle(descriptor, ValueStateDescriptor)

    def get_list_state(self, descriptor: ListStateDescriptor):
        return self._handle(descriptor, ListStateDescriptor)

    def get_map_state(self, descriptor: MapStateDescriptor):
        return self._handle(descriptor, MapStateDescriptor)

    def _handle(self, descriptor, expected: type):
        if not isinstance(descriptor, expected):
            raise TypeError(f"expected a {expected.__name__}, got {descriptor!r}")
        known = self._handles.get(descriptor.name)
        if known is None:
            handle = STATE_TYPES[expected](self._operator.backend, descriptor)
            known = self._handles[descriptor.name] = (descriptor, handle)
        elif known[0] != descriptor:
            raise ValueError(f"state {descriptor.name!r} is already declared as {known[0]!r}")
        return known[1]

    def timer_service(self) -> Timers:
        return self._timers

    def get_current_key(self) -> Any:
        current = self._operator.backend.current
        return None if current is None else current[1]

    def timestamp(self) -> int | None:
        """The row's event time in ms (None without timestamps); in on_timer, the timer's time."""
        return self._timestamp

    def time_domain(self) -> str | None:
        """In on_timer: runtime.api.process.EVENT_TIME or PROCESSING_TIME."""
        return self._domain


class Timers:
    """``ctx.timer_service()``: timers of the current key, and the current times, in milliseconds."""

    def __init__(self, operator: KeyedProcessOperator):
        self._operator = operator

    def register_event_time_timer(self, timestamp: int) -> None:
        self._operator.backend.register_timer(EVENT_TIME, timestamp)

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._operator.backend.register_timer(PROCESSING_TIME, timestamp)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._operator.backend.delete_timer(EVENT_TIME, timestamp)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._operator.backend.delete_timer(PROCESSING_TIME, timestamp)

    def current_watermark(self) -> int:
        return to_millis(self._operator.watermark)

    def current_processing_time(self) -> int:
        return self._operator.clock()


class Output:
    """``out``: what the function emits during one call of the operator, as rows of the schema."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.rows: list[tuple] = []

    def collect(self, row: dict | tuple) -> None:
        self.rows.append(_as_tuple(row, self.schema))

    def table(self) -> pa.Table | None:
        if not self.rows:
            return None
        columns = list(zip(*self.rows))
        return pa.Table.from_arrays([_column(values, f) for values, f in zip(columns, self.schema)], schema=self.schema)


def _as_tuple(row: Any, schema: pa.Schema) -> tuple:
    names = schema.names
    if isinstance(row, dict):
        unknown, missing = [n for n in row if n not in names], [n for n in names if n not in row]
        if unknown or missing:
            problem = f"has no column {unknown[0]!r}" if unknown else f"lacks column {missing[0]!r}"
            raise OutputRowError(f"emitted row {row!r}: the schema ({_describe(schema)}) {problem}")
        return tuple(row[n] for n in names)
    if isinstance(row, (tuple, list)):
        if len(row) != len(names):
            raise OutputRowError(f"emitted row {row!r} has {len(row)} values; the schema ({_describe(schema)}) "
                                 f"has {len(names)} columns")
        return tuple(row)
    raise OutputRowError(f"out.collect takes a dict or a tuple, got {type(row).__name__}: {row!r}")


def _column(values: tuple, field: pa.Field) -> pa.Array:
    try:
        array = pa.array(values, type=field.type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as err:
        bad = next((v for v in values if not _fits(v, field.type)), None)
        raise OutputRowError(f"column '{field.name}' ({field.type}) cannot hold {bad!r} "
                             f"({type(bad).__name__}) of an emitted row: {err}") from None
    if not field.nullable and array.null_count:
        raise OutputRowError(f"column '{field.name}' is NOT NULL but an emitted row has None in it")
    return array


def _fits(value: Any, type_: pa.DataType) -> bool:
    try:
        pa.array([value], type=type_)
        return True
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return False


def _describe(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name} {f.type}" for f in schema)
