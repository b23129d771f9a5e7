"""Event time on the client side: watermark strategies, window assigners and aggregate functions.

Each object here only describes what to do; it turns into JSON-able ``params`` of an operator that
the TaskManagers run (runtime.taskmanager.window_operator and the Spark pre-aggregation).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from runtime.config import read_duration

MICROS = 1_000_000


def _micros(value: Any, what: str) -> int:
    seconds = read_duration(what, value)
    if seconds < 0:
        raise ValueError(f"{what} must not be negative, got {value!r}")
    return int(round(seconds * MICROS))


@dataclass
class WatermarkStrategy:
    """Where a stream's event time comes from and how far watermarks trail the largest time seen."""
    timestamp_column: str | None = None
    max_out_of_orderness_us: int = 0
    idleness_us: int | None = None

    @classmethod
    def for_bounded_out_of_orderness(cls, max_out_of_orderness: Any) -> WatermarkStrategy:
        return cls(max_out_of_orderness_us=_micros(max_out_of_orderness, "max out-of-orderness"))

    @classmethod
    def for_monotonous_timestamps(cls) -> WatermarkStrategy:
        return cls()

    def with_timestamp_column(self, column: str) -> WatermarkStrategy:
        if not isinstance(column, str) or not column:
            raise TypeError("with_timestamp_column takes the name of a TIMESTAMP column")
        return WatermarkStrategy(column, self.max_out_of_orderness_us, self.idleness_us)

    def with_idleness(self, timeout: Any) -> WatermarkStrategy:
        """A source subtask that produces nothing for ``timeout`` stops holding back the watermark."""
        return WatermarkStrategy(self.timestamp_column, self.max_out_of_orderness_us, _micros(timeout, "idleness"))

    def params(self) -> dict:
        if not self.timestamp_column:
            raise ValueError("the watermark strategy needs a timestamp column: "
                             "WatermarkStrategy.for_bounded_out_of_orderness('1 s').with_timestamp_column('ts')")
        return {"ts_column": self.timestamp_column, "lag_us": self.max_out_of_orderness_us,
                "idle_us": self.idleness_us}


# ---------------------------------------------------------------------------------------------
# Window assigners
# ---------------------------------------------------------------------------------------------
@dataclass
class TumblingEventTimeWindows:
    size_us: int

    @classmethod
    def of(cls, size: Any) -> TumblingEventTimeWindows:
        size_us = _micros(size, "window size")
        if size_us <= 0:
            raise ValueError("window size must be positive")
        return cls(size_us)

    def params(self) -> dict:
        return {"type": "tumbling", "size_us": self.size_us, "slide_us": self.size_us}


@dataclass
class SlidingEventTimeWindows:
    size_us: int
    slide_us: int

    @classmethod
    def of(cls, size: Any, slide: Any) -> SlidingEventTimeWindows:
        size_us, slide_us = _micros(size, "window size"), _micros(slide, "window slide")
        if size_us <= 0 or slide_us <= 0:
            raise ValueError("window size and slide must be positive")
        if size_us % slide_us:
            raise ValueError(f"sliding window size ({size}) must be a whole multiple of its slide ({slide})")
        return cls(size_us, slide_us)

    def params(self) -> dict:
        return {"type": "sliding", "size_us": self.size_us, "slide_us": self.slide_us}


@dataclass
class EventTimeSessionWindows:
    gap_us: int

    @classmethod
    def with_gap(cls, gap: Any) -> EventTimeSessionWindows:
        gap_us = _micros(gap, "session gap")
        if gap_us <= 0:
            raise ValueError("session gap must be positive")
        return cls(gap_us)

    def params(self) -> dict:
        return {"type": "session", "gap_us": self.gap_us}


# ---------------------------------------------------------------------------------------------
# Aggregate functions
# ---------------------------------------------------------------------------------------------
BUILTIN_AGGREGATES = ("count", "sum", "min", "max", "avg")


@dataclass
class Aggregate:
    """One output column of a window aggregation: a built-in function or a Python one (pandas Series -> scalar)."""
    fn: str
    column: str | None = None
    udf: Callable | None = field(default=None, repr=False)

    def params(self, name: str) -> dict:
        return {"name": name, "fn": self.fn, "column": self.column}


class agg:
    """Aggregate functions for ``WindowedStream.aggregate(name=agg.sum("amount"), ...)``."""

    @staticmethod
    def count() -> Aggregate:
        return Aggregate("count")

    @staticmethod
    def sum(column: str) -> Aggregate:
        return Aggregate("sum", _column(column))

    @staticmethod
    def min(column: str) -> Aggregate:
        return Aggregate("min", _column(column))

    @staticmethod
    def max(column: str) -> Aggregate:
        return Aggregate("max", _column(column))

    @staticmethod
    def avg(column: str) -> Aggregate:
        return Aggregate("avg", _column(column))

    @staticmethod
    def udf(fn: Callable, column: str) -> Aggregate:
        """A user-defined aggregate: ``fn`` receives one window's values of ``column`` as a pandas Series."""
        if not callable(fn):
            raise TypeError("agg.udf takes a function of a pandas Series returning one value")
        return Aggregate("udf", _column(column), fn)


def _column(column: str) -> str:
    if not isinstance(column, str) or not column:
        raise TypeError(f"an aggregate needs a column name, got {column!r}")
    return column


def aggregate_params(aggregates: dict[str, Aggregate]) -> tuple[list[dict], dict[str, Callable]]:
    """The aggregates as params plus the user functions among them (shipped pickled with the operator)."""
    if not aggregates:
        raise TypeError("aggregate needs at least one name=agg.<function>(...)")
    specs, udfs = [], {}
    for name, spec in aggregates.items():
        if not isinstance(spec, Aggregate):
            raise TypeError(f"aggregate {name!r} must be built with agg.count()/sum()/min()/max()/avg()/udf(), "
                            f"got {spec!r}")
        specs.append(spec.params(name))
        if spec.udf is not None:
            udfs[name] = spec.udf
    return specs, udfs
