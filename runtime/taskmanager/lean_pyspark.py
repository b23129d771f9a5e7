"""Keeping pandas out of a TaskManager process: the calls into PySpark and pyarrow that would load it, made without it.

A TaskManager needs pandas for nothing of its own (its window state is Arrow; only jobs with pandas
functions use it), and pandas costs about 40 MB resident per TaskManager process. Yet PySpark and pyarrow
load it:

- ``createDataFrame`` imports pandas on every call, whatever it is given (to test whether its input is a
  pandas DataFrame), and asks the JVM for eight settings. On a classic session (local, or a Spark cluster's
  driver) :func:`frame_from_arrow` sends a table to the JVM the way ``createDataFrame`` does, through the
  session's ``_create_from_arrow_table``, with the session's Arrow settings read once; a Spark Connect
  session, or a PySpark whose method has another shape than the one known here, takes the public route.
- pyarrow and PySpark both import pandas merely to learn whether a value is a pandas object (pyarrow on
  its first conversion of any Python value, PySpark's ``functions.lit`` and py4j converters through
  ``pyspark.testing.utils``). :func:`settle_without_pandas` lets them learn at start that it is not loaded.
"""
from __future__ import annotations

import importlib.abc
import inspect
import sys
import weakref

import pyarrow as pa

from runtime.config import Configuration

_DIRECT_PARAMETERS = ("table", "schema", "timezone", "prefer_timestamp_ntz", "prefers_large_var_types",
                      "arrow_batch_size")
_routes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> (create, settings) or None


def frame_from_arrow(session, table: pa.Table):
    """A DataFrame of ``table``'s rows, columns and Arrow types, on ``session``."""
    route = _direct_route(session)
    if route is None:
        return session.createDataFrame(table)
    create, settings = route
    return create(table, table.schema.names, *settings)


def schema_from_ddl(session, ddl: str):
    """A StructType from a DDL string like 'user INT, amount DOUBLE' (Spark's own parser); a single type
    ('INT') is one column named ``value``, as ``createDataFrame`` has it. Raises Spark's parse error."""
    if _direct_route(session) is None:
        return session.createDataFrame([], ddl).schema
    from pyspark.sql.types import DataType, StructType

    parsed = DataType.fromDDL(ddl)
    return parsed if isinstance(parsed, StructType) else StructType().add("value", parsed)


def _direct_route(session):
    """``(create, settings)`` for a classic session whose PySpark has the method as known here, else None."""
    try:
        return _routes[session]
    except KeyError:
        pass
    create = getattr(session, "_create_from_arrow_table", None)
    route = None
    if (create is not None and ".connect." not in type(session).__module__
            and tuple(inspect.signature(create).parameters) == _DIRECT_PARAMETERS):
        conf = session.conf
        route = (create, (conf.get("spark.sql.session.timeZone"),
                          conf.get("spark.sql.timestampType").upper() == "TIMESTAMP_NTZ",
                          conf.get("spark.sql.execution.arrow.useLargeVarTypes").lower() == "true",
                          int(conf.get("spark.sql.execution.arrow.maxRecordsPerBatch"))))
    _routes[session] = route
    return route




def settle_without_pandas(conf: Configuration) -> None:
    """Let pyarrow and PySpark settle, with pandas made unimportable for a moment, that it is not loaded.

    Each asks once whether pandas is there before it treats a value as a pandas object, and imports it to
    answer: pyarrow on its first conversion of a Python value (``pa.array``, ``pa.scalar``, a compute
    function given a number), PySpark's ``functions.lit`` and py4j converters through
    ``pyspark.testing.utils``, which imports pandas to learn which of its tests could run. Settled here,
    pyarrow imports pandas only when a conversion to or from pandas needs it (``to_pandas``,
    ``from_pandas``: a job's pandas functions), as if pandas had been installed later; PySpark's testing
    module reports ``have_pandas`` False, which only PySpark's doctests read, and ``should_test_connect`` False,
    which PySpark's Spark Connect client reads (it needs pandas anyway): so nothing is done for a TaskManager
    with a Connect session. Call first thing in a process, before it starts threads: an import of pandas on
    another thread meanwhile would fail."""
    if "pandas" in sys.modules or conf.get("spark.remote"):
        return
    blocker = _PandasBlocker()
    sys.meta_path.insert(0, blocker)
    try:
        pa.array([0])  # pyarrow's one look for pandas
        import pyspark.testing.utils  # noqa: F401 - imported for its answers, cached
    finally:
        sys.meta_path.remove(blocker)


class _PandasBlocker(importlib.abc.MetaPathFinder):
    """An import finder that refuses pandas (None in sys.modules would do for Python's imports, not for
    pyarrow's compiled ones, which take the None for the module)."""
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "pandas":
            raise ModuleNotFoundError(f"{name} is kept unloaded for a moment", name=name)
        return None
