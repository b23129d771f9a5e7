"""SQL's Python aggregate functions in the keyed operators: accumulators kept as keyed state.

Inside Spark each bundle's rows of a key (or of a key's window) are accumulated into a partial
accumulator, pickled (runtime.taskmanager.spark_udf_plans); the keyed operators here merge those into
the accumulator they keep per key (``merge``), so the state is the user's own accumulators and travels
with every checkpoint. Functions whose accumulators do not merge, pandas functions and updating inputs
bring their rows instead: they are accumulated (or retracted) here, or handed to the pandas function
as Series when a window fires. Values are checked against the declared result type as they are read
(``get_value``), so a function that returns the wrong type is named with the value it returned.

Runs on the task's executor thread, between bundles, like the operators that hold it.
"""
from __future__ import annotations

from typing import Any

import cloudpickle
import pyarrow as pa

from runtime.ddl import arrow_schema
from runtime.taskmanager.spark_udfs import Opened, PythonFunctionError, to_arrow


class PythonAggregate:
    """One Python aggregate call of an operator (its spec: ``name``, ``args``, ``type``) and its function,
    opened once for the operator's life."""

    def __init__(self, spec: dict, wrapper):
        self.name, self.args = spec["name"], list(spec.get("args") or [])
        self.function = Opened(wrapper)
        self.wrapper = wrapper
        self.declared = wrapper.result_type
        self.arrow_type = arrow_schema(f"v {spec['type']}").field(0).type
        self.pandas = wrapper.func_type == "pandas"

    @property
    def label(self) -> str:
        return self.wrapper.name

    # -- accumulators ---------------------------------------------------------------------------
    def create(self) -> Any:
        """A new accumulator (a pandas function's: the argument rows it has seen)."""
        return [] if self.pandas else self.function.call("create_accumulator")

    def add(self, accumulator, values: tuple, sign: int) -> None:
        """Accumulate one row's arguments (``sign`` -1: retract them)."""
        if self.pandas:
            if sign < 0:
                raise PythonFunctionError(f"function {self.label} is a pandas aggregate function, which cannot "
                                          "retract rows (an updating input)")
            accumulator.append(values)
            return
        self.function.call("accumulate" if sign > 0 else "retract", accumulator, *values)

    def merge(self, accumulator, partials: list[bytes]) -> None:
        """Merge pickled partial accumulators (made inside Spark) into ``accumulator``."""
        others = [cloudpickle.loads(p) for p in partials if p is not None]
        if others:
            self.function.call("merge", accumulator, others)

    def fold(self, partials: list[bytes] | None) -> bytes | None:
        """Several pickled partial accumulators of one group as one (window state merges them so)."""
        if not partials or len(partials) == 1:
            return partials[0] if partials else None
        first = cloudpickle.loads(partials[0])
        self.merge(first, partials[1:])
        return cloudpickle.dumps(first)

    def value(self, accumulator) -> Any:
        """The function's value for ``accumulator``; PythonFunctionError if it is not of the declared type."""
        if self.pandas:
            value = self._pandas_value(accumulator)
        else:
            value = self.function.call("get_value", accumulator)
        self.check(value)
        return value

    def value_of_pickled(self, partial: bytes | None) -> Any:
        return self.value(cloudpickle.loads(partial) if partial is not None else self.create())

    def value_of_rows(self, columns: list[list], count: int) -> Any:
        """The value over a window's rows, given as one list of values per argument (``count`` rows)."""
        accumulator = self.create()
        for row in (zip(*columns) if columns else [()] * count):
            self.add(accumulator, row, 1)
        return self.value(accumulator)

    def _pandas_value(self, rows: list[tuple]) -> Any:
        import pandas as pd

        series = [pd.Series(list(column)) for column in zip(*rows)] if rows else \
            [pd.Series([], dtype=object) for _ in self.args]
        value = self.function.call("eval", *series)
        return value.item() if hasattr(value, "item") and hasattr(value, "dtype") else value  # numpy scalars

    def check(self, value: Any) -> None:
        if value is None:
            return
        try:
            pa.scalar(value, type=self.arrow_type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
            raise PythonFunctionError(f"function {self.label} returned {value!r} ({type(value).__name__}) where its "
                                      f"result type is {self.declared}") from None

    def column(self, values: list) -> pa.Array:
        return to_arrow(values, self.arrow_type, self.label, self.declared)


def python_aggregates(specs: list[dict], functions: dict | None) -> dict[str, PythonAggregate]:
    """The Python aggregates of ``specs`` by aggregate name (``functions``: what the operator shipped)."""
    return {s["name"]: PythonAggregate(s, (functions or {})[s["name"]]) for s in specs if s["fn"] == "udaf"}
