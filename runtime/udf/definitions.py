"""Python functions as PyFlink users write them: ``udf``, ``udtf`` and ``udaf`` with pyflink.table.udf's names.

A decorated function (or a ScalarFunction, TableFunction or AggregateFunction instance) becomes a
:class:`UserDefinedFunctionWrapper`: what SQL needs to plan a call (its kind, declared types, name) and
what the runtime needs to run it (:meth:`UserDefinedFunctionWrapper.opened`). Declared types are kept as
Flink SQL type strings (a DataType or a string, as PyFlink takes them); the SQL layer reads them.

Calls run inside Spark's Python workers (runtime.taskmanager.spark_udfs), which need not have flinkbench
installed: this module imports nothing of flinkbench but its types, and the TaskManager ships both by
value with the functions that subclass its classes.
"""
from __future__ import annotations

import abc
import copy
import functools
import inspect
from collections.abc import Callable
from typing import Any

from runtime.udf.types import DataType

FUNC_TYPES = ("general", "pandas")
KINDS = ("scalar", "table", "aggregate")


class FunctionContext:
    """What ``open(function_context)`` is told: the subtask running the function and the job's parameters."""

    def __init__(self, subtask_index: int = 0, parallelism: int = 1, job_parameters: dict | None = None,
                 task_name: str = ""):
        self._subtask, self._parallelism = subtask_index, parallelism
        self._parameters, self._task_name = dict(job_parameters or {}), task_name

    def get_index_of_this_subtask(self) -> int:
        return self._subtask

    def get_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return self._parameters.get(key, default_value)

    def get_task_name(self) -> str:
        return self._task_name


class UserDefinedFunction:
    """Base of PyFlink's function classes: ``open`` before the first call, ``close`` after the last."""

    def open(self, function_context: FunctionContext) -> None:
        """One-time setup before the function's first call (in each Python worker that runs it)."""

    def close(self) -> None:
        """Tear-down after the last call."""

    def is_deterministic(self) -> bool:
        return True


class ScalarFunction(UserDefinedFunction, abc.ABC):
    """Maps the values of one row to one value: ``eval(*args)``."""

    @abc.abstractmethod
    def eval(self, *args):
        """The function's value for one row's arguments."""


class TableFunction(UserDefinedFunction, abc.ABC):
    """Maps the values of one row to zero or more rows: ``eval(*args)`` returns or yields them."""

    @abc.abstractmethod
    def eval(self, *args):
        """The rows (tuples, or single values for one column) for one row's arguments."""


class AggregateFunction(UserDefinedFunction, abc.ABC):
    """Aggregates rows into an accumulator and reads a value from it, as PyFlink's AggregateFunction."""

    @abc.abstractmethod
    def create_accumulator(self):
        """A new, empty accumulator."""

    @abc.abstractmethod
    def accumulate(self, accumulator, *args) -> None:
        """Add one row's arguments to ``accumulator`` (in place)."""

    def retract(self, accumulator, *args) -> None:
        """Take back a row accumulated before (updating inputs need it)."""
        raise RuntimeError("Method retract is not implemented")

    def merge(self, accumulator, accumulators) -> None:
        """Merge ``accumulators`` into ``accumulator`` (in place)."""
        raise RuntimeError("Method merge is not implemented")

    @abc.abstractmethod
    def get_value(self, accumulator):
        """The aggregate's value for ``accumulator``."""

    def get_result_type(self):
        raise RuntimeError("Method get_result_type is not implemented")

    def get_accumulator_type(self):
        raise RuntimeError("Method get_accumulator_type is not implemented")


class UserDefinedFunctionWrapper:
    """A Python function ready for SQL: its kind (scalar, table, aggregate), func_type (general or pandas),
    declared types as Flink SQL strings, and name. ``result_type`` of a table function is its ROW type."""

    def __init__(self, func, kind: str, result_type, input_types=None, func_type: str = "general",
                 deterministic: bool | None = None, name: str | None = None, accumulator_type=None):
        if inspect.isclass(func) or not (isinstance(func, UserDefinedFunction) or callable(func)):
            raise TypeError(f"Invalid function: not a function or callable (__call__ is not defined): {type(func)}")
        if func_type not in FUNC_TYPES:
            raise ValueError(f"The func_type must be one of 'general, pandas', got {func_type}.")
        self._func, self.kind, self.func_type = func, kind, func_type
        self.name = name or getattr(func, "__name__", type(func).__name__)
        self.input_types = None if input_types is None else [_type_text(t, "input_type") for t in _listed(input_types)]
        self.result_type = _type_text(result_type, "result_type") if result_type is not None else None
        self.accumulator_type = _type_text(accumulator_type, "accumulator_type") if accumulator_type else None
        declared = func.is_deterministic() if isinstance(func, UserDefinedFunction) else True
        if deterministic is not None and isinstance(func, UserDefinedFunction) and deterministic != declared:
            raise ValueError(f"Inconsistent deterministic: {deterministic} and {declared}")
        self.deterministic = declared if deterministic is None else deterministic

    @property
    def func(self):
        """The user's callable or function object, as given."""
        return self._func

    @property
    def mergeable(self) -> bool:
        """Whether an aggregate function's accumulators merge (its class overrides ``merge``): partial
        accumulators can then be built inside Spark per bundle and key, and merged into keyed state."""
        return isinstance(self._func, AggregateFunction) and type(self._func).merge is not AggregateFunction.merge

    def named(self, name: str) -> UserDefinedFunctionWrapper:
        """The same function under the name SQL calls it by (its errors name it so)."""
        renamed = copy.copy(self)
        renamed.name = name
        return renamed

    def arity_problem(self, count: int) -> str | None:
        """Why the function cannot be called with ``count`` arguments (as its signature says), or None."""
        target = self._func
        if isinstance(target, UserDefinedFunction):
            method = {"aggregate": "accumulate"}.get(self.kind, "eval")
            target, count = getattr(target, method), count + (self.kind == "aggregate")
        try:
            inspect.signature(target).bind(*range(count))
        except TypeError as err:
            return str(err)
        except ValueError:  # no signature to read (a builtin): the call will tell
            return None
        return None

    def opened(self, context: FunctionContext | None = None):
        """The function object to call, ``open`` called on it once (``close`` it when done): a
        UserDefinedFunction as given, a plain callable wrapped as one of the right kind."""
        # by what it has, not by class: in a Spark worker these classes may travel by value while the user's class
        # came from an imported runtime.udf (a shipped module), two copies of one class
        is_object = any(callable(getattr(self._func, m, None)) for m in ("eval", "accumulate"))
        target = self._func if is_object else _Delegating(self._func)
        target.open(context or FunctionContext())
        return target

    def __repr__(self) -> str:
        return f"<{self.kind} function {self.name} ({self.func_type}) -> {self.result_type}>"


class _Delegating(UserDefinedFunction):
    """A plain callable seen as a function object: ``eval`` calls it (a scalar or table function row by row,
    a pandas function with Series)."""
    def __init__(self, func: Callable):
        self.func = func

    def eval(self, *args):
        return self.func(*args)


def _listed(types) -> list:
    if hasattr(types, "field_types"):
        return list(types.field_types())
    if isinstance(types, (str, type(None))) or not isinstance(types, (list, tuple)):
        return [types]
    return list(types)


def _type_text(data_type: Any, what: str) -> str:
    """A declared type as Flink SQL text; TypeError for anything else (as PyFlink raises)."""
    if isinstance(data_type, str) and data_type.strip():
        return data_type.strip()
    if isinstance(data_type, DataType):
        return str(data_type)
    raise TypeError(f"Invalid {what}: {what} should be DataType or str but is {data_type!r}")


def _table_result_type(result_types) -> str:
    """A table function's ROW type: a ROW given as such, else fields f0, f1, ... of the listed types."""
    if hasattr(result_types, "field_types"):
        return str(result_types)
    if isinstance(result_types, str) and result_types.strip().upper().startswith("ROW"):
        return result_types.strip()
    types = [_type_text(t, "result_type") for t in _listed(result_types)]
    return "ROW<" + ", ".join(f"f{i} {t}" for i, t in enumerate(types)) + ">"


def _decorator(make: Callable, f, **options):
    if f is None:
        return functools.partial(make, **options)
    return make(f, **options)


def _make_udf(f, input_types=None, result_type=None, deterministic=None, name=None, func_type="general"):
    if result_type is None:
        raise TypeError("Invalid result_type: a scalar function needs result_type (a DataType or str)")
    return UserDefinedFunctionWrapper(f, "scalar", result_type, input_types, func_type, deterministic, name)


def _make_udtf(f, input_types=None, result_types=None, deterministic=None, name=None):
    if result_types is None:
        raise TypeError("Invalid result_types: a table function needs result_types (DataTypes or str)")
    return UserDefinedFunctionWrapper(f, "table", _table_result_type(result_types), input_types, "general",
                                      deterministic, name)


def _make_udaf(f, input_types=None, result_type=None, accumulator_type=None, deterministic=None, name=None,
               func_type="general"):
    if func_type == "general" and not isinstance(f, AggregateFunction):
        raise TypeError(f"Invalid function: a general udaf takes an AggregateFunction instance, got {type(f)}"
                        " (a function of pandas Series needs func_type='pandas')")
    if func_type == "pandas" and isinstance(f, UserDefinedFunction):
        raise TypeError("Invalid function: a pandas udaf is a function of pandas Series returning one value, "
                        f"not a {type(f).__name__} instance")
    if result_type is None and isinstance(f, AggregateFunction):
        result_type = f.get_result_type()
    if accumulator_type is None and func_type == "general":
        try:
            accumulator_type = f.get_accumulator_type()
        except RuntimeError:
            accumulator_type = None  # accumulators travel pickled: a declared type is not needed here
    if result_type is None:
        raise TypeError("Invalid result_type: an aggregate function needs result_type (a DataType or str)")
    return UserDefinedFunctionWrapper(f, "aggregate", result_type, input_types, func_type, deterministic, name,
                                      accumulator_type)


def udf(f=None, input_types=None, result_type=None, deterministic=None, name=None, func_type="general"):
    """A scalar function: row at a time (``general``) or over pandas Series (``pandas``), as PyFlink's udf."""
    if func_type not in FUNC_TYPES:
        raise ValueError(f"The func_type must be one of 'general, pandas', got {func_type}.")
    return _decorator(_make_udf, f, input_types=input_types, result_type=result_type, deterministic=deterministic,
                      name=name, func_type=func_type)


def udtf(f=None, input_types=None, result_types=None, deterministic=None, name=None):
    """A table function (rows out per row in), for LATERAL TABLE(...), as PyFlink's udtf."""
    return _decorator(_make_udtf, f, input_types=input_types, result_types=result_types, deterministic=deterministic,
                      name=name)


def udaf(f=None, input_types=None, result_type=None, accumulator_type=None, deterministic=None, name=None,
         func_type="general"):
    """An aggregate function: an AggregateFunction (``general``) or a function of pandas Series returning one
    value (``pandas``), as PyFlink's udaf."""
    if func_type not in FUNC_TYPES:
        raise ValueError(f"The func_type must be one of 'general, pandas', got {func_type}.")
    return _decorator(_make_udaf, f, input_types=input_types, result_type=result_type,
                      accumulator_type=accumulator_type, deterministic=deterministic, name=name, func_type=func_type)
