"""SQL's Python functions as they run inside Spark's Python workers: scalar, table and aggregate calls over
Arrow batches, with errors that name the function.

A scalar function is registered in the TaskManager's Spark session as an Arrow UDF (``arrow_udf``: Arrow
arrays in, one Arrow array out), a table function runs as a ``mapInArrow`` over the rows it reads, and an
aggregate function accumulates each key's rows of a bundle into a partial accumulator (pickled) that the
keyed operator merges (runtime.taskmanager.udf_aggregates). The user's function is opened once per Python
worker, before its first call. What it returns is converted to its declared type by Arrow; a value that
does not convert, and an exception it raises, become one :class:`PythonFunctionError` naming the function
and the cause (the TaskManager reports that line: :func:`failure_line`).

Like runtime.taskmanager.spark_functions this module imports nothing of flinkbench (the workers of a Spark
cluster need not have it) and is shipped by value, with runtime.udf's definitions.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator

import pyarrow as pa

ERROR_NAME = "PythonFunctionError"


class PythonFunctionError(Exception):
    """A Python function of a SQL query failed: its name and what went wrong, in one line."""


def ship_by_value() -> None:
    """Pickle this module and runtime.udf's definitions by value in every plan sent to Spark."""
    from pyspark import cloudpickle

    import runtime.udf.definitions
    import runtime.udf.types

    for module in (sys.modules[__name__], runtime.udf.definitions, runtime.udf.types):
        cloudpickle.register_pickle_by_value(module)


def failure_line(message: str) -> str | None:
    """The PythonFunctionError line of an error's text (a Spark PythonException carries the worker's
    traceback), without its class name, or what a module the worker could not import says; None if neither."""
    lines = message.splitlines()
    found = [line.split(f"{ERROR_NAME}: ", 1)[1] for line in lines  # the class may print with its module's name
             if re.match(rf"^(?:[\w.]+\.)?{ERROR_NAME}: ", line)]
    if found:
        return found[-1]
    missing = [line for line in lines if line.startswith("ModuleNotFoundError: ")]
    if missing:
        return (f"a Python function needs a module Spark's Python workers cannot import "
                f"({missing[-1].split(': ', 1)[1]}): ship it with add_python_file or set_python_requirements")
    return None


class Opened:
    """A function wrapper's function object, opened at its first use in this process (a spark_functions.Shipped
    wrapper, of a job that ships Python dependencies, loads its code then)."""

    def __init__(self, wrapper):
        self.wrapper, self._target = wrapper, None
        self.name = wrapper.name

    @property
    def target(self):
        if self._target is None:
            try:
                self._target = self.wrapper.opened()
            except Exception as err:  # noqa: BLE001 - the user's open(), reported by name
                raise PythonFunctionError(f"function {self.name}: open() raised {_cause(err)}") from None
        return self._target

    def call(self, method: str, *args):
        """``target.method(*args)``; an exception becomes a PythonFunctionError naming the function and method."""
        try:
            return getattr(self.target, method)(*args)
        except PythonFunctionError:
            raise
        except Exception as err:  # noqa: BLE001 - whatever the user's code raises
            raise PythonFunctionError(f"function {self.name} raised {_cause(err)}"
                                    + ("" if method in ("eval", "accumulate") else f" in {method}()")) from None

    def __getstate__(self):
        return {"wrapper": self.wrapper, "name": self.name}

    def __setstate__(self, state):
        self.wrapper, self.name, self._target = state["wrapper"], state["name"], None


def _cause(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def to_arrow(values: list, arrow_type: pa.DataType, name: str, declared: str) -> pa.Array:
    """``values`` as an Arrow array of ``arrow_type``; PythonFunctionError naming the first value that does not
    convert (a function that returned the wrong type)."""
    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        pass
    for value in values:
        try:
            pa.array([value], type=arrow_type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
            raise PythonFunctionError(f"function {name} returned {value!r} ({type(value).__name__}) where its "
                                    f"result type is {declared}") from None
    raise PythonFunctionError(f"function {name} returned values that do not convert to {declared}")


def scalar(wrapper, arrow_type: pa.DataType, nullary: bool = False) -> Callable[..., pa.Array]:
    """The body of an Arrow UDF for a scalar function: row at a time (``general``) or over pandas Series."""
    function = Opened(wrapper)
    declared, name, pandas = wrapper.result_type, wrapper.name, wrapper.func_type == "pandas"

    def run(*arrays: pa.Array) -> pa.Array:
        if pandas:
            return _pandas_scalar(function, arrays[:0] if nullary else arrays, len(arrays[0]), arrow_type, declared)
        rows = zip(*[a.to_pylist() for a in arrays]) if not nullary else [()] * len(arrays[0])
        return to_arrow([function.call("eval", *row) for row in rows], arrow_type, name, declared)
    return run


def _pandas_scalar(function: Opened, arrays, length: int, arrow_type: pa.DataType, declared: str) -> pa.Array:
    import pandas as pd

    result = function.call("eval", *[a.to_pandas() for a in arrays])
    name = function.name
    if not isinstance(result, (pd.Series, list, tuple)) or len(result) != length:
        raise PythonFunctionError(f"function {name} returned {type(result).__name__} of length "
                                f"{len(result) if hasattr(result, '__len__') else '-'} where a pandas Series of "
                                f"{length} values was expected")
    values = result.tolist() if isinstance(result, pd.Series) else list(result)
    return to_arrow([None if _missing(v) else v for v in values], arrow_type, name, declared)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def table(wrapper, args: list[str], out_schema: pa.Schema, width: int, outer: bool,
          kept: int) -> Callable[[Iterator], Iterator]:
    """The body of a ``mapInArrow`` for a table function: each input row (its first ``kept`` columns, then the
    function's ``width`` columns) once per row the function gives for the values of ``args``; with ``outer``
    (LEFT JOIN LATERAL) a row the function gives nothing for once, with NULLs."""
    function = Opened(wrapper)
    declared = wrapper.result_type

    def run(batches):
        for batch in batches:
            taken, produced = [], []
            inputs = [batch.column(a).to_pylist() for a in args]
            for index, row in enumerate(zip(*inputs) if args else [()] * batch.num_rows):
                rows = _rows(function.call("eval", *row), function.name, width)
                if not rows and outer:
                    rows = [(None,) * width]
                taken += [index] * len(rows)
                produced += rows
            yield _joined(batch.select(list(range(kept))), taken, produced, out_schema, width, function.name, declared)
    return run


def _rows(result, name: str, width: int) -> list[tuple]:
    """What one eval gave, as rows of ``width`` values (a single value is a one-column row)."""
    if result is None:
        return []
    if isinstance(result, (str, bytes)) or not hasattr(result, "__iter__"):
        result = [result]
    rows = []
    for item in result:
        row = tuple(item) if isinstance(item, (tuple, list)) else (item,)
        if len(row) != width:
            raise PythonFunctionError(f"function {name} gave a row of {len(row)} values where its result type has "
                                    f"{width}: {item!r}")
        rows.append(row)
    return rows


def _joined(batch: pa.RecordBatch, taken: list[int], produced: list[tuple], out_schema: pa.Schema, width: int,
            name: str, declared: str) -> pa.RecordBatch:
    kept = batch.take(pa.array(taken, pa.int64())) if taken else batch.slice(0, 0)
    columns = list(kept.columns)
    for i, field in enumerate(out_schema.field(len(out_schema) - width + j) for j in range(width)):
        columns.append(to_arrow([r[i] for r in produced], field.type, name, declared))
    return pa.RecordBatch.from_arrays(columns, schema=out_schema)


def accumulate(wrapper, rows: list[dict], args: list[str], accumulator=None):
    """``rows`` (dicts with the arguments and ``__op``, in order) accumulated into ``accumulator`` (a new
    one when None): rows whose ``__op`` is -U or -D are retracted. Returns the accumulator."""
    function = Opened(wrapper) if not isinstance(wrapper, Opened) else wrapper
    if accumulator is None:
        accumulator = function.call("create_accumulator")
    for row in rows:
        values = [row[a] for a in args]
        function.call("retract" if row.get("__op") in (1, 3) else "accumulate", accumulator, *values)
    return accumulator


def partial_accumulators(wrapper, args: list[str]) -> Callable[[pa.Array], pa.Array]:
    """The body of an Arrow UDF over a list of each group's rows (structs of ``__ord``, the arguments and
    maybe ``__op``): each group's partial accumulator, pickled (by cloudpickle: an accumulator may be an
    object of a class the notebook defined)."""
    function = Opened(wrapper)

    def run(groups: pa.Array) -> pa.Array:
        from pyspark import cloudpickle

        out = []
        for rows in groups.to_pylist():
            ordered = sorted(rows, key=lambda r: r["__ord"])
            out.append(cloudpickle.dumps(accumulate(function, ordered, args)))
        return pa.array(out, pa.binary())
    return run
